/**
 * The h2c listener seen by an independent gRPC stack: @grpc/grpc-js with the .proto files
 * loaded by @grpc/proto-loader (no connect-es, no generated code on the client side), the
 * standard grpc.health.v1.Health, and the REST code read from `grpc-status-details-bin`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ErrorDetailSchema } from "../../gen/intake/v1/errors_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import { canonicalGrpcMessage } from "../../src/rpc/grpc-server.ts";
import { sign } from "../support/signing.ts";
import { failure, type Served, serveWorld } from "./support.ts";

const ROOT = join(import.meta.dir, "../..");
const PROTO_FILES = [
  "intake/v1/api_tokens.proto",
  "intake/v1/services.proto",
  "intake/v1/tenant.proto",
  "intake/v1/ingest.proto",
  "intake/v1/health.proto",
  "grpc/health/v1/health.proto",
];

type Json = Record<string, unknown>;
type Method = protoLoader.MethodDefinition<Json, Json>;

let served: Served;
let definition: protoLoader.PackageDefinition;
let client: grpc.Client;

beforeAll(async () => {
  served = await serveWorld();
  definition = await protoLoader.load(PROTO_FILES, {
    includeDirs: [join(ROOT, "proto"), join(ROOT, "proto-vendor")],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
  });
  client = new grpc.Client(`127.0.0.1:${served.grpc.port}`, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await served.close();
});

function method(service: string, name: string): Method {
  const found = (definition[service] as protoLoader.ServiceDefinition | undefined)?.[name];
  if (!found) throw new Error(`${service}/${name} is not in the loaded .proto files`);
  return found as Method;
}

function metadata(token?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token) md.set("authorization", `Bearer ${token}`);
  return md;
}

function call(service: string, name: string, request: Json, token?: string): Promise<Json> {
  const m = method(service, name);
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(m.path, m.requestSerialize, m.responseDeserialize, request, metadata(token), (err, res) =>
      err || !res ? reject(err) : resolve(res),
    );
  });
}

/** google.rpc.Status → the intake.v1.ErrorDetail among its details, decoded by hand from the wire. */
function restCodeOf(error: grpc.ServiceError): string | undefined {
  const [bin] = error.metadata.get("grpc-status-details-bin");
  if (!(bin instanceof Uint8Array)) return undefined;
  const status = new BinaryReader(bin);
  while (status.pos < status.len) {
    const [field, wireType] = status.tag();
    if (field !== 3) {
      status.skip(wireType);
      continue;
    }
    const any = new BinaryReader(status.bytes());
    let typeUrl = "";
    let value: Uint8Array = new Uint8Array();
    while (any.pos < any.len) {
      const [f, w] = any.tag();
      if (f === 1) typeUrl = any.string();
      else if (f === 2) value = any.bytes();
      else any.skip(w);
    }
    if (typeUrl.endsWith("/intake.v1.ErrorDetail")) return fromBinary(ErrorDetailSchema, value).code;
  }
  return undefined;
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: grpc.status; restCode?: string; details?: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as grpc.ServiceError;
    return { code: e.code, restCode: restCodeOf(e), details: e.details };
  }
  throw new Error("expected the call to fail");
}

test("grpc.health.v1.Health/Check answers SERVING for the server and for each intake.v1 service, without a token", async () => {
  for (const service of ["", "intake.v1.ApiTokenService", "intake.v1.IngestService"]) {
    expect(await call("grpc.health.v1.Health", "Check", { service })).toEqual({ status: "SERVING" });
  }
});

test("grpc.health.v1.Health/Check is NOT_FOUND for an unknown service", async () => {
  expect((await rejection(call("grpc.health.v1.Health", "Check", { service: "nope.v1.Nope" }))).code).toBe(
    grpc.status.NOT_FOUND,
  );
});

test("grpc.health.v1.Health/Watch sends SERVING at once and stays open until cancelled", async () => {
  const m = method("grpc.health.v1.Health", "Watch");
  const stream = client.makeServerStreamRequest(m.path, m.requestSerialize, m.responseDeserialize, { service: "" });
  const first = await new Promise<Json>((resolve, reject) => {
    stream.once("data", resolve);
    stream.once("error", reject);
  });
  expect(first).toEqual({ status: "SERVING" });
  const ended = new Promise<grpc.status>((resolve) => stream.on("error", (e: grpc.ServiceError) => resolve(e.code)));
  stream.cancel();
  expect(await ended).toBe(grpc.status.CANCELLED);
});

test("intake.v1 calls work from grpc-js with the bearer token in `authorization` metadata", async () => {
  const token = served.world.ownerToken;
  const health = await call("intake.v1.HealthService", "GetHealth", {});
  expect(health).toEqual({ status: "ok", version: served.world.app.config.version });

  const tenant = await call("intake.v1.TenantService", "GetTenant", {}, token);
  expect((tenant.tenant as Json).id).toBe(served.world.tenantId);

  const created = await call("intake.v1.ServiceRegistryService", "CreateService", { service_name: "grpc-js" }, token);
  const service = created.service as Json;
  expect(service.service_name).toBe("grpc-js");
  expect(created.signing_secret).toMatch(/^whsec_/);

  const minted = await call("intake.v1.ApiTokenService", "CreateApiToken", { name: "from grpc-js" }, token);
  expect(minted.token).toMatch(/^service_live_/);
  expect((minted.api_token as Json).scope).toBe("read_only");

  const payload = Buffer.from('{"from":"grpc-js"}');
  const signature = sign(created.signing_secret as string, payload, served.world.clock.now());
  const accepted = await call("intake.v1.IngestService", "Ingest", { service_id: service.id, signature, payload });
  expect(accepted.id).toMatch(/^evt_/);
  const events = await call("intake.v1.IngestService", "ListEvents", { service_id: service.id }, token);
  expect(Buffer.from((events.data as Json[])[0]?.payload as Uint8Array).toString()).toBe('{"from":"grpc-js"}');
});

test("UNAUTHENTICATED missing_credentials and invalid_credentials, read from grpc-status-details-bin", async () => {
  expect(await rejection(call("intake.v1.TenantService", "GetTenant", {}))).toMatchObject({
    code: grpc.status.UNAUTHENTICATED,
    restCode: "missing_credentials",
  });
  expect(await rejection(call("intake.v1.TenantService", "GetTenant", {}, "service_live_garbage"))).toMatchObject({
    code: grpc.status.UNAUTHENTICATED,
    restCode: "invalid_credentials",
  });
});

test("an error message reads the same in grpc-js, in connect-node's gRPC transport and over REST (no %3A)", async () => {
  const fromGrpcJs = (await rejection(call("intake.v1.TenantService", "GetTenant", {}))).details;
  const connect = createClient(TenantService, createGrpcTransport({ baseUrl: served.grpcUrl }));
  const fromConnect = (await failure(connect.getTenant({}))).message;
  const fromRest = (await served.world.request("GET", "/v1/tenant", { token: null })).body.error.message;
  expect(fromRest).toContain("Authorization: Bearer <token>");
  expect(fromGrpcJs).toBe(fromRest);
  expect(fromConnect).toBe(fromRest);
});

test("grpc-message carries the gRPC spec's percent-encoding: only non-printable bytes and % are escaped", () => {
  const text = "Send an Authorization: Bearer <token> header; 100% sûr, 🙂.";
  const wire = canonicalGrpcMessage(encodeURIComponent(text));
  expect(wire).toBe("Send an Authorization: Bearer <token> header; 100%25 s%C3%BBr, %F0%9F%99%82.");
  // What grpc-js does (decodeURI) and what connect-es does (decodeURIComponent) agree on it.
  expect(decodeURI(wire)).toBe(text);
  expect(decodeURIComponent(wire)).toBe(text);
});

test("PERMISSION_DENIED token_scope_insufficient vs owner_required", async () => {
  const readOnly = await served.world.mint({ scope: "read_only", role: "owner" });
  expect(
    await rejection(call("intake.v1.ServiceRegistryService", "CreateService", { service_name: "x" }, readOnly.token)),
  ).toMatchObject({ code: grpc.status.PERMISSION_DENIED, restCode: "token_scope_insufficient" });

  const admin = await served.world.mint({ scope: "read_write", role: "admin" });
  expect(await rejection(call("intake.v1.TenantService", "UpdateTenant", { name: "Mine" }, admin.token))).toMatchObject(
    {
      code: grpc.status.PERMISSION_DENIED,
      restCode: "owner_required",
    },
  );
});

test("NOT_FOUND not_found for another tenant's service", async () => {
  const other = await served.world.otherTenant();
  const theirs = await call("intake.v1.ServiceRegistryService", "CreateService", { service_name: "t" }, other.token);
  const id = (theirs.service as Json).id;
  expect(
    await rejection(call("intake.v1.ServiceRegistryService", "GetService", { id }, served.world.ownerToken)),
  ).toMatchObject({ code: grpc.status.NOT_FOUND, restCode: "not_found" });
});
