/**
 * The operations declared `native` (src/gateway/operation.ts) are served by Bun.serve's router
 * under `intake serve` and by Elysia's in process; both lead into the same edge steps
 * (src/gateway/edge.ts). Served, each must answer exactly what Elysia answers — status, body and
 * headers but for the fresh X-Request-Id — successes, refusals and the RateLimit fields alike;
 * a request the native route does not decode plainly (a percent-encoded id, a repeated or
 * unknown query key, HEAD, another method) is Elysia's. Each is counted and logged once.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { signPayload } from "../../src/domain/signing.ts";
import { seen } from "../support/answers.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World | undefined;
let server: ReturnType<typeof Bun.serve> | undefined;
afterEach(async () => {
  await server?.stop(true);
  server = undefined;
  await world?.close();
  world = undefined;
});

interface Case {
  method: string;
  path: string;
  token?: string | null;
  /** Signed with this secret (ingest). */
  secret?: string;
}

function request(w: World, base: string, c: Case): Request {
  const headers: Record<string, string> = {};
  const token = c.token === undefined ? w.ownerToken : c.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (c.secret !== undefined) {
    body = '{"a":1}';
    headers["content-type"] = "application/json";
    headers["x-service-signature"] = signPayload(body, c.secret, Math.floor(w.clock.now() / 1000));
  }
  return new Request(`${base}${c.path}`, { method: c.method, headers, body });
}

/** Served and in process, each answer logged once; the answers the same. */
async function expectSameBothWays(w: World, cases: Case[]): Promise<void> {
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: w.app.nativeRoutes, fetch: w.app.fetch });
  for (const c of cases) {
    const where = `${c.method} ${c.path}`;
    const before = w.logs.length;
    const served = await seen(await fetch(request(w, `http://127.0.0.1:${server.port}`, c)));
    const logged = w.logs.slice(before).filter((l) => JSON.parse(l).method === c.method);
    expect(logged.length, where).toBe(1);
    const inProcess = await seen(await w.app.fetch(request(w, "http://intake.test", c)));
    // Bun's listener adds content-length to what it sends; the rest must be the same.
    delete served.headers["content-length"];
    delete inProcess.headers["content-length"];
    expect(served, where).toEqual(inProcess);
  }
}

describe("a native route answers what the operation's Elysia route answers", () => {
  test("200 reads in every query form, 401, 404, and what goes to Elysia (400, 404, 405, HEAD)", async () => {
    world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
    const w = world;
    const { id } = await w.createService("alpha");
    await w.createService("beta");
    const { id: tokenId } = await w.mint({ name: "reader", scope: "read_only" });
    const cursor = (await w.request("GET", "/v1/services?limit=1")).body.next_cursor;
    await expectSameBothWays(w, [
      { method: "GET", path: "/v1/health" },
      { method: "GET", path: "/v1/tenant" },
      { method: "GET", path: "/v1/tenant?x=1" },
      { method: "GET", path: "/v1/services" },
      { method: "GET", path: `/v1/services?limit=1&cursor=${cursor}` },
      { method: "GET", path: `/v1/services/${id}` },
      { method: "GET", path: "/v1/api_tokens?include_revoked=true" },
      { method: "GET", path: `/v1/api_tokens/${tokenId}` },
      { method: "GET", path: "/v1/tenant", token: null },
      { method: "GET", path: "/v1/services", token: "service_live_garbage" },
      { method: "GET", path: `/v1/services/svc_${"0".repeat(32)}` },
      // Not plain: Elysia's (200 ignoring the key, 400, the encoded id's 404, 405, HEAD).
      { method: "GET", path: "/v1/services?_=1" },
      { method: "GET", path: "/v1/services?limit=05&limit=x" },
      { method: "GET", path: "/v1/services/svc%5Fnone" },
      { method: "GET", path: "/v1/tenant/" },
      { method: "HEAD", path: "/v1/tenant" },
      { method: "PUT", path: "/v1/services" },
    ]);
  });

  test("202 ingest, 401 for a bad signature or an unknown service, and what goes to Elysia", async () => {
    world = await createWorld({ env: { INTAKE_ACCESS_LOG: "true" } });
    const w = world;
    const svc = await w.createService();
    await expectSameBothWays(w, [
      { method: "POST", path: `/v1/ingest/${svc.id}`, token: null, secret: svc.secret },
      { method: "POST", path: `/v1/ingest/${svc.id}?x=1`, token: null, secret: svc.secret },
      { method: "POST", path: `/v1/ingest/${svc.id}`, token: null, secret: "whsec_wrong" },
      { method: "POST", path: `/v1/ingest/svc_${"0".repeat(32)}`, token: null, secret: svc.secret },
      { method: "POST", path: "/v1/ingest/svc%5Fnone", token: null, secret: svc.secret },
      { method: "POST", path: `/v1/ingest/${svc.id}/`, token: null, secret: svc.secret },
      { method: "PUT", path: `/v1/ingest/${svc.id}`, token: null, secret: svc.secret },
    ]);
  });

  test("the RateLimit fields and the 429 with Retry-After are the same both ways", async () => {
    world = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "4/60s", INTAKE_ACCESS_LOG: "true" } });
    const w = world;
    // Two served, two in process: the fourth pair is past the limit of four.
    await expectSameBothWays(w, [
      { method: "GET", path: "/v1/tenant" },
      { method: "GET", path: "/v1/services" },
      { method: "GET", path: "/v1/tenant" },
    ]);
    // The last pair above was answered past the limit: the 429 compared equal both ways.
    expect((await w.request("GET", "/v1/tenant")).status).toBe(429);
  });

  test("a native route's answers are counted under its route template", async () => {
    world = await createWorld();
    const w = world;
    const { id } = await w.createService("alpha");
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: w.app.nativeRoutes, fetch: w.app.fetch });
    const auth = { authorization: `Bearer ${w.ownerToken}` };
    expect((await fetch(`http://127.0.0.1:${server.port}/v1/services/${id}`, { headers: auth })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${server.port}/v1/services/${id}`)).status).toBe(401);
    const metrics = await (await w.app.fetch(new Request("http://intake.test/metrics"))).text();
    for (const status of ["200", "401"]) {
      expect(metrics).toMatch(
        new RegExp(`intake_http_requests_total\\{route="/v1/services/:id",method="GET",status="${status}"\\} 1\\b`),
      );
    }
  });
});
