/**
 * The read lane (src/gateway/read-lane.ts, docs/architecture.md): the hot bearer reads answered
 * beside Elysia's pipeline must answer exactly what the Elysia route answers — same status,
 * body and headers but for the fresh X-Request-Id — successes, refusals and the RateLimit fields
 * alike; and every request it cannot decode exactly as Elysia would must be left to Elysia.
 * On the test stack (SQLite + memory cache, or PostgreSQL + Redis).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { type Seen, seen } from "../support/answers.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function get(path: string, token: string | null, method = "GET"): Request {
  return new Request(`http://intake.test${path}`, {
    method,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
}

/** The lane's answer (it must take the request) and the Elysia route's, side by side. */
async function bothWays(w: World, path: string, token: string | null): Promise<{ lane: Seen; elysia: Seen }> {
  const taken = w.app.gateway.lane.take(get(path, token));
  expect(taken, `the lane leaves GET ${path} to Elysia`).not.toBeNull();
  const lane = await seen(await (taken as Response | Promise<Response>));
  const elysia = await seen(await w.app.gateway.elysia.handle(get(path, token)));
  return { lane, elysia };
}

async function seeded(env: Record<string, string> = {}) {
  const w = await createWorld({ env });
  const services = [await w.createService("alpha"), await w.createService("beta"), await w.createService("gamma")];
  const reader = await w.mint({ name: "reader", scope: "read_only", role: "member" });
  const revoked = await w.mint({ name: "gone" });
  expect((await w.request("DELETE", `/v1/api_tokens/${revoked.id}`)).status).toBe(200);
  const servicePage = (await w.request("GET", "/v1/services?limit=1")).body;
  const tokenPage = (await w.request("GET", "/v1/api_tokens?limit=1")).body;
  return { w, services, reader, revoked, serviceCursor: servicePage.next_cursor, tokenCursor: tokenPage.next_cursor };
}

describe("the read lane answers what the Elysia route answers", () => {
  test("200 on every read, with each page and query form, for an owner and a read_only member", async () => {
    const s = await seeded();
    world = s.w;
    const paths = [
      "/v1/tenant",
      // A route without a query schema ignores its query, in Elysia too.
      "/v1/tenant?x=1",
      "/v1/services",
      "/v1/services?limit=1",
      "/v1/services?limit=100",
      `/v1/services?limit=1&cursor=${s.serviceCursor}`,
      `/v1/services?cursor=${s.serviceCursor}&limit=2`,
      `/v1/services/${s.services[1]?.id}`,
      "/v1/api_tokens",
      "/v1/api_tokens?include_revoked=true",
      "/v1/api_tokens?include_revoked=false&limit=2",
      `/v1/api_tokens?limit=1&cursor=${s.tokenCursor}`,
      `/v1/api_tokens/${s.revoked.id}`,
    ];
    for (const token of [s.w.ownerToken, s.reader.token]) {
      for (const path of paths) {
        const { lane, elysia } = await bothWays(s.w, path, token);
        expect(lane.status, path).toBe(200);
        expect(lane, path).toEqual(elysia);
      }
    }
  });

  test("401, 404 and 400 refusals are the same error bodies and headers", async () => {
    const s = await seeded();
    world = s.w;
    const cases: Array<[string, string | null, number]> = [
      ["/v1/tenant", null, 401],
      ["/v1/services", "service_live_notatoken", 401],
      ["/v1/api_tokens", s.revoked.token, 401],
      [`/v1/services/${s.services[0]?.id}`, null, 401],
      ["/v1/services/svc_00000000000000000000000000000000", s.w.ownerToken, 404],
      ["/v1/services/not-an-id", s.w.ownerToken, 404],
      ["/v1/api_tokens/tok_00000000000000000000000000000000", s.w.ownerToken, 404],
      // Another list's cursor: refused by the domain with its own message.
      [`/v1/services?cursor=${s.tokenCursor}`, s.w.ownerToken, 400],
      [`/v1/api_tokens?cursor=${s.serviceCursor}`, s.w.ownerToken, 400],
    ];
    for (const [path, token, status] of cases) {
      const { lane, elysia } = await bothWays(s.w, path, token);
      expect(lane.status, path).toBe(status);
      expect(lane, path).toEqual(elysia);
    }
  });

  test("a rate-limited deployment: the RateLimit fields on every answer, then 429 with Retry-After", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "6/60s" } });
    const w = world;
    // Three pairs (lane, Elysia) spend the six units; the next pair is refused by both.
    for (const path of ["/v1/tenant", "/v1/services", "/v1/services/svc_00000000000000000000000000000000"]) {
      const { lane, elysia } = await bothWays(w, path, w.ownerToken);
      expect(lane.headers["ratelimit-policy"], path).toBe('"api";q=6;w=60');
      expect(lane, path).toEqual(elysia);
    }
    const { lane, elysia } = await bothWays(w, "/v1/api_tokens", w.ownerToken);
    expect(lane.status).toBe(429);
    expect(lane.headers["retry-after"]).toBeDefined();
    expect(lane).toEqual(elysia);
  });
});

describe("the read lane leaves to Elysia what it cannot decode exactly", () => {
  test("HEAD, a trailing slash, an encoded or nested id, and unknown, repeated or unusual query forms", async () => {
    world = await createWorld();
    const w = world;
    const left = [
      ["HEAD", "/v1/tenant"],
      ["POST", "/v1/services"],
      ["GET", "/v1/tenant/"],
      ["GET", "/v1/services?limit=05"],
      ["GET", "/v1/services?limit=0"],
      ["GET", "/v1/services?limit=101"],
      ["GET", "/v1/services?limit="],
      ["GET", "/v1/services?limit=1&limit=2"],
      ["GET", "/v1/services?cursor=a%2Bb"],
      ["GET", "/v1/services?_=123"],
      ["GET", "/v1/services?include_revoked=true"],
      ["GET", "/v1/api_tokens?include_revoked=1"],
      ["GET", "/v1/services/svc%5Fx"],
      ["GET", "/v1/services/svc_x/events"],
      ["GET", "/v1/feed"],
    ];
    for (const [method, path] of left) {
      expect(w.app.gateway.lane.take(get(path as string, w.ownerToken, method)), `${method} ${path}`).toBeNull();
    }
    // What it leaves, Elysia answers as before: an unknown query key is ignored, a bad limit is a 400.
    expect((await w.request("GET", "/v1/services?_=123")).status).toBe(200);
    expect((await w.request("GET", "/v1/services?limit=0")).body.error.code).toBe("invalid_request");
  });

  test("every read it answers is counted and logged under its route template, once", async () => {
    world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
    const w = world;
    const { id } = await w.createService("alpha");
    expect((await w.request("GET", `/v1/services/${id}`)).status).toBe(200);
    const lines = w.logs.map((l) => JSON.parse(l)).filter((l) => l.method === "GET" && l.route !== undefined);
    expect(lines.map((l) => [l.route, l.status, l.service_id])).toEqual([["/v1/services/:id", 200, id]]);
    const metrics = await (await w.app.fetch(new Request("http://intake.test/metrics"))).text();
    expect(metrics).toMatch(/intake_http_requests_total\{[^}]*route="\/v1\/services\/:id"[^}]*status="200"[^}]*\} 1\b/);
  });
});

describe("served, through Bun.serve's native routes as `intake serve` mounts them", () => {
  test("reads and what the lane leaves answer exactly what Elysia answers, each logged once", async () => {
    world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
    const w = world;
    const { id } = await w.createService("alpha");
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: w.app.nativeRoutes, fetch: w.app.fetch });
    try {
      const cases: Array<[string, string]> = [
        ["GET", "/v1/tenant"],
        ["GET", `/v1/services/${id}`],
        ["GET", "/v1/services?limit=1"],
        ["GET", "/v1/api_tokens?include_revoked=true"],
        // Left by the lane: Elysia's answers (200 ignoring the key, 400, 404, 405).
        ["GET", "/v1/services?_=1"],
        ["GET", "/v1/services?limit=05&limit=x"],
        ["GET", "/v1/services/svc%5Fnone"],
        ["GET", "/v1/tenant/"],
        ["HEAD", "/v1/tenant"],
        ["PUT", "/v1/services"],
      ];
      for (const [method, path] of cases) {
        const before = w.logs.length;
        const served = await seen(
          await fetch(`http://127.0.0.1:${server.port}${path}`, {
            method,
            headers: { authorization: `Bearer ${w.ownerToken}` },
          }),
        );
        const logged = w.logs.slice(before).filter((l) => JSON.parse(l).method === method);
        expect(logged.length, `${method} ${path}`).toBe(1);
        const elysia = await seen(await w.app.gateway.elysia.handle(get(path, w.ownerToken, method)));
        // Bun's listener adds content-length to what it sends; the rest must be the same.
        delete served.headers["content-length"];
        delete elysia.headers["content-length"];
        expect(served, `${method} ${path}`).toEqual(elysia);
      }
    } finally {
      await server.stop(true);
    }
  });
});
