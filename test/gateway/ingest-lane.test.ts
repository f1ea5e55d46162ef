/**
 * The ingest lane (src/gateway/ingest-lane.ts, docs/architecture.md): `POST /v1/ingest/{id}`
 * answered beside Elysia's pipeline must answer exactly what the Elysia route answers — same
 * status, body and headers but for the fresh X-Request-Id and the new event's id and time —
 * for acceptances, duplicates, every refusal and the RateLimit fields alike; and every request
 * whose id it cannot take exactly as Elysia would must be left to Elysia, unread.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { signPayload } from "../../src/domain/signing.ts";
import { type Seen, seen } from "../support/answers.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Signed {
  body?: string;
  secret?: string;
  /** Seconds added to the world's clock in the signature (outside the tolerance: a 401). */
  skew?: number;
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

function ingest(w: World, path: string, o: Signed = {}, method = "POST"): Request {
  const body = o.body ?? '{"a":1}';
  const headers: Record<string, string> = { "content-type": "application/json", ...o.headers };
  if (o.secret !== undefined) {
    headers["x-service-signature"] = signPayload(body, o.secret, Math.floor(w.clock.now() / 1000) + (o.skew ?? 0));
  }
  if (o.idempotencyKey !== undefined) headers["idempotency-key"] = o.idempotencyKey;
  return new Request(`http://intake.test${path}`, { method, headers, body: method === "GET" ? undefined : body });
}

/** The lane's answer (it must take the request) and the Elysia route's, to the same request. */
async function bothWays(w: World, path: string, o: Signed = {}): Promise<{ lane: Seen; elysia: Seen }> {
  const taken = w.app.gateway.ingestLane.take(ingest(w, path, o));
  expect(taken, `the lane leaves POST ${path} to Elysia`).not.toBeNull();
  const lane = await seen(await (taken as Response | Promise<Response>));
  const elysia = await seen(await w.app.gateway.elysia.handle(ingest(w, path, o)));
  return { lane, elysia };
}

describe("the ingest lane answers what the Elysia route answers", () => {
  test("202 for a signed event and 200 for its duplicate, each stored once per way", async () => {
    world = await createWorld();
    const w = world;
    const svc = await w.createService();
    const path = `/v1/ingest/${svc.id}`;
    const accepted = await bothWays(w, path, { secret: svc.secret });
    expect(accepted.lane.status).toBe(202);
    expect(accepted.lane).toEqual(accepted.elysia);
    // Each way sends the key twice: 202, then the 200 duplicate of its first.
    const laneFirst = await w.app.gateway.ingestLane.take(
      ingest(w, path, { secret: svc.secret, idempotencyKey: "k1" }),
    );
    expect(laneFirst?.status).toBe(202);
    const elysiaFirst = await w.app.gateway.elysia.handle(
      ingest(w, path, { secret: svc.secret, idempotencyKey: "k2" }),
    );
    expect(elysiaFirst.status).toBe(202);
    const lane = await seen(
      await (w.app.gateway.ingestLane.take(
        ingest(w, path, { secret: svc.secret, idempotencyKey: "k1" }),
      ) as Promise<Response>),
    );
    const elysia = await seen(
      await w.app.gateway.elysia.handle(ingest(w, path, { secret: svc.secret, idempotencyKey: "k2" })),
    );
    expect(lane.status).toBe(200);
    expect(lane).toEqual(elysia);
    const listed = await w.request("GET", `/v1/services/${svc.id}/events?limit=100`);
    expect(listed.body.data.length).toBe(4);
  });

  test("401, 413, 409 and 400 refusals are the same error bodies and headers, and store nothing", async () => {
    world = await createWorld();
    const w = world;
    const svc = await w.createService("live");
    const paused = await w.createService("paused");
    await w.request("PATCH", `/v1/services/${paused.id}`, { body: { is_monitored: false } });
    const cases: Array<[string, Signed, number]> = [
      ["/v1/ingest/svc_00000000000000000000000000000000", { secret: svc.secret }, 401],
      ["/v1/ingest/not-an-id", { secret: svc.secret }, 401],
      [`/v1/ingest/${svc.id}`, {}, 401],
      [`/v1/ingest/${svc.id}`, { secret: "whsec_wrong" }, 401],
      [`/v1/ingest/${svc.id}`, { secret: svc.secret, skew: -3600 }, 401],
      [`/v1/ingest/${svc.id}`, { secret: svc.secret, body: `{"x":"${"y".repeat(262_144)}"}` }, 413],
      [`/v1/ingest/${paused.id}`, { secret: paused.secret }, 409],
      [`/v1/ingest/${svc.id}`, { secret: svc.secret, body: "[1,2]" }, 400],
      [`/v1/ingest/${svc.id}`, { secret: svc.secret, body: "{" }, 400],
      [`/v1/ingest/${svc.id}`, { secret: svc.secret, idempotencyKey: "has space" }, 400],
    ];
    for (const [path, signed, status] of cases) {
      const { lane, elysia } = await bothWays(w, path, signed);
      expect(lane.status, `${path} ${JSON.stringify(signed).slice(0, 80)}`).toBe(status);
      expect(lane, path).toEqual(elysia);
    }
    const listed = await w.request("GET", `/v1/services/${svc.id}/events?limit=100`);
    expect(listed.body.data).toEqual([]);
  });

  test("a rate-limited deployment: the RateLimit fields on every answer, then 429 with Retry-After", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_INGEST: "4/60s" } });
    const w = world;
    const svc = await w.createService();
    const path = `/v1/ingest/${svc.id}`;
    // Two pairs (lane, Elysia) spend the four units; the next pair is refused by both.
    for (let i = 0; i < 2; i++) {
      const { lane, elysia } = await bothWays(w, path, { secret: svc.secret });
      expect(lane.status).toBe(202);
      expect(lane.headers["ratelimit-policy"]).toBe('"ingest";q=4;w=60');
      expect(lane).toEqual(elysia);
    }
    const { lane, elysia } = await bothWays(w, path, { secret: svc.secret });
    expect(lane.status).toBe(429);
    expect(lane.headers["retry-after"]).toBeDefined();
    expect(lane).toEqual(elysia);
  });
});

describe("the ingest lane leaves to Elysia what it cannot take exactly", () => {
  test("another method, a trailing slash, an encoded or nested id: left unread, answered by Elysia as before", async () => {
    world = await createWorld();
    const w = world;
    const svc = await w.createService();
    const left: Array<[string, string]> = [
      ["PUT", `/v1/ingest/${svc.id}`],
      ["GET", `/v1/ingest/${svc.id}`],
      ["POST", `/v1/ingest/${svc.id}/`],
      ["POST", "/v1/ingest/svc%5Fx"],
      ["POST", `/v1/ingest/${svc.id}/events`],
      ["POST", "/v1/ingest/"],
      ["POST", "/v1/ingestx/abc"],
    ];
    for (const [method, path] of left) {
      const request = ingest(w, path, { secret: svc.secret }, method);
      expect(w.app.gateway.ingestLane.take(request), `${method} ${path}`).toBeNull();
      expect(request.bodyUsed, `${method} ${path}`).toBe(false);
    }
    // An encoded id reaches the same 401 through Elysia.
    const res = await w.app.fetch(ingest(w, "/v1/ingest/svc%5Fx", { secret: svc.secret }));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_signature");
  });

  test("every event it answers is counted and logged under its route template, once", async () => {
    world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
    const w = world;
    const svc = await w.createService();
    const before = w.logs.length;
    expect((await w.app.fetch(ingest(w, `/v1/ingest/${svc.id}`, { secret: svc.secret }))).status).toBe(202);
    const lines = w.logs
      .slice(before)
      .map((l) => JSON.parse(l))
      .filter((l) => l.method === "POST" && l.route !== undefined);
    expect(lines.map((l) => [l.route, l.status, l.service_id])).toEqual([["/v1/ingest/:service_id", 202, svc.id]]);
    const metrics = await (await w.app.fetch(new Request("http://intake.test/metrics"))).text();
    expect(metrics).toMatch(
      /intake_http_requests_total\{[^}]*route="\/v1\/ingest\/:service_id"[^}]*status="202"[^}]*\} 1\b/,
    );
  });
});

describe("served, through Bun.serve's native routes as `intake serve` mounts them", () => {
  test("ingest and what the lane leaves answer exactly what Elysia answers, each logged once", async () => {
    world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
    const w = world;
    const svc = await w.createService();
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: w.app.nativeRoutes, fetch: w.app.fetch });
    try {
      const cases: Array<[string, string, Signed]> = [
        ["POST", `/v1/ingest/${svc.id}`, { secret: svc.secret }],
        ["POST", `/v1/ingest/${svc.id}?x=1`, { secret: svc.secret }],
        ["POST", `/v1/ingest/${svc.id}`, { secret: "whsec_wrong" }],
        ["POST", "/v1/ingest/svc_00000000000000000000000000000000", { secret: svc.secret }],
        // Left by the lane: Elysia's answers (401 for an encoded id, 404, 405).
        ["POST", "/v1/ingest/svc%5Fnone", { secret: svc.secret }],
        ["POST", `/v1/ingest/${svc.id}/`, { secret: svc.secret }],
        ["PUT", `/v1/ingest/${svc.id}`, { secret: svc.secret }],
      ];
      for (const [method, path, signed] of cases) {
        const request = ingest(w, path, signed, method);
        const before = w.logs.length;
        const served = await seen(
          await fetch(`http://127.0.0.1:${server.port}${path}`, {
            method,
            headers: Object.fromEntries(request.headers),
            body: await request.text(),
          }),
        );
        const logged = w.logs.slice(before).filter((l) => JSON.parse(l).method === method);
        expect(logged.length, `${method} ${path}`).toBe(1);
        const elysia = await seen(await w.app.gateway.elysia.handle(ingest(w, path, signed, method)));
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
