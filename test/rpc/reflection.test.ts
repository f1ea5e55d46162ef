/**
 * The h2c listener seen by a caller without the .proto files: server reflection (v1 and
 * v1alpha) read by @grpc/grpc-js with only the reflection .proto loaded, and an unknown
 * service or method answered the gRPC way (status 12 in HTTP 200's trailers), not a bare 404.
 * buf curl against the same listener is in test/e2e/reflection.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, constants } from "node:http2";
import { join } from "node:path";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { type Served, serveWorld } from "./support.ts";

const ROOT = join(import.meta.dir, "../..");
const VERSIONS = ["v1", "v1alpha"] as const;

type Json = Record<string, unknown>;
type Method = protoLoader.MethodDefinition<Json, Json>;

let served: Served;
let client: grpc.Client;
const reflectionInfo = new Map<string, Method>();

beforeAll(async () => {
  served = await serveWorld();
  for (const version of VERSIONS) {
    const definition = await protoLoader.load(`grpc/reflection/${version}/reflection.proto`, {
      includeDirs: [join(ROOT, "proto-vendor")],
      keepCase: true,
      oneofs: true,
    });
    const service = definition[`grpc.reflection.${version}.ServerReflection`] as protoLoader.ServiceDefinition;
    reflectionInfo.set(version, service.ServerReflectionInfo as Method);
  }
  client = new grpc.Client(`127.0.0.1:${served.grpc.port}`, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await served.close();
});

/** One reflection stream: sends each request, collects one answer per request, then ends. */
function reflect(version: (typeof VERSIONS)[number], requests: Json[]): Promise<Json[]> {
  const m = reflectionInfo.get(version) as Method;
  const stream = client.makeBidiStreamRequest(m.path, m.requestSerialize, m.responseDeserialize);
  return new Promise((resolve, reject) => {
    const answers: Json[] = [];
    stream.on("data", (answer: Json) => {
      answers.push(answer);
      if (answers.length === requests.length) stream.end();
    });
    stream.on("error", reject);
    stream.on("end", () => resolve(answers));
    for (const request of requests) stream.write(request);
  });
}

/**
 * The FileDescriptorProtos of a file_descriptor_response, the asked-for file first (as grpc-go
 * sends them), as a registry: building it fails when an import is missing from the answer.
 */
function registryOf(answer: Json | undefined) {
  const response = answer?.file_descriptor_response as { file_descriptor_proto: Uint8Array[] } | undefined;
  if (!response) throw new Error(`not a file_descriptor_response: ${JSON.stringify(answer)}`);
  const files = response.file_descriptor_proto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
  const [first] = files;
  if (!first) throw new Error("an empty file_descriptor_response");
  const registry = createFileRegistry(first, (name) => files.find((f) => f.name === name));
  return { names: files.map((f) => f.name), registry };
}

for (const version of VERSIONS) {
  test(`${version} list_services names every served service: intake.v1, grpc.health.v1.Health and both reflection services`, async () => {
    const [answer] = await reflect(version, [{ list_services: "" }]);
    const names = (answer?.list_services_response as { service: { name: string }[] } | undefined)?.service.map(
      (s) => s.name,
    );
    expect(names?.sort()).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "intake.v1.ApiTokenService",
      "intake.v1.AuditService",
      "intake.v1.EventFeedService",
      "intake.v1.HealthService",
      "intake.v1.IncidentService",
      "intake.v1.IngestService",
      "intake.v1.ServiceRegistryService",
      "intake.v1.SetupService",
      "intake.v1.TenantService",
    ]);
  });

  test(`${version} file_containing_symbol answers the service's file with every import, enough to build its methods`, async () => {
    const answers = await reflect(version, [
      { file_containing_symbol: "intake.v1.TenantService" },
      { file_containing_symbol: "intake.v1.TenantService.GetTenant" },
    ]);
    expect(answers.length).toBe(2);
    for (const answer of answers) {
      const { names, registry } = registryOf(answer);
      expect(names[0]).toBe("intake/v1/tenant.proto");
      expect(names).toContain("google/protobuf/timestamp.proto");
      const service = registry.getService("intake.v1.TenantService");
      expect(service?.methods.map((m) => m.name)).toEqual(["GetTenant", "UpdateTenant"]);
      expect(registry.getMessage("intake.v1.Tenant")?.field.createdAt?.message?.typeName).toBe(
        "google.protobuf.Timestamp",
      );
    }
  });

  test(`${version} file_by_filename and a nested type resolve; an unknown symbol is error_response NOT_FOUND and the stream goes on`, async () => {
    const [byName, unknown, nested] = await reflect(version, [
      { file_by_filename: "grpc/health/v1/health.proto" },
      { file_containing_symbol: "intake.v1.NoSuchThing" },
      { file_containing_symbol: "grpc.health.v1.HealthCheckResponse.ServingStatus" },
    ]);
    expect(registryOf(byName).registry.getService("grpc.health.v1.Health")?.methods.length).toBe(2);
    expect(unknown?.error_response).toEqual({ error_code: 5, error_message: "symbol intake.v1.NoSuchThing not found" });
    expect(registryOf(nested).names).toEqual(["grpc/health/v1/health.proto"]);
  });
}

/** A unary call of any path, with an empty message: the error it fails with. */
function callPath(path: string): Promise<grpc.ServiceError> {
  const same = (x: Buffer) => x;
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(path, same, same, Buffer.alloc(0), (err) =>
      err ? resolve(err) : reject(new Error("expected the call to fail")),
    );
  });
}

test("grpc-js: an unknown method of a served service is UNIMPLEMENTED with grpc-go's message, not HTTP 404", async () => {
  const err = await callPath("/intake.v1.TenantService/DeleteTenant");
  expect(err.code).toBe(grpc.status.UNIMPLEMENTED);
  // grpc-js reports a bare 404 as UNIMPLEMENTED too, but as "Received HTTP status code 404".
  expect(err.details).toBe("unknown method DeleteTenant for service intake.v1.TenantService");
});

test("grpc-js: an unknown service is UNIMPLEMENTED naming the service, not HTTP 404", async () => {
  const err = await callPath("/acme.v1.NoSuchService/Get");
  expect(err.code).toBe(grpc.status.UNIMPLEMENTED);
  expect(err.details).toBe("unknown service acme.v1.NoSuchService");
});

/** Raw HTTP/2: the status, headers, trailers and body of one POST with an empty message. */
function raw(path: string, contentType: string) {
  return new Promise<{ status: number; headers: Json; trailers: Json; body: Buffer }>((resolve, reject) => {
    const session = connect(served.grpcUrl);
    session.on("error", reject);
    const stream = session.request({
      [constants.HTTP2_HEADER_METHOD]: "POST",
      [constants.HTTP2_HEADER_PATH]: path,
      "content-type": contentType,
      te: "trailers",
    });
    let headers: Json = {};
    let trailers: Json = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      headers = h;
    });
    stream.on("trailers", (t) => {
      trailers = t;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      session.close();
      resolve({ status: Number(headers[":status"]), headers, trailers, body: Buffer.concat(chunks) });
    });
    stream.on("error", reject);
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  });
}

test("gRPC over h2c: an unknown method answers HTTP 200 with grpc-status 12 in the trailers", async () => {
  const res = await raw("/intake.v1.TenantService/Nope", "application/grpc+proto");
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toBe("application/grpc");
  expect(res.trailers["grpc-status"]).toBe("12");
  expect(res.trailers["grpc-message"]).toBe("unknown method Nope for service intake.v1.TenantService");
});

test("gRPC-Web on the h2c listener: an unknown service answers HTTP 200 with a grpc-status 12 trailer frame", async () => {
  const res = await raw("/acme.v1.Nope/Get", "application/grpc-web+proto");
  expect(res.status).toBe(200);
  expect(res.body[0]).toBe(0x80);
  expect(res.body.subarray(5).toString()).toBe("grpc-status: 12\r\ngrpc-message: unknown service acme.v1.Nope\r\n");
});

test("Connect on the h2c listener: an unknown procedure stays the Connect protocol's 404", async () => {
  const res = await raw("/intake.v1.TenantService/Nope", "application/json");
  expect(res.status).toBe(404);
});

test("gRPC over h2c: a path that names no service/method pair is UNIMPLEMENTED too, not HTTP 404", async () => {
  const res = await raw("/favicon.ico", "application/grpc");
  expect(res.status).toBe(200);
  expect(res.trailers["grpc-status"]).toBe("12");
  expect(res.trailers["grpc-message"]).toBe("malformed method name: /favicon.ico");
});
