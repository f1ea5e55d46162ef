/**
 * SPEC §20's HTTP hygiene on the main port, in process (app.fetch): CORS by
 * INTAKE_CORS_ORIGINS, compression, `Cache-Control: no-store` on /v1, HEAD on every GET route
 * (the streams included), strict numbers in JSON bodies.
 */
import { afterEach, expect, test } from "bun:test";
import { brotliDecompressSync } from "node:zlib";
import { createWorld, type World } from "../support/harness.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const PAGE = "http://page.example:5173";

async function call(w: World, method: string, path: string, headers: Record<string, string> = {}) {
  return w.app.fetch(new Request(`http://intake.test${path}`, { method, headers }));
}

test("204 preflight from a listed origin on a bearer route: methods, request headers, Vary: Origin", async () => {
  world = await createWorld({ env: { INTAKE_CORS_ORIGINS: `https://other.example, ${PAGE}` } });
  const res = await call(world, "OPTIONS", "/v1/services", {
    origin: PAGE,
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization, content-type, idempotency-key",
  });
  expect(res.status).toBe(204);
  expect(res.headers.get("access-control-allow-origin")).toBe(PAGE);
  expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, HEAD");
  const allowed = res.headers.get("access-control-allow-headers") ?? "";
  for (const name of ["authorization", "content-type", "idempotency-key", "last-event-id", "connect-protocol-version"])
    expect(allowed).toContain(name);
  expect(res.headers.get("vary")).toContain("Origin");
  expect(res.headers.get("x-request-id")).toMatch(/^req_/);
});

test("a listed origin's simple request gets Access-Control-Allow-Origin and the exposed fields, never *", async () => {
  world = await createWorld({ env: { INTAKE_CORS_ORIGINS: PAGE } });
  const res = await world.request("GET", "/v1/tenant", { headers: { origin: PAGE } });
  expect(res.status).toBe(200);
  expect(res.headers.get("access-control-allow-origin")).toBe(PAGE);
  expect(res.headers.get("access-control-expose-headers")).toBe(
    "X-Request-Id, RateLimit, RateLimit-Policy, Retry-After",
  );
  expect(res.headers.get("vary")).toContain("Origin");
  const refused = await world.request("GET", "/v1/tenant", { token: null, headers: { origin: PAGE } });
  expect(refused.status).toBe(401);
  expect(refused.headers.get("access-control-allow-origin")).toBe(PAGE);
});

test("Connect on the main port answers a listed origin's preflight; the feed stream carries the CORS fields", async () => {
  world = await createWorld({ env: { INTAKE_CORS_ORIGINS: PAGE } });
  const pre = await call(world, "OPTIONS", "/intake.v1.TenantService/GetTenant", {
    origin: PAGE,
    "access-control-request-method": "POST",
  });
  expect(pre.status).toBe(204);
  expect(pre.headers.get("access-control-allow-origin")).toBe(PAGE);
  expect(pre.headers.get("access-control-allow-headers")).toContain("connect-timeout-ms");
  const stream = await world.request("GET", "/v1/feed/stream", { headersOnly: true, headers: { origin: PAGE } });
  expect(stream.status).toBe(200);
  expect(stream.headers.get("access-control-allow-origin")).toBe(PAGE);
});

test("no CORS fields for an unlisted origin, for ingest, or when INTAKE_CORS_ORIGINS is unset", async () => {
  world = await createWorld({ env: { INTAKE_CORS_ORIGINS: PAGE } });
  const svc = await world.createService();
  const preflights = [
    await call(world, "OPTIONS", "/v1/tenant", {
      origin: "http://evil.example",
      "access-control-request-method": "GET",
    }),
    await call(world, "OPTIONS", `/v1/ingest/${svc.id}`, { origin: PAGE, "access-control-request-method": "POST" }),
    await call(world, "OPTIONS", "/intake.v1.IngestService/Ingest", {
      origin: PAGE,
      "access-control-request-method": "POST",
    }),
  ];
  for (const res of preflights) {
    expect(res.status).toBe(405);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  }
  const evil = await world.request("GET", "/v1/tenant", { headers: { origin: "http://evil.example" } });
  expect(evil.headers.get("access-control-allow-origin")).toBeNull();
  const ingest = await world.request("POST", `/v1/ingest/${svc.id}`, {
    token: null,
    body: {},
    headers: { origin: PAGE },
  });
  expect(ingest.status).toBe(401);
  expect(ingest.headers.get("access-control-allow-origin")).toBeNull();
  expect(ingest.headers.get("vary")).toBeNull();
  await world.close();

  world = await createWorld();
  const unset = await world.request("GET", "/v1/tenant", { headers: { origin: PAGE } });
  expect(unset.headers.get("access-control-allow-origin")).toBeNull();
  expect(unset.headers.get("vary")).toBeNull();
  const pre = await call(world, "OPTIONS", "/v1/tenant", { origin: PAGE, "access-control-request-method": "GET" });
  expect(pre.status).toBe(405);
});

test("INTAKE_CORS_ORIGINS refuses *, a path or a trailing slash at start", async () => {
  for (const value of ["*", "http://a.example/", "http://a.example/app", "a.example"]) {
    await expect(createWorld({ env: { INTAKE_CORS_ORIGINS: value } })).rejects.toThrow(/INTAKE_CORS_ORIGINS/);
  }
});
