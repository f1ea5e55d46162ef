/**
 * Rate limits (docs/rate-limits.md) through the gateway, on the test stack (SQLite + memory
 * limiter, or PostgreSQL + the Redis limiter with INTAKE_TEST_STACK=postgres-redis): the
 * RateLimit fields, 429 with Retry-After, the check orders, what is never limited, and that a
 * 429 changes nothing.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createWorld, type Reply, type World } from "../support/harness.ts";
import { sign } from "../support/signing.ts";
import { testStack } from "../support/stack.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const onRedis = testStack() === "postgres-redis";

/** Time passes for the world: its manual clock, and on Redis (which keeps its own time) the real one. */
async function elapse(w: World, seconds: number): Promise<void> {
  w.clock.advance(seconds * 1000);
  if (onRedis) await Bun.sleep(seconds * 1000 + 50);
}

function field(reply: Reply, name: string): string | null {
  return reply.headers.get(name);
}

/** `"api";r=3;t=10` → {r: 3, t: 10} */
function rateOf(reply: Reply): { policy: string; r: number; t: number } {
  const value = field(reply, "ratelimit");
  const match = /^"(\w+)";r=(\d+);t=(\d+)$/.exec(value ?? "");
  if (!match) throw new Error(`no RateLimit field: ${value}`);
  return { policy: match[1] as string, r: Number(match[2]), t: Number(match[3]) };
}

function ingest(w: World, serviceId: string, secret: string, body = '{"a":1}', signature?: string) {
  return w.request("POST", `/v1/ingest/${serviceId}`, {
    token: null,
    body,
    headers: { "x-service-signature": signature ?? sign(secret, body, w.clock.now()) },
  });
}

async function storedEvents(w: World, serviceId: string): Promise<number> {
  return (await w.app.store.events.list(serviceId.slice(4), { limit: 100 })).length;
}

describe("INTAKE_RATE_LIMIT_API (per bearer token)", () => {
  test("every answer carries RateLimit-Policy and RateLimit; r counts down; t is the window", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "3/10s" } });
    const replies: Reply[] = [];
    for (let i = 0; i < 3; i++) replies.push(await world.request("GET", "/v1/tenant"));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    for (const r of replies) expect(field(r, "ratelimit-policy")).toBe('"api";q=3;w=10');
    expect(replies.map((r) => rateOf(r).r)).toEqual([2, 1, 0]);
    for (const r of replies) {
      expect(rateOf(r).t).toBeGreaterThanOrEqual(9);
      expect(rateOf(r).t).toBeLessThanOrEqual(10);
      expect(field(r, "retry-after")).toBeNull();
    }
  });

  test("429 rate_limited with Retry-After once spent; a request t seconds later is admitted", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "2/2s" } });
    await world.request("GET", "/v1/tenant");
    await world.request("GET", "/v1/tenant");
    const refused = await world.request("GET", "/v1/services");
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(refused.body.error.request_id).toBe(field(refused, "x-request-id"));
    expect(field(refused, "ratelimit-policy")).toBe('"api";q=2;w=2');
    const { r, t } = rateOf(refused);
    expect(r).toBe(0);
    expect(t).toBeGreaterThanOrEqual(1);
    expect(t).toBeLessThanOrEqual(2);
    expect(field(refused, "retry-after")).toBe(String(t));
    await elapse(world, t);
    const again = await world.request("GET", "/v1/tenant");
    expect(again.status).toBe(200);
    expect(rateOf(again).r).toBe(1);
  });

  test.skipIf(onRedis)("t is exact: one second before it the limit still refuses", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "1/60s" } });
    await world.request("GET", "/v1/tenant");
    world.clock.advance(12_500);
    const refused = await world.request("GET", "/v1/tenant");
    expect(rateOf(refused).t).toBe(48);
    world.clock.advance(47_000);
    expect((await world.request("GET", "/v1/tenant")).status).toBe(429);
    world.clock.advance(1_000);
    expect((await world.request("GET", "/v1/tenant")).status).toBe(200);
  });

  test("one limit per token across all its routes; another token has its own", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "3/60s" } });
    const other = await world.mint({ name: "other", scope: "read_only" }); // 1st of the owner's 3
    expect((await world.request("GET", "/v1/api_tokens")).status).toBe(200);
    expect((await world.request("GET", "/v1/services")).status).toBe(200);
    expect((await world.request("GET", "/v1/tenant")).status).toBe(429);
    const theirs = await world.request("GET", "/v1/tenant", { token: other.token });
    expect(theirs.status).toBe(200);
    expect(rateOf(theirs).r).toBe(2);
  });

  test("401 comes before 429: a bad credential spends nothing and gets no RateLimit fields", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "1/60s" } });
    for (let i = 0; i < 3; i++) {
      const bad = await world.request("GET", "/v1/tenant", { token: "service_live_nope" });
      expect(bad.status).toBe(401);
      expect(field(bad, "ratelimit")).toBeNull();
    }
    expect((await world.request("GET", "/v1/tenant")).status).toBe(200);
    const missing = await world.request("GET", "/v1/tenant", { token: null });
    expect(missing.status).toBe(401);
  });

  test("429 comes before 403 token_scope_insufficient; the 403 carries the RateLimit fields", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "1/60s" } });
    const reader = await world.mint({ name: "reader", scope: "read_only" });
    const forbidden = await world.request("POST", "/v1/services", {
      token: reader.token,
      body: { service_name: "x" },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("token_scope_insufficient");
    expect(rateOf(forbidden)).toMatchObject({ policy: "api", r: 0 });
    const limited = await world.request("POST", "/v1/services", { token: reader.token, body: { service_name: "x" } });
    expect(limited.status).toBe(429);
  });

  test("404 and 400 answers of a limited route carry the fields too", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "5/60s" } });
    const missing = await world.request("GET", "/v1/services/svc_00000000000000000000000000000000");
    expect(missing.status).toBe(404);
    expect(rateOf(missing).r).toBe(4);
    const bad = await world.request("POST", "/v1/services", { body: { service_name: "" } });
    expect(bad.status).toBe(400);
    expect(rateOf(bad).r).toBe(3);
  });

  test("a 429 changes nothing: no token minted, no service created", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "1/60s" } });
    const tenantId = world.tenantId;
    const tokensBefore = await world.app.store.tokens.list(tenantId, { limit: 100, includeRevoked: true });
    expect((await world.request("GET", "/v1/tenant")).status).toBe(200);
    const mint = await world.request("POST", "/v1/api_tokens", { body: { name: "late" } });
    expect(mint.status).toBe(429);
    expect(mint.body.token).toBeUndefined();
    const create = await world.request("POST", "/v1/services", { body: { service_name: "late" } });
    expect(create.status).toBe(429);
    expect(await world.app.store.tokens.list(tenantId, { limit: 100, includeRevoked: true })).toEqual(tokensBefore);
    expect(await world.app.store.services.list(tenantId, { limit: 100 })).toEqual([]);
  });

  test("health, the API description, the console and /metrics are never limited nor carry RateLimit fields", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "1/60s" } });
    await world.request("GET", "/v1/tenant");
    expect((await world.request("GET", "/v1/tenant")).status).toBe(429);
    for (const path of ["/v1/health", "/openapi.json", "/docs", "/console", "/metrics"]) {
      for (let i = 0; i < 3; i++) {
        const reply = await world.request("GET", path);
        expect(reply.status).toBe(200);
        expect(field(reply, "ratelimit")).toBeNull();
        expect(field(reply, "ratelimit-policy")).toBeNull();
      }
    }
  });

  test("off unless configured: no RateLimit fields, no 429", async () => {
    world = await createWorld();
    for (let i = 0; i < 20; i++) {
      const reply = await world.request("GET", "/v1/tenant");
      expect(reply.status).toBe(200);
      expect(field(reply, "ratelimit")).toBeNull();
    }
  });

  test("RPC: resource_exhausted carrying rate_limited, with the RateLimit fields as response headers", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "1/60s" } });
    const call = () =>
      world?.app.fetch(
        new Request("http://intake.test/intake.v1.TenantService/GetTenant", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${world?.ownerToken}` },
          body: "{}",
        }),
      ) as Promise<Response>;
    const ok = await call();
    expect(ok.status).toBe(200);
    expect(ok.headers.get("ratelimit-policy")).toBe('"api";q=1;w=60');
    expect(ok.headers.get("ratelimit")).toMatch(/^"api";r=0;t=\d+$/);
    const refused = await call();
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { code: string; details?: Array<{ debug?: { code?: string } }> };
    expect(body.code).toBe("resource_exhausted");
    expect(JSON.stringify(body.details)).toContain("rate_limited");
    expect(refused.headers.get("ratelimit")).toMatch(/^"api";r=0;t=\d+$/);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});

describe("INTAKE_RATE_LIMIT_INGEST and a service's own rate_limit", () => {
  async function updateOverRpc(w: World, body: unknown): Promise<Response> {
    return w.app.fetch(
      new Request("http://intake.test/intake.v1.ServiceRegistryService/UpdateService", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${w.ownerToken}` },
        body: JSON.stringify(body),
      }),
    );
  }

  test("RPC UpdateService sets rate_limit, reset_rate_limit clears it, bad values are invalid_argument", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const set = await updateOverRpc(world, { id: svc.id, rateLimit: { limit: 7, windowSeconds: 70 } });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { service: { rateLimit: unknown } }).service.rateLimit).toEqual({
      limit: 7,
      windowSeconds: 70,
    });
    const bad = await updateOverRpc(world, { id: svc.id, rateLimit: { limit: 0, windowSeconds: 90_000 } });
    expect(bad.status).toBe(400);
    const text = await bad.text();
    expect(text).toContain("invalid_argument");
    expect(text).toContain("rate_limit.limit");
    expect(text).toContain("rate_limit.window_seconds");
    const both = await updateOverRpc(world, {
      id: svc.id,
      rateLimit: { limit: 1, windowSeconds: 1 },
      resetRateLimit: true,
    });
    expect(both.status).toBe(400);
    expect((await world.request("GET", `/v1/services/${svc.id}`)).body.rate_limit).toEqual({
      limit: 7,
      window_seconds: 70,
    });
    const reset = await updateOverRpc(world, { id: svc.id, resetRateLimit: true });
    expect(reset.status).toBe(200);
    expect((await world.request("GET", `/v1/services/${svc.id}`)).body.rate_limit).toBeNull();
  });

  test("only signed requests spend the quota: an unsigned flood leaves it whole", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_INGEST: "2/60s" } });
    const svc = await world.createService();
    for (let i = 0; i < 5; i++) {
      const bad = await ingest(world, svc.id, svc.secret, '{"a":1}', `t=${Math.floor(world.clock.now() / 1000)},v1=00`);
      expect(bad.status).toBe(401);
      expect(field(bad, "ratelimit")).toBeNull();
    }
    const first = await ingest(world, svc.id, svc.secret);
    expect(first.status).toBe(202);
    expect(field(first, "ratelimit-policy")).toBe('"ingest";q=2;w=60');
    expect(rateOf(first)).toMatchObject({ policy: "ingest", r: 1 });
    expect((await ingest(world, svc.id, svc.secret)).status).toBe(202);
    const refused = await ingest(world, svc.id, svc.secret);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(field(refused, "retry-after")).toBe(String(rateOf(refused).t));
    // Nothing stored by the 429.
    expect(await storedEvents(world, svc.id)).toBe(2);
  });

  test("each service has its own quota; bearer routes are not limited by it", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_INGEST: "1/60s" } });
    const a = await world.createService();
    const b = await world.createService();
    expect((await ingest(world, a.id, a.secret)).status).toBe(202);
    expect((await ingest(world, a.id, a.secret)).status).toBe(429);
    expect((await ingest(world, b.id, b.secret)).status).toBe(202);
    const read = await world.request("GET", `/v1/services/${a.id}/events`);
    expect(read.status).toBe(200);
    expect(field(read, "ratelimit")).toBeNull();
  });

  test("429 before 409 ingestion_paused; the 409 and a 400 after the decision carry the fields", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_INGEST: "2/60s" } });
    const svc = await world.createService();
    const invalid = await ingest(world, svc.id, svc.secret, "[1]");
    expect(invalid.status).toBe(400);
    expect(rateOf(invalid).r).toBe(1);
    expect((await world.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } })).status).toBe(
      200,
    );
    const paused = await ingest(world, svc.id, svc.secret);
    expect(paused.status).toBe(409);
    expect(rateOf(paused).r).toBe(0);
    const limited = await ingest(world, svc.id, svc.secret);
    expect(limited.status).toBe(429);
    expect(await storedEvents(world, svc.id)).toBe(0);
  });

  test("PATCH rate_limit overrides the default at once; null returns to it", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_INGEST: "1/60s" } });
    const svc = await world.createService();
    const patched = await world.request("PATCH", `/v1/services/${svc.id}`, {
      body: { rate_limit: { limit: 3, window_seconds: 30 } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.rate_limit).toEqual({ limit: 3, window_seconds: 30 });
    expect((await world.request("GET", `/v1/services/${svc.id}`)).body.rate_limit).toEqual({
      limit: 3,
      window_seconds: 30,
    });
    const statuses: number[] = [];
    let last: Reply | undefined;
    for (let i = 0; i < 4; i++) {
      last = await ingest(world, svc.id, svc.secret);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
    expect(field(last as Reply, "ratelimit-policy")).toBe('"ingest";q=3;w=30');

    const reset = await world.request("PATCH", `/v1/services/${svc.id}`, { body: { rate_limit: null } });
    expect(reset.status).toBe(200);
    expect(reset.body.rate_limit).toBeNull();
    const back = await ingest(world, svc.id, svc.secret);
    expect(back.status).toBe(202);
    expect(field(back, "ratelimit-policy")).toBe('"ingest";q=1;w=60');
  });

  test("a service's own rate_limit applies with no deployment default", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const plain = await ingest(world, svc.id, svc.secret);
    expect(plain.status).toBe(202);
    expect(field(plain, "ratelimit")).toBeNull();
    await world.request("PATCH", `/v1/services/${svc.id}`, { body: { rate_limit: { limit: 1, window_seconds: 5 } } });
    expect((await ingest(world, svc.id, svc.secret)).status).toBe(202);
    expect((await ingest(world, svc.id, svc.secret)).status).toBe(429);
  });

  test("400 invalid_request with details for a bad rate_limit; nothing changes", async () => {
    world = await createWorld();
    const svc = await world.createService();
    const cases: unknown[] = [
      { limit: 0, window_seconds: 10 },
      { limit: 1, window_seconds: 0 },
      { limit: 1, window_seconds: 86_401 },
      { limit: 1_000_000_001, window_seconds: 10 },
      { limit: 1.5, window_seconds: 10 },
      { limit: 1 },
      { limit: 1, window_seconds: 10, burst: 2 },
      "10/60s",
    ];
    for (const value of cases) {
      const reply = await world.request("PATCH", `/v1/services/${svc.id}`, { body: { rate_limit: value } });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe("invalid_request");
      expect(reply.body.error.details).toEqual([
        { field: "rate_limit", message: expect.stringContaining('"window_seconds": 1..86400') },
      ]);
    }
    expect((await world.request("GET", `/v1/services/${svc.id}`)).body.rate_limit).toBeNull();
  });
});

test("each 429 is counted in intake_rate_limited_total{policy}, admitted requests are not", async () => {
  world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "2/60s", INTAKE_RATE_LIMIT_INGEST: "1/60s" } });
  const counted = async (policy: string) => {
    const text = (await world?.request("GET", "/metrics", { token: null }))?.text ?? "";
    const line = text.split("\n").find((l) => l.startsWith(`intake_rate_limited_total{policy="${policy}"}`));
    return Number(line?.split(" ")[1]);
  };
  const svc = await world.createService(); // 1st of the token's 2
  expect((await world.request("GET", "/v1/tenant")).status).toBe(200);
  expect((await world.request("GET", "/v1/tenant")).status).toBe(429);
  expect((await world.request("GET", "/v1/services")).status).toBe(429);
  expect((await ingest(world, svc.id, svc.secret)).status).toBe(202);
  expect((await ingest(world, svc.id, svc.secret)).status).toBe(429);
  expect(await counted("api")).toBe(2);
  expect(await counted("ingest")).toBe(1);
});

test("RPC Ingest: the service's limit after the signature, resource_exhausted/rate_limited, fields as headers", async () => {
  world = await createWorld({ env: { INTAKE_RATE_LIMIT_INGEST: "1/60s" } });
  const svc = await world.createService();
  const call = (signature: string) => {
    const payload = '{"a":1}';
    return world?.app.fetch(
      new Request("http://intake.test/intake.v1.IngestService/Ingest", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          serviceId: svc.id,
          signature: signature || sign(svc.secret, payload, world?.clock.now() ?? 0),
          payload: Buffer.from(payload).toString("base64"),
        }),
      }),
    ) as Promise<Response>;
  };
  const unsigned = await call("t=1,v1=00");
  expect(unsigned.status).toBe(401);
  expect(unsigned.headers.get("ratelimit")).toBeNull();
  const ok = await call("");
  expect(ok.status).toBe(200);
  expect(ok.headers.get("ratelimit-policy")).toBe('"ingest";q=1;w=60');
  expect(ok.headers.get("ratelimit")).toMatch(/^"ingest";r=0;t=\d+$/);
  const refused = await call("");
  expect(refused.status).toBe(429);
  const text = await refused.text();
  expect(text).toContain("resource_exhausted");
  expect(text).toContain("rate_limited");
  expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(refused.headers.get("ratelimit")).toMatch(/^"ingest";r=0;t=\d+$/);
  expect(await storedEvents(world, svc.id)).toBe(1);
});
