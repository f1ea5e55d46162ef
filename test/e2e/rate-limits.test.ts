/**
 * Rate limits across instances (docs/rate-limits.md), with real `intake serve` processes on one
 * PostgreSQL database and one Redis: the limit is one for the fleet, not one per instance; and
 * while Redis cannot be reached, each instance limits alone rather than admitting or refusing
 * everything.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDeployment, type Deployment } from "../support/deployment.ts";
import type { IntakeProcess } from "../support/intake-process.ts";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { sign } from "../support/signing.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const ok = (await serviceAvailable("postgres")) && (await serviceAvailable("redis"));

function rateField(res: Response): { r: number; t: number } {
  const match = /^"(?:api|ingest)";r=(\d+);t=(\d+)$/.exec(res.headers.get("ratelimit") ?? "");
  if (!match) throw new Error(`no RateLimit field on a ${res.status}`);
  return { r: Number(match[1]), t: Number(match[2]) };
}

/** `n` requests at once, alternating between the instances. */
function burst(instances: IntakeProcess[], n: number, send: (on: IntakeProcess) => Promise<Response>) {
  return Promise.all(Array.from({ length: n }, (_, i) => send(instances[i % instances.length] as IntakeProcess)));
}

describe.skipIf(!ok)("two instances, one PostgreSQL, one Redis: one limit for both", () => {
  let deployment: Deployment | undefined;
  let a: IntakeProcess;
  let b: IntakeProcess;

  beforeAll(async () => {
    deployment = await createDeployment({ env: { INTAKE_RATE_LIMIT_API: "50/10s" } });
    [a, b] = await Promise.all([deployment.start("A"), deployment.start("B")]);
  }, 60_000);

  afterAll(() => deployment?.close(), 30_000);

  /** A fresh owner token of the tenant, with a whole window of its own. */
  const freshToken = async () =>
    (await (deployment as Deployment).bootstrap({ tenantId: (deployment as Deployment).owner.tenant_id })).token;

  test("200 concurrent bearer requests split across A and B: exactly 50 admitted, r counts 49..0 once each", async () => {
    const token = await freshToken();
    const replies = await burst([a, b], 200, (on) => on.fetch("/v1/tenant", { token }));
    const admitted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    expect(admitted.length).toBe(50);
    expect(refused.length).toBe(150);
    // One atomic decision each: every remaining count was handed out exactly once.
    expect(admitted.map((r) => rateField(r).r).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    for (const r of refused) {
      expect(rateField(r).r).toBe(0);
      expect(rateField(r).t).toBeGreaterThanOrEqual(1);
      expect(rateField(r).t).toBeLessThanOrEqual(10);
      expect(r.headers.get("retry-after")).toBe(String(rateField(r).t));
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    }
    // Both instances refused: neither held a quota of its own.
    expect(new Set(refused.map((r) => r.url.split("/v1/")[0])).size).toBe(2);
  }, 30_000);

  test("200 concurrent signed events for a service limited to 50 per 10 s: exactly 50 stored", async () => {
    const token = await freshToken();
    const created = await a.fetch("/v1/services", {
      method: "POST",
      token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ service_name: "billing" }),
    });
    expect(created.status).toBe(201);
    const service = (await created.json()) as { id: string; signing_secret: string };
    const patched = await b.fetch(`/v1/services/${service.id}`, {
      method: "PATCH",
      token,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ rate_limit: { limit: 50, window_seconds: 10 } }),
    });
    expect(patched.status).toBe(200);
    const replies = await burst([a, b], 200, (on) => {
      const body = JSON.stringify({ n: crypto.randomUUID() });
      return on.fetch(`/v1/ingest/${service.id}`, {
        method: "POST",
        headers: { "x-service-signature": sign(service.signing_secret, body, Date.now()) },
        body,
      });
    });
    expect(replies.filter((r) => r.status === 202).length).toBe(50);
    expect(replies.filter((r) => r.status === 429).length).toBe(150);
    for (const r of replies) expect(r.headers.get("ratelimit-policy")).toBe('"ingest";q=50;w=10');
    const listed = await a.fetch(`/v1/services/${service.id}/events?limit=100`, { token });
    expect(((await listed.json()) as { data: unknown[] }).data.length).toBe(50);
  }, 30_000);
});

describe.skipIf(!ok)("Redis unreachable: each instance limits alone", () => {
  let proxy: TcpProxy | undefined;
  let deployment: Deployment | undefined;
  let a: IntakeProcess;
  let b: IntakeProcess;
  let token: string;

  beforeAll(async () => {
    const upstream = new URL(TEST_REDIS_URL);
    proxy = await startTcpProxy({ hostname: upstream.hostname, port: Number(upstream.port || 6379) });
    deployment = await createDeployment({
      env: { INTAKE_RATE_LIMIT_API: "5/60s" },
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
    });
    token = deployment.owner.token;
    [a, b] = await Promise.all([deployment.start("A-cut"), deployment.start("B-cut")]);
  }, 60_000);

  afterAll(async () => {
    await deployment?.close();
    proxy?.close();
  }, 30_000);

  test("neither admits everything nor refuses everything: 5 each of 12, logged and counted in metrics", async () => {
    proxy?.cut();
    for (const on of [a, b]) {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await on.fetch("/v1/tenant", { token })).status);
      expect(statuses.filter((s) => s === 200).length).toBe(5);
      expect(statuses.filter((s) => s === 429).length).toBe(7);
      expect(on.lines.some((l) => l.includes("rate limits: redis unreachable; this instance limits alone"))).toBe(true);
      // Counted in metrics: every one of the 12 decisions was taken in process.
      const metrics = await (await on.fetch("/metrics")).text();
      const line = metrics.split("\n").find((l) => l.startsWith('intake_rate_limiter_fallback_total{policy="api"}'));
      expect(Number(line?.split(" ")[1])).toBe(12);
    }
  }, 30_000);
});
