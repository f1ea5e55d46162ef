/**
 * The listeners the gateway does not see report like it does (docs/operations.md): the native
 * health route of the main port, and the h2c gRPC port with the RPC path as its route.
 */
import { afterEach, expect, test } from "bun:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import type { GrpcListener } from "../../src/rpc/grpc-server.ts";
import { createWorld, type World } from "../support/harness.ts";
import { bearer, failure } from "./support.ts";

let world: World | undefined;
let grpc: GrpcListener | undefined;
let http: ReturnType<typeof Bun.serve> | undefined;
afterEach(async () => {
  await Promise.all([http?.stop(true), grpc?.close()]);
  await world?.close();
  world = http = grpc = undefined;
});

// biome-ignore lint/suspicious/noExplicitAny: log lines are read field by field
function accessLines(w: World): any[] {
  return w.logs.map((l) => JSON.parse(l)).filter((e) => e.msg === "access");
}

test("the native health route and gRPC calls are counted under their route and logged", async () => {
  world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
  const w = world;
  const svc = await w.createService();
  http = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: w.app.nativeRoutes, fetch: w.app.fetch });
  grpc = await w.app.listenGrpc(0);
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${grpc.port}` });

  const health = await fetch(`http://127.0.0.1:${http.port}/v1/health`);
  expect(health.status).toBe(200);
  const healthBody = await health.text();
  let grpcRequestId: string | null = null;
  await createClient(TenantService, transport).getTenant(
    {},
    { ...bearer(w.ownerToken), onHeader: (headers) => (grpcRequestId = headers.get("x-request-id")) },
  );
  expect(grpcRequestId).toMatch(/^req_[0-9a-f]{32}$/);
  const refused = await failure(
    createClient(IngestService, transport).ingest({
      serviceId: svc.id,
      signature: "v1=00",
      payload: new Uint8Array(2),
    }),
  );
  expect(refused.restCode).toBe("invalid_signature");
  expect(refused.message).not.toContain("malformed_signature_header");

  // The gRPC access line is written when the stream closes: poll for it.
  for (let i = 0; i < 100 && accessLines(w).filter((l) => l.route.startsWith("/intake.v1.")).length < 2; i++) {
    await Bun.sleep(20);
  }
  const lines = accessLines(w);
  expect(lines.find((l) => l.route === "/v1/health")).toMatchObject({
    method: "GET",
    status: 200,
    request_id: health.headers.get("x-request-id"),
    bytes_out: Buffer.byteLength(healthBody),
  });
  expect(lines.find((l) => l.route === "/intake.v1.TenantService/GetTenant")).toMatchObject({
    method: "POST",
    status: 200,
    token_id: w.ownerTokenId,
    // The gRPC port's answers carry x-request-id too; the access line names the same one.
    request_id: grpcRequestId as unknown as string,
  });
  expect(lines.find((l) => l.route === "/intake.v1.IngestService/Ingest")).toMatchObject({
    service_id: svc.id,
    reason: "malformed_signature_header",
  });

  const metrics = await (await fetch(`http://127.0.0.1:${http.port}/metrics`)).text();
  expect(metrics).toContain('intake_http_requests_total{route="/v1/health",method="GET",status="200"} 1');
  expect(metrics).toContain(
    'intake_http_requests_total{route="/intake.v1.TenantService/GetTenant",method="POST",status="200"} 1',
  );
  expect(metrics).toContain('intake_ingest_signature_failures_total{reason="malformed_signature_header"} 1');
});
