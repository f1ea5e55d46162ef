/**
 * Invalidation across a partitioned Redis, with real processes: two `intake serve` instances
 * on one PostgreSQL database, each reaching Redis through its own TCP proxy. In every shape
 * (A's link blackholed, B's, both, B's cut with a reset, A's healed mid-revocation) a token
 * revoked through A answers 200 only once no instance accepts it any more: B, hammered with
 * the token the whole time, never accepts a request sent after A's 200. docs/cache.md, "When
 * an invalidation cannot be confirmed", states the bound (INTAKE_CACHE_MAX_AGE_MS) this proves.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { createDeployment, type Deployment } from "../support/deployment.ts";
import type { IntakeProcess } from "../support/intake-process.ts";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { sign } from "../support/signing.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";

const ok = (await serviceAvailable("postgres")) && (await serviceAvailable("redis"));

/** INTAKE_CACHE_MAX_AGE_MS for both instances: the bound under test. */
const MAX_AGE_MS = 1_000;

interface Probe {
  sentAt: number;
  status: number;
}

describe.skipIf(!ok)("invalidation while Redis is partitioned from one or both instances", () => {
  let deployment: Deployment | undefined;
  const proxies: TcpProxy[] = [];
  let proxyA: TcpProxy;
  let proxyB: TcpProxy;
  let a: IntakeProcess;
  let b: IntakeProcess;
  let owner: string;
  let prefix: string;
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

  beforeAll(async () => {
    const upstream = new URL(TEST_REDIS_URL);
    const target = { hostname: upstream.hostname, port: Number(upstream.port || 6379) };
    proxyA = await startTcpProxy(target);
    proxyB = await startTcpProxy(target);
    proxies.push(proxyA, proxyB);
    // Each instance reaches Redis through its own proxy.
    deployment = await createDeployment({ redisUrl: null, env: { INTAKE_CACHE_MAX_AGE_MS: String(MAX_AGE_MS) } });
    prefix = deployment.prefix;
    owner = deployment.owner.token;
    [a, b] = await Promise.all([
      deployment.start("A", { REDIS_URL: `redis://127.0.0.1:${proxyA.port}` }),
      deployment.start("B", { REDIS_URL: `redis://127.0.0.1:${proxyB.port}` }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await deployment?.close();
    for (const proxy of proxies) proxy.close();
    redis.disconnect();
  }, 30_000);

  async function mint(name: string): Promise<{ id: string; token: string }> {
    const res = await a.fetch("/v1/api_tokens", {
      method: "POST",
      token: owner,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name, scope: "read_only" }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; token: string };
  }

  /** Calls `probe` back to back until `stop` resolves; every call's send time and status. */
  async function hammer(probe: () => Promise<number>, stop: Promise<unknown>): Promise<Probe[]> {
    const seen: Probe[] = [];
    let done = false;
    void stop.then(() => {
      done = true;
    });
    while (!done) {
      const sentAt = performance.now();
      seen.push({ sentAt, status: await probe().catch(() => 0) });
    }
    return seen;
  }

  /** Both links healthy again, and both instances connected and subscribed (as Redis sees it). */
  async function heal(): Promise<void> {
    await Promise.all(proxies.map((p) => p.restore()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const list = String(await redis.call("CLIENT", "LIST"));
      const named = (name: string) => list.split("\n").filter((l) => l.includes(` name=${prefix}:${name} `));
      const subscribed = named("sub").filter((l) => / sub=3 /.test(l)).length;
      if (subscribed === 2 && named("cmd").length === 2) break;
      if (Date.now() > deadline) throw new Error(`instances did not reconnect to Redis:\n${list}`);
      await Bun.sleep(50);
    }
    // The subscription is active at Redis a moment before the instance has handled its reply.
    await Bun.sleep(100);
  }

  /**
   * Warms B with a fresh token (in its process and in Redis), partitions, revokes through A
   * while B is hammered, and returns what B answered and when A's 200 came.
   */
  async function revokeDuring(partition: () => void, during?: () => Promise<void>) {
    const victim = await mint("victim");
    const onB = () => b.fetch("/v1/tenant", { token: victim.token }).then((r) => r.status);
    expect(await onB()).toBe(200);
    expect(await onB()).toBe(200);
    partition();
    let answered = 0;
    let finish: () => void = () => {};
    const stop = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const probes = hammer(onB, stop);
    const sent = performance.now();
    const revoking = a.fetch(`/v1/api_tokens/${victim.id}`, { method: "DELETE", token: owner });
    await during?.();
    const res = await revoking;
    answered = performance.now();
    expect(res.status).toBe(200);
    // A refuses at once; B is watched a while longer.
    expect((await a.fetch("/v1/tenant", { token: victim.token })).status).toBe(401);
    await Bun.sleep(MAX_AGE_MS);
    finish();
    const seen = await probes;
    const afterAnswer = seen.filter((p) => p.sentAt >= answered);
    expect(afterAnswer.length).toBeGreaterThan(0);
    // The rule: no instance accepts a request sent after the revocation's 200.
    expect(afterAnswer.filter((p) => p.status === 200)).toEqual([]);
    expect(afterAnswer.every((p) => p.status === 401)).toBe(true);
    // And the latest acceptance at all came within the bound of the DELETE being sent.
    const accepted = seen.filter((p) => p.status === 200);
    const lastAccepted = accepted.length === 0 ? sent : (accepted.at(-1)?.sentAt ?? sent);
    expect(lastAccepted - sent).toBeLessThan(MAX_AGE_MS + 500);
    return { took: answered - sent };
  }

  test("healthy Redis: the revocation answers without waiting out the bound", async () => {
    await redis.connect();
    await heal();
    const { took } = await revokeDuring(() => {});
    expect(took).toBeLessThan(MAX_AGE_MS);
  }, 30_000);

  test("A's link blackholed: A answers 200 only after the bound, and B never accepts the token after it", async () => {
    await heal();
    const { took } = await revokeDuring(() => proxyA.blackhole());
    expect(took).toBeGreaterThanOrEqual(MAX_AGE_MS - 50);
  }, 30_000);

  test("B's link blackholed: A's unconfirmed invalidation waits out the bound; B never accepts after the 200", async () => {
    await heal();
    await revokeDuring(() => proxyB.blackhole());
  }, 30_000);

  test("both links blackholed: B never accepts after the 200", async () => {
    await heal();
    await revokeDuring(() => {
      proxyA.blackhole();
      proxyB.blackhole();
    });
  }, 30_000);

  test("B's link cut (reset): B, knowing it is deaf, serves nothing from process; never accepts after the 200", async () => {
    await heal();
    await revokeDuring(() => proxyB.cut());
  }, 30_000);

  test("A's link blackholed, then healed while the revocation is in flight: B never accepts after the 200", async () => {
    await heal();
    await revokeDuring(
      () => proxyA.blackhole(),
      async () => {
        await Bun.sleep(200);
        await proxyA.restore();
      },
    );
  }, 30_000);

  test("pausing a service through A with A's link blackholed: B answers 409 to every event sent after the 200", async () => {
    await heal();
    const created = await a.fetch("/v1/services", {
      method: "POST",
      token: owner,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ service_name: `svc-${crypto.randomUUID()}` }),
    });
    expect(created.status).toBe(201);
    const service = (await created.json()) as { id: string; signing_secret: string };
    const send = () => {
      const body = JSON.stringify({ type: "ping", n: crypto.randomUUID() });
      return b
        .fetch(`/v1/ingest/${service.id}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-service-signature": sign(service.signing_secret, body, Date.now()),
          },
          body,
        })
        .then((r) => r.status);
    };
    expect(await send()).toBe(202);
    expect(await send()).toBe(202);
    proxyA.blackhole();
    let finish: () => void = () => {};
    const probes = hammer(
      send,
      new Promise<void>((resolve) => {
        finish = resolve;
      }),
    );
    const paused = await a.fetch(`/v1/services/${service.id}`, {
      method: "PATCH",
      token: owner,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ is_monitored: false }),
    });
    const answered = performance.now();
    expect(paused.status).toBe(200);
    await Bun.sleep(MAX_AGE_MS);
    finish();
    const after = (await probes).filter((p) => p.sentAt >= answered);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((p) => p.status === 409)).toBe(true);
  }, 30_000);
});
