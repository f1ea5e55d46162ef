/**
 * SPEC §20's HTTP hygiene on the main port, in process (app.fetch): CORS by
 * INTAKE_CORS_ORIGINS, compression, `Cache-Control: no-store` on /v1, HEAD on every GET route
 * (the streams included), strict numbers in JSON bodies.
 */
import { afterEach, expect, test } from "bun:test";
import { brotliDecompressSync } from "node:zlib";
import { signPayload } from "../../src/domain/signing.ts";
import { LARGE_BODY_BYTES } from "../../src/gateway/compression.ts";
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
  const connect = await world.app.fetch(
    new Request("http://intake.test/intake.v1.TenantService/GetTenant", {
      method: "POST",
      headers: { origin: PAGE, authorization: `Bearer ${world.ownerToken}`, "content-type": "application/json" },
      body: "{}",
    }),
  );
  expect(connect.status).toBe(200);
  expect(connect.headers.get("access-control-allow-origin")).toBe(PAGE);
  expect(connect.headers.get("access-control-expose-headers")).toContain("Grpc-Status");
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

/** A request path for a declared template: ids that name nothing (a 404 still answers). */
const concrete = (path: string, id: string) => path.replace(/:[a-z_]+/g, id);

test("Cache-Control: no-store on every /v1 operation's answer, an unknown /v1 route's and a 405's", async () => {
  world = await createWorld();
  const svc = await world.createService();
  const answers: Array<[string, string | null]> = [];
  for (const op of world.app.gateway.operations) {
    const path = concrete(op.path, svc.id);
    const res = await world.request(op.method, path, {
      headersOnly: true,
      ...(op.method !== "GET" && op.method !== "DELETE" && { body: {} }),
    });
    answers.push([`${op.method} ${op.path} ${res.status}`, res.headers.get("cache-control")]);
  }
  for (const [method, path] of [
    ["GET", "/v1/nope"],
    ["PUT", "/v1/tenant"],
  ] as const) {
    const res = await world.request(method, path);
    answers.push([`${method} ${path} ${res.status}`, res.headers.get("cache-control")]);
  }
  expect(answers.filter(([, value]) => value !== "no-store")).toEqual([]);
  // Outside /v1, a route keeps its own caching.
  const favicon = await world.request("GET", "/favicon.ico", { token: null });
  expect(favicon.headers.get("cache-control")).toBe("public, max-age=86400");
});

test("HEAD answers every GET route with the GET's status and headers and no body, the streams included", async () => {
  world = await createWorld({ env: { INTAKE_CORS_ORIGINS: PAGE } });
  const svc = await world.createService();
  const gets = (world.app.gateway.elysia.routes as Array<{ method: string; path: string }>)
    .filter((r) => r.method === "GET")
    .map((r) => concrete(r.path.replace("*", "services"), svc.id));
  expect(gets).toContain("/v1/feed/stream");
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: world.app.nativeRoutes, fetch: world.app.fetch });
  try {
    const owner = { authorization: `Bearer ${world.ownerToken}` };
    for (const path of gets) {
      const inProcess = await call(world, "HEAD", path, owner);
      const get = await world.request("GET", path, { headersOnly: true });
      expect([path, inProcess.status]).toEqual([path, get.status]);
      expect([path, await inProcess.text()]).toEqual([path, ""]);
      expect(inProcess.headers.get("content-type")).toBe(get.headers.get("content-type"));
      // Over a socket: the answer ends (a hung HEAD never resolves and the test times out).
      const served = await fetch(`http://127.0.0.1:${server.port}${path}`, {
        method: "HEAD",
        headers: owner,
        redirect: "manual",
        signal: AbortSignal.timeout(20_000),
      });
      expect([path, served.status]).toEqual([path, get.status]);
      expect([path, await served.text()]).toEqual([path, ""]);
    }
    const tenant = await world.request("GET", "/v1/tenant");
    const head = await call(world, "HEAD", "/v1/tenant", owner);
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(tenant.text)));
  } finally {
    server.stop(true);
  }
});

test("a listed JSON answer of 1 KiB or more is gzip- or br-encoded as offered; a small one is not", async () => {
  world = await createWorld();
  for (let i = 0; i < 12; i++) await world.createService(`service-number-${i}`);
  const auth = { authorization: `Bearer ${world.ownerToken}` };
  const plain = await call(world, "GET", "/v1/services?limit=100", auth);
  const text = await plain.text();
  expect(text.length).toBeGreaterThan(1024);
  expect(plain.headers.get("content-encoding")).toBeNull();

  const gzip = await call(world, "GET", "/v1/services?limit=100", { ...auth, "accept-encoding": "gzip" });
  expect(gzip.headers.get("content-encoding")).toBe("gzip");
  expect(gzip.headers.get("vary")).toContain("Accept-Encoding");
  expect(gzip.headers.get("cache-control")).toBe("no-store");
  const gzipped = new Uint8Array(await gzip.arrayBuffer());
  expect(gzipped.byteLength).toBeLessThan(text.length);
  expect(new TextDecoder().decode(Bun.gunzipSync(gzipped))).toBe(text);

  const br = await call(world, "GET", "/v1/services?limit=100", { ...auth, "accept-encoding": "gzip, deflate, br" });
  expect(br.headers.get("content-encoding")).toBe("br");
  expect(brotliDecompressSync(new Uint8Array(await br.arrayBuffer())).toString()).toBe(text);

  const refused = await call(world, "GET", "/v1/services?limit=100", { ...auth, "accept-encoding": "br;q=0, gzip" });
  expect(refused.headers.get("content-encoding")).toBe("gzip");
  const small = await call(world, "GET", "/v1/tenant", { ...auth, "accept-encoding": "gzip, br" });
  expect(small.headers.get("content-encoding")).toBeNull();
  expect(((await small.json()) as { name: string }).name).toBe("Acme");
});

test("a feed page of 64 KiB or more is br- and gzip-encoded (off the event loop) and decodes to the plain page", async () => {
  world = await createWorld();
  const service = await world.createService("bulk");
  const payload = JSON.stringify({ note: "n".repeat(900), items: [1, 2, 3] });
  for (let i = 0; i < 100; i++) {
    const headers = {
      "x-service-signature": signPayload(payload, service.secret, Math.floor(world.clock.now() / 1000)),
    };
    const res = await world.request("POST", `/v1/ingest/${service.id}`, { token: null, body: payload, headers });
    expect(res.status).toBe(202);
  }
  const auth = { authorization: `Bearer ${world.ownerToken}` };
  const text = await (await call(world, "GET", "/v1/feed?limit=100", auth)).text();
  expect(text.length).toBeGreaterThan(LARGE_BODY_BYTES);
  const br = await call(world, "GET", "/v1/feed?limit=100", { ...auth, "accept-encoding": "gzip, br" });
  expect([br.status, br.headers.get("content-encoding")]).toEqual([200, "br"]);
  const brBytes = new Uint8Array(await br.arrayBuffer());
  expect(brBytes.byteLength).toBeLessThan(text.length / 4);
  expect(brotliDecompressSync(brBytes).toString()).toBe(text);
  const gzip = await call(world, "GET", "/v1/feed?limit=100", { ...auth, "accept-encoding": "gzip" });
  expect([gzip.status, gzip.headers.get("content-encoding")]).toEqual([200, "gzip"]);
  expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await gzip.arrayBuffer())))).toBe(text);
});

test("/openapi.json, /metrics and the console's files are compressed for a client offering gzip or br", async () => {
  world = await createWorld();
  for (const path of ["/openapi.json", "/metrics", "/docs/assets/scalar-api-reference.js"]) {
    let res = await call(world, "GET", path, { "accept-encoding": "br" });
    // The /docs bundle is compressed off the event loop on first use, sent unencoded meanwhile.
    for (let i = 0; i < 200 && res.headers.get("content-encoding") === null; i++) {
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await Bun.sleep(50);
      res = await call(world, "GET", path, { "accept-encoding": "br" });
    }
    expect([path, res.status, res.headers.get("content-encoding")]).toEqual([path, 200, "br"]);
    const raw = await call(world, "GET", path);
    expect([path, res.status, raw.headers.get("content-encoding")]).toEqual([path, 200, null]);
    const decoded = brotliDecompressSync(new Uint8Array(await res.arrayBuffer())).toString();
    if (path !== "/metrics") expect(decoded).toBe(await raw.text());
    else expect(decoded).toContain("# HELP");
  }
  const page = await (await call(world, "GET", "/console")).text();
  const assets = [...page.matchAll(/\/console\/assets\/[^"]+/g)].map((m) => m[0]);
  expect(assets.length).toBeGreaterThan(0);
  for (const asset of assets) {
    const res = await call(world, "GET", asset, { "accept-encoding": "gzip" });
    expect([asset, res.headers.get("content-encoding")]).toEqual([asset, "gzip"]);
    const raw = await (await call(world, "GET", asset)).text();
    expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await res.arrayBuffer())))).toBe(raw);
  }
});

test("the feed stream is never compressed", async () => {
  world = await createWorld();
  const res = await call(world, "GET", "/v1/feed/stream", {
    authorization: `Bearer ${world.ownerToken}`,
    "accept-encoding": "gzip, br",
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  expect(res.headers.get("content-encoding")).toBeNull();
  await res.body?.cancel();
});

test('400 for "5", "0x10" or "1e3" where a JSON body takes a whole number, naming the field; JSON numbers pass', async () => {
  world = await createWorld();
  const svc = await world.createService();
  for (const limit of ['"5"', '"0x10"', '"1e3"']) {
    const res = await world.request("PATCH", `/v1/services/${svc.id}`, {
      body: `{"rate_limit":{"limit":${limit},"window_seconds":60}}`,
      headers: { "content-type": "application/json" },
    });
    expect([limit, res.status, res.body.error.code]).toEqual([limit, 400, "invalid_request"]);
    expect(res.body.error.details).toEqual([
      { field: "rate_limit.limit", message: `must be a whole JSON number, not a string (${limit})` },
    ]);
  }
  const read = await world.request("GET", `/v1/services/${svc.id}`);
  expect(read.body.rate_limit).toBeNull();
  const ok = await world.request("PATCH", `/v1/services/${svc.id}`, {
    body: '{"rate_limit":{"limit":1e3,"window_seconds":60}}',
    headers: { "content-type": "application/json" },
  });
  expect(ok.status).toBe(200);
  expect(ok.body.rate_limit).toEqual({ limit: 1000, window_seconds: 60 });
  const window = await world.request("PATCH", `/v1/services/${svc.id}`, {
    body: { rate_limit: { limit: 5, window_seconds: "60" } },
  });
  expect(window.status).toBe(400);
  expect(window.body.error.details[0].field).toBe("rate_limit.window_seconds");
});

test("400 for ?limit=abc, 5.5, 1e1 or 0 saying the parameter takes a whole number in its bounds", async () => {
  world = await createWorld();
  for (const value of ["abc", "5.5", "1e1", "0", "101"]) {
    const res = await world.request("GET", `/v1/services?limit=${value}`);
    expect([value, res.status]).toEqual([value, 400]);
    expect(res.body.error.details).toEqual([
      { field: "limit", message: `must be a whole number from 1 to 100 (got "${value}")` },
    ]);
  }
  const feed = await world.request("GET", "/v1/feed?wait=soon");
  expect(feed.body.error.details).toEqual([
    { field: "wait", message: 'must be a whole number from 0 to 30 (got "soon")' },
  ]);
  expect((await world.request("GET", "/v1/services?limit=05")).status).toBe(200);
});
