/**
 * The rate limiter port's contract, on the in-process limiter always and on the Redis limiter
 * when Redis answers; then the Redis limiter's fallback while Redis is cut (a TCP proxy).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { createMemoryRateLimiter } from "../../src/cache/rate-limiter-memory.ts";
import { createRedisRateLimiter } from "../../src/cache/rate-limiter-redis.ts";
import { noopObserver, type Observer, type RateLimitPolicy } from "../../src/domain/ports/observer.ts";
import type { RateDecision, RateLimiter } from "../../src/domain/ports/rate-limiter.ts";
import { createLogger } from "../../src/logger.ts";
import { openRedisConnection } from "../../src/redis/connection.ts";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { dropRedisKeys, randomRedisPrefix } from "../support/stack.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";

const redisUp = await serviceAvailable("redis");
const prefixes: string[] = [];

afterAll(async () => {
  if (!redisUp) return;
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  for (const prefix of prefixes) await dropRedisKeys(redis, prefix);
  redis.disconnect();
});

function countingObserver() {
  const fallbacks: RateLimitPolicy[] = [];
  const observer: Observer = { ...noopObserver, rateLimiterFallback: (policy) => fallbacks.push(policy) };
  return { observer, fallbacks };
}

async function takeN(limiter: RateLimiter, n: number, key: string, limit = 3, windowSeconds = 10) {
  const decisions: RateDecision[] = [];
  for (let i = 0; i < n; i++) decisions.push(await limiter.take("api", key, { limit, windowSeconds }));
  return decisions;
}

/** A Redis limiter on a connection of its own (an instance's), closed with it. */
async function redisLimiter(options: {
  url: string;
  keyPrefix: string;
  observer: Observer;
  commandTimeoutMs?: number;
}): Promise<RateLimiter> {
  const logger = createLogger(() => {});
  const redis = await openRedisConnection({ url: options.url, keyPrefix: options.keyPrefix, logger });
  const limiter = createRedisRateLimiter({ ...options, redis, logger });
  return {
    take: limiter.take,
    async close() {
      await limiter.close();
      await redis.close();
    },
  };
}

interface Adapter {
  name: string;
  make(): Promise<RateLimiter>;
}

const adapters: Adapter[] = [{ name: "memory", make: async () => createMemoryRateLimiter() }];
if (redisUp) {
  adapters.push({
    name: "redis",
    make: () => {
      const prefix = randomRedisPrefix();
      prefixes.push(prefix);
      return redisLimiter({ url: TEST_REDIS_URL, keyPrefix: prefix, observer: noopObserver });
    },
  });
}

for (const adapter of adapters) {
  describe(`rate limiter contract (${adapter.name})`, () => {
    test("admits exactly `limit` in a window, counting remaining down; refusals are not counted", async () => {
      const limiter = await adapter.make();
      try {
        const decisions = await takeN(limiter, 5, "tok_a");
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
        expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
        for (const d of decisions) {
          expect(d).toMatchObject({ policy: "api", limit: 3, windowSeconds: 10 });
          expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
          expect(d.resetSeconds).toBeLessThanOrEqual(10);
        }
      } finally {
        await limiter.close();
      }
    });

    test("keys and policies are counted apart", async () => {
      const limiter = await adapter.make();
      try {
        await takeN(limiter, 3, "tok_a");
        expect((await takeN(limiter, 1, "tok_a"))[0]?.allowed).toBe(false);
        expect((await takeN(limiter, 1, "tok_b"))[0]?.allowed).toBe(true);
        expect((await limiter.take("ingest", "tok_a", { limit: 3, windowSeconds: 10 })).allowed).toBe(true);
      } finally {
        await limiter.close();
      }
    });

    test("concurrent decisions on one key admit exactly `limit`", async () => {
      const limiter = await adapter.make();
      try {
        const decisions = await Promise.all(
          Array.from({ length: 60 }, () => limiter.take("ingest", "svc_x", { limit: 25, windowSeconds: 10 })),
        );
        expect(decisions.filter((d) => d.allowed).length).toBe(25);
      } finally {
        await limiter.close();
      }
    });

    test("a spent window admits again after resetSeconds, not before", async () => {
      let now = 1_000_000;
      const limiter = adapter.name === "memory" ? createMemoryRateLimiter({ now: () => now }) : await adapter.make();
      const sleep = async (ms: number) => {
        now += ms;
        if (adapter.name !== "memory") await Bun.sleep(ms);
      };
      try {
        const [, refused] = await takeN(limiter, 2, "tok_t", 1, 1);
        expect(refused?.allowed).toBe(false);
        expect(refused?.resetSeconds).toBe(1);
        await sleep((refused?.resetSeconds ?? 1) * 1000);
        expect((await takeN(limiter, 1, "tok_t", 1, 1))[0]?.allowed).toBe(true);
      } finally {
        await limiter.close();
      }
    });
  });
}

describe("in-process limiter", () => {
  test("t is the window's end rounded up: refused one second before it, admitted at it", async () => {
    let now = 5_000_500;
    const limiter = createMemoryRateLimiter({ now: () => now });
    const first = limiter.take("api", "k", { limit: 1, windowSeconds: 10 }) as RateDecision;
    expect(first).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 10 });
    now += 2_300;
    const refused = limiter.take("api", "k", { limit: 1, windowSeconds: 10 }) as RateDecision;
    // 7.7 s left: t = 8.
    expect(refused).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 8 });
    now += (refused.resetSeconds - 1) * 1000;
    expect((limiter.take("api", "k", { limit: 1, windowSeconds: 10 }) as RateDecision).allowed).toBe(false);
    now += 1000;
    expect((limiter.take("api", "k", { limit: 1, windowSeconds: 10 }) as RateDecision).allowed).toBe(true);
  });

  test("decides synchronously (no promise on the hot path)", () => {
    const limiter = createMemoryRateLimiter();
    expect(limiter.take("api", "k", { limit: 1, windowSeconds: 1 })).not.toBeInstanceOf(Promise);
  });

  test("holds at most maxKeys windows, sweeping expired ones first", () => {
    let now = 0;
    const limiter = createMemoryRateLimiter({ now: () => now, maxKeys: 2_000 });
    for (let i = 0; i < 1_500; i++) limiter.take("api", `old-${i}`, { limit: 1, windowSeconds: 1 });
    now += 1_000;
    for (let i = 0; i < 1_500; i++) limiter.take("api", `new-${i}`, { limit: 1, windowSeconds: 60 });
    // The live windows survived the sweep: each of them is still spent.
    expect((limiter.take("api", "new-0", { limit: 1, windowSeconds: 60 }) as RateDecision).allowed).toBe(false);
    expect((limiter.take("api", "new-1499", { limit: 1, windowSeconds: 60 }) as RateDecision).allowed).toBe(false);
  });
});

/** A Redis limiter reaching Redis through a fault-injecting TCP proxy, counting its fallbacks. */
async function limiterBehindProxy(commandTimeoutMs: number) {
  const upstream = new URL(TEST_REDIS_URL);
  const proxy = await startTcpProxy({ hostname: upstream.hostname, port: Number(upstream.port || 6379) });
  const prefix = randomRedisPrefix();
  prefixes.push(prefix);
  const { observer, fallbacks } = countingObserver();
  const limiter = await redisLimiter({
    url: `redis://127.0.0.1:${proxy.port}`,
    keyPrefix: prefix,
    observer,
    commandTimeoutMs,
  });
  return { proxy, limiter, fallbacks };
}

describe.skipIf(!redisUp)("Redis limiter while Redis is unreachable", () => {
  test("decides in process, counts each fallback, neither admits nor refuses everything; shared again after", async () => {
    const { proxy, limiter, fallbacks } = await limiterBehindProxy(200);
    try {
      // Through Redis: two admitted of the window, nothing counted as a fallback.
      expect((await takeN(limiter, 2, "svc_o", 5)).every((d) => d.allowed)).toBe(true);
      expect(fallbacks).toEqual([]);

      proxy.cut();
      const started = performance.now();
      const during = await takeN(limiter, 8, "svc_o", 5);
      // Alone, this instance admits its own 5 of the window and refuses the rest: never all, never none.
      expect(during.filter((d) => d.allowed).length).toBe(5);
      expect(during.filter((d) => !d.allowed).length).toBe(3);
      expect(fallbacks).toEqual(Array(8).fill("api"));
      // Bounded by the command timeout at worst, not by Redis's reconnect schedule.
      expect(performance.now() - started).toBeLessThan(8 * 1_000);

      await proxy.restore();
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const before = fallbacks.length;
        await limiter.take("api", "probe", { limit: 1000, windowSeconds: 10 });
        if (fallbacks.length === before) break;
        await Bun.sleep(50);
      }
      // Back on the shared window: Redis had counted 2 of 5 before the cut.
      const after = await takeN(limiter, 4, "svc_o", 5);
      expect(after.map((d) => d.allowed)).toEqual([true, true, true, false]);
    } finally {
      await limiter.close();
      proxy.close();
    }
  }, 30_000);
});

describe.skipIf(!redisUp)("Redis limiter behind a silent partition", () => {
  test("only the first decision waits for the command timeout; the rest are decided in process at once", async () => {
    const { proxy, limiter, fallbacks } = await limiterBehindProxy(300);
    try {
      expect((await takeN(limiter, 1, "svc_b", 4))[0]?.allowed).toBe(true);
      proxy.blackhole();
      const first = performance.now();
      await limiter.take("api", "svc_b", { limit: 4, windowSeconds: 10 });
      // The link looks alive: the first decision waits out the command timeout, then falls back.
      expect(performance.now() - first).toBeGreaterThanOrEqual(250);
      const rest = performance.now();
      const decisions = await takeN(limiter, 6, "svc_b", 4);
      expect(performance.now() - rest).toBeLessThan(250);
      // In process from the first fallback on: 4 of its 7 admitted, and each one counted.
      expect(decisions.filter((d) => d.allowed).length).toBe(3);
      expect(fallbacks.length).toBe(7);
    } finally {
      await limiter.close();
      proxy.close();
    }
  }, 30_000);
});
