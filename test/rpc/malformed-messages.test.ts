/**
 * A binary message that does not decode is the caller's error on every RPC route and every
 * transport (docs/rpc.md): 400 / `invalid_argument` with one fixed message, never a 5xx (an
 * unauthenticated caller could otherwise page the operator through the error-rate alert) and
 * never the decoder's own words. The hostile case of issue 32: 40,000 nested start-group tags.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { AuditService } from "../../gen/intake/v1/audit_pb.ts";
import { EventFeedService } from "../../gen/intake/v1/feed_pb.ts";
import { HealthService } from "../../gen/intake/v1/health_pb.ts";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { SetupService } from "../../gen/intake/v1/setup_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import { type Served, serveWorld } from "./support.ts";

const FIXED_MESSAGE = "parse binary: the message is not valid protobuf";

/**
 * Field 15 (no intake.v1 message has one, so it is skipped as unknown), wire type 3 (start
 * group), 40,000 times: nesting far past any decoder's depth.
 */
const NESTED_GROUPS = new Uint8Array(40_000).fill(0x7b);
/** A length-delimited field that claims more bytes than follow. */
const TRUNCATED = new Uint8Array([0x0a, 0x7f, 0x41]);

const METHODS = [
  ApiTokenService,
  ServiceRegistryService,
  TenantService,
  IngestService,
  HealthService,
  SetupService,
  EventFeedService,
  AuditService,
].flatMap((service) => service.methods.map((method) => ({ path: `/${service.typeName}/${method.name}`, method })));

function envelope(message: Uint8Array): Uint8Array {
  const framed = new Uint8Array(5 + message.length);
  new DataView(framed.buffer).setUint32(1, message.length);
  framed.set(message, 5);
  return framed;
}

/** The JSON of a Connect end-stream message (flag 0x02) at the end of a streaming body. */
function connectEndStream(body: Uint8Array): { error?: { code: string; message: string } } {
  let at = 0;
  while (at + 5 <= body.length) {
    const flags = body[at] as number;
    const length = new DataView(body.buffer, body.byteOffset + at + 1, 4).getUint32(0);
    if (flags & 0x02) return JSON.parse(new TextDecoder().decode(body.subarray(at + 5, at + 5 + length)));
    at += 5 + length;
  }
  throw new Error("no end-stream message");
}

/** The trailers of a gRPC-Web body: its frame with flag 0x80. */
function grpcWebTrailers(body: Uint8Array): Map<string, string> {
  let at = 0;
  while (at + 5 <= body.length) {
    const flags = body[at] as number;
    const length = new DataView(body.buffer, body.byteOffset + at + 1, 4).getUint32(0);
    if (flags & 0x80) {
      const text = new TextDecoder().decode(body.subarray(at + 5, at + 5 + length));
      return new Map(
        text
          .split("\r\n")
          .filter(Boolean)
          .map((line) => {
            const colon = line.indexOf(":");
            return [line.slice(0, colon).trim().toLowerCase(), decodeURIComponent(line.slice(colon + 1).trim())];
          }),
      );
    }
    at += 5 + length;
  }
  throw new Error("no trailer frame");
}

let served: Served;
let client: grpc.Client;
beforeAll(async () => {
  served = await serveWorld();
  client = new grpc.Client(served.grpcUrl.replace("http://", ""), grpc.credentials.createInsecure());
});
afterAll(async () => {
  client.close();
  await served.close();
});

const identity = (b: Buffer) => b;

for (const [label, bytes] of [
  ["40,000 nested start-group tags", NESTED_GROUPS],
  ["a truncated field", TRUNCATED],
] as const) {
  describe(label, () => {
    for (const { path, method } of METHODS) {
      const streaming = method.methodKind === "server_streaming";
      const authorization = () => ({ authorization: `Bearer ${served.world.ownerToken}` });

      test(`Connect: 400 invalid_argument with the fixed message on ${path}`, async () => {
        const res = await fetch(`${served.baseUrl}${path}`, {
          method: "POST",
          headers: {
            ...authorization(),
            "content-type": streaming ? "application/connect+proto" : "application/proto",
            "connect-protocol-version": "1",
          },
          body: streaming ? envelope(bytes) : bytes,
        });
        const body = new Uint8Array(await res.arrayBuffer());
        const error = streaming
          ? connectEndStream(body).error
          : (JSON.parse(new TextDecoder().decode(body)) as { code: string; message: string });
        expect(res.status).toBe(streaming ? 200 : 400);
        expect(error).toMatchObject({ code: "invalid_argument", message: FIXED_MESSAGE });
      });

      test(`gRPC-Web: grpc-status 3 with the fixed message on ${path}`, async () => {
        const res = await fetch(`${served.baseUrl}${path}`, {
          method: "POST",
          headers: { ...authorization(), "content-type": "application/grpc-web+proto" },
          body: envelope(bytes),
        });
        expect(res.status).toBe(200);
        const trailers = grpcWebTrailers(new Uint8Array(await res.arrayBuffer()));
        expect(trailers.get("grpc-status")).toBe("3");
        expect(trailers.get("grpc-message")).toBe(FIXED_MESSAGE);
      });

      test(`gRPC: status 3 with the fixed message on ${path}`, async () => {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", authorization().authorization);
        const status = await new Promise<grpc.StatusObject>((resolve) => {
          if (streaming) {
            const call = client.makeServerStreamRequest(path, identity, identity, Buffer.from(bytes), metadata);
            call.on("data", () => {});
            call.on("error", () => {});
            call.on("status", resolve);
          } else {
            const call = client.makeUnaryRequest(path, identity, identity, Buffer.from(bytes), metadata, () => {});
            call.on("status", resolve);
          }
        });
        expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
        expect(status.details).toBe(FIXED_MESSAGE);
      });
    }
  });
}

test("a malformed message raises no 5xx in the request counters", async () => {
  const metrics = await served.world.request("GET", "/metrics", { token: null });
  if (metrics.status === 200) expect(metrics.text).not.toMatch(/intake_http_requests_total\{[^}]*status="5\d\d"/);
});
