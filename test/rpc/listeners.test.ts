/**
 * What the two listeners promise beyond the methods: the main port's HTTP behaviour for RPC
 * paths (X-Request-Id, 405, no plain gRPC, strict JSON, admission before the body), and the
 * h2c listener's drain and its start/stop from `serve`.
 */
import { afterEach, expect, test } from "bun:test";
import { createServer } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import {
  HealthCheckResponse_ServingStatus as ServingStatus,
  Health as StandardHealth,
} from "../../gen/grpc/health/v1/health_pb.ts";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { HealthService } from "../../gen/intake/v1/health_pb.ts";
import { parseConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { POLICY } from "../../src/rpc/policy.ts";
import { serve } from "../../src/serve.ts";
import { bearer, failure, type Served, serveWorld, transportFor } from "./support.ts";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** A Connect error body, or the REST error shape for routes the gateway answers itself. */
interface Answer {
  code?: string;
  message?: string;
  error?: { code: string };
  service?: { isMonitored: boolean; serviceName: string };
}

async function answer(res: Response): Promise<Answer> {
  return (await res.json()) as Answer;
}

function connectJson(s: Served, path: string, body: string, token?: string | null): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token ?? s.world.ownerToken}`;
  return fetch(`${s.baseUrl}${path}`, { method: "POST", headers, body });
}

test("200 Connect JSON call on the main port carries X-Request-Id and every implicit field", async () => {
  served = await serveWorld();
  const svc = await served.world.createService("quiet");
  await served.world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
  const res = await connectJson(served, "/intake.v1.ServiceRegistryService/GetService", JSON.stringify({ id: svc.id }));
  expect(res.status).toBe(200);
  expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  const body = await answer(res);
  // proto3 would omit a false bool; the REST form always has it, so the Connect JSON form does too.
  expect(body.service?.isMonitored).toBe(false);
  expect(body.service?.serviceName).toBe("quiet");
});

test("error responses of RPC paths carry X-Request-Id too (Connect and gRPC-Web)", async () => {
  served = await serveWorld();
  const connect = await connectJson(served, "/intake.v1.TenantService/GetTenant", "{}", null);
  expect(connect.status).toBe(401);
  expect(connect.headers.get("x-request-id")).toMatch(/^req_/);
  expect((await answer(connect)).code).toBe("unauthenticated");
  const grpcWeb = await fetch(`${served.baseUrl}/intake.v1.TenantService/GetTenant`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto" },
    body: new Uint8Array([0, 0, 0, 0, 0]),
  });
  expect(grpcWeb.status).toBe(200);
  expect(grpcWeb.headers.get("x-request-id")).toMatch(/^req_/);
});

test("400 invalid_argument for an unknown field in Connect JSON (strict, like REST bodies)", async () => {
  served = await serveWorld();
  const res = await connectJson(
    served,
    "/intake.v1.ApiTokenService/CreateApiToken",
    JSON.stringify({ name: "x", nme: 1 }),
  );
  expect(res.status).toBe(400);
  const body = await answer(res);
  expect(body.code).toBe("invalid_argument");
  expect(body.message).toContain("nme");
});

test("401 unauthenticated before the message is read: no token and a garbage body", async () => {
  served = await serveWorld();
  const res = await connectJson(served, "/intake.v1.ApiTokenService/CreateApiToken", "{not json", null);
  expect(res.status).toBe(401);
  expect((await answer(res)).code).toBe("unauthenticated");
});

test("405 method_not_allowed with Allow: POST for GET on an RPC path; 404 for an unknown method", async () => {
  served = await serveWorld();
  const get = await fetch(`${served.baseUrl}/intake.v1.TenantService/GetTenant`);
  expect(get.status).toBe(405);
  expect(get.headers.get("allow")).toBe("POST");
  const unknown = await connectJson(served, "/intake.v1.TenantService/DropTenant", "{}");
  expect(unknown.status).toBe(404);
  expect((await answer(unknown)).error?.code).toBe("not_found");
});

test("415 for plain gRPC on the main port: it is served only on the h2c listener", async () => {
  served = await serveWorld();
  const res = await fetch(`${served.baseUrl}/intake.v1.HealthService/GetHealth`, {
    method: "POST",
    headers: { "content-type": "application/grpc" },
    body: new Uint8Array([0, 0, 0, 0, 0]),
  });
  expect(res.status).toBe(415);
});

test("the gRPC port speaks Connect (JSON over h2c) too", async () => {
  served = await serveWorld();
  const transport = createConnectTransport({ baseUrl: served.grpcUrl, httpVersion: "2" });
  const health = createClient(HealthService, transport);
  expect((await health.getHealth({})).status).toBe("ok");
});

test("resource_exhausted for a management message over 64 KiB, on both ports", async () => {
  served = await serveWorld();
  for (const name of ["connect-json", "grpc"] as const) {
    const tokens = createClient(ApiTokenService, transportFor(served, name));
    const big = await failure(tokens.createApiToken({ name: "x".repeat(70_000) }, bearer(served.world.ownerToken)));
    expect(big.code).toBe("resource_exhausted");
  }
});

test("every method the routers serve has an access policy (the gate fails closed otherwise)", async () => {
  served = await serveWorld();
  const paths = served.world.app.gateway.elysia.routes
    .map((r) => r.path)
    .filter((p) => p.startsWith("/intake.v1."))
    .map((p) => p.slice(1));
  // Both ways: every served method has a policy, and every intake.v1 policy names a served method.
  const policies = Object.keys(POLICY).filter((m) => m.startsWith("intake.v1."));
  expect(paths.sort()).toEqual(policies.sort());
});

test("h2c drain: Watch sees NOT_SERVING and ends, then the port refuses new calls", async () => {
  served = await serveWorld();
  const health = createClient(StandardHealth, createGrpcTransport({ baseUrl: served.grpcUrl }));
  const seen: ServingStatus[] = [];
  const watching = (async () => {
    for await (const update of health.watch({})) seen.push(update.status);
  })();
  while (seen.length === 0) await Bun.sleep(5);
  await served.grpc.close();
  await watching;
  expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
  const after = createClient(HealthService, createGrpcTransport({ baseUrl: served.grpcUrl }));
  expect((await failure(after.getHealth({}))).code).toBe("unavailable");
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** `intake serve` in this process on `config` (fixed test keys); its log lines go to `logs`. */
function serveOn(config: ReturnType<typeof parseConfig>, logs: string[] = []) {
  return serve(
    config,
    { tokenPepper: "p".repeat(32), secretsKey: new Uint8Array(32) },
    createLogger((l) => logs.push(l)),
  );
}

test("serve starts the gRPC listener on INTAKE_GRPC_PORT, exposes its port, and stops it", async () => {
  const grpcPort = await freePort();
  const config = parseConfig({ DATABASE_URL: "sqlite::memory:", PORT: "0", INTAKE_GRPC_PORT: String(grpcPort) });
  const logs: string[] = [];
  const running = await serveOn(config, logs);
  try {
    expect(running.grpc?.port).toBe(grpcPort);
    const health = createClient(StandardHealth, createGrpcTransport({ baseUrl: `http://127.0.0.1:${grpcPort}` }));
    expect((await health.check({})).status).toBe(ServingStatus.SERVING);
    expect(logs.some((l) => l.includes(`"grpc_port":${grpcPort}`))).toBe(true);
  } finally {
    await running.stop();
  }
  const after = createClient(HealthService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${grpcPort}` }));
  expect((await failure(after.getHealth({}))).code).toBe("unavailable");
});

test("serve with INTAKE_GRPC_PORT=0 starts no gRPC listener", async () => {
  const config = parseConfig({ DATABASE_URL: "sqlite::memory:", PORT: "0", INTAKE_GRPC_PORT: "0" });
  const running = await serveOn(config);
  try {
    expect(running.grpc).toBeNull();
  } finally {
    await running.stop();
  }
});

test("serve answers GET /v1/health natively with the exact body and a fresh X-Request-Id; POST /v1/health is 405 with Allow: GET", async () => {
  const config = parseConfig({
    DATABASE_URL: "sqlite::memory:",
    PORT: "0",
    INTAKE_GRPC_PORT: "0",
    INTAKE_BUILD: "abc123",
  });
  const running = await serveOn(config);
  try {
    const url = `http://127.0.0.1:${running.server.port}/v1/health`;
    const first = await fetch(url);
    const second = await fetch(url);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await first.json()).toEqual({ status: "ok", version: `${config.version.split("+")[0]}+abc123` });
    expect(first.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    const post = await fetch(url, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
  } finally {
    await running.stop();
  }
});

test("an error escaping every handler is a 500 internal_error in the contract's shape with X-Request-Id, its message only in the log", async () => {
  const config = parseConfig({ DATABASE_URL: "sqlite::memory:", PORT: "0", INTAKE_GRPC_PORT: "0" });
  const logs: string[] = [];
  const running = await serveOn(config, logs);
  try {
    // A handler bug stands in here; reload keeps the listener's own options (development, error).
    running.server.reload({
      fetch: () => {
        throw new Error("internal detail /srv/intake/secret-path");
      },
    });
    const res = await fetch(`http://127.0.0.1:${running.server.port}/v1/audit_events`);
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const requestId = res.headers.get("x-request-id");
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const text = await res.text();
    expect(text).not.toContain("internal detail");
    expect(JSON.parse(text)).toEqual({
      error: { code: "internal_error", message: "Something went wrong on our side.", request_id: requestId },
    });
    expect(logs.some((l) => l.includes("internal detail") && l.includes(String(requestId)))).toBe(true);
  } finally {
    await running.stop();
  }
});
