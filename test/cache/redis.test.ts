import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { createRedisCache, type RedisCache, type RedisCacheOptions, redisHeartbeatMs } from "../../src/cache/redis.ts";
import { createLogger, silentLogger } from "../../src/logger.ts";
import { openRedisConnection, type RedisConnection } from "../../src/redis/connection.ts";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { counter, createClock, deferred, lookupRecorder, runCacheContract } from "./cache-contract.ts";

const ok = await serviceAvailable("redis");

const OPTIONS = { ttlMs: 60_000, negativeTtlMs: 30_000, maxEntries: 100 };

interface Token {
  id: string;
  scope: string;
}

const newPrefix = () => `intake-test-${randomUUID()}`;

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await Bun.sleep(10);
  }
}

/** Ids of the server-side connections whose name passes `match`. */
async function clientIds(admin: Redis, match: (name: string) => boolean): Promise<string[]> {
  const list = String(await admin.call("CLIENT", "LIST"));
  const ids: string[] = [];
  for (const line of list.split("\n")) {
    const id = /(?:^| )id=(\d+)/.exec(line)?.[1];
    const name = /(?:^| )name=(\S*)/.exec(line)?.[1];
    if (id && name !== undefined && match(name)) ids.push(id);
  }
  return ids;
}

describe.skipIf(!ok)("redis cache", () => {
  const open: RedisCache[] = [];
  const connections: RedisConnection[] = [];
  const admin = ok ? new Redis(TEST_REDIS_URL, { lazyConnect: true }) : undefined;

  /** An instance's cache on Redis connections of its own (closed with it). */
  const make = async (options: Partial<RedisCacheOptions> & { url?: string } = {}) => {
    const { url = TEST_REDIS_URL, ...rest } = options;
    const keyPrefix = rest.keyPrefix ?? newPrefix();
    const logger = rest.logger ?? silentLogger;
    const redis = await openRedisConnection({ url, keyPrefix, logger, heartbeatMs: redisHeartbeatMs(rest.maxAgeMs) });
    const cache = await createRedisCache({ redis, keyPrefix, logger, ...rest });
    open.push(cache);
    connections.push(redis);
    return cache;
  };

  afterEach(async () => {
    await Promise.all(open.splice(0).map((cache) => cache.close()));
    await Promise.all(connections.splice(0).map((redis) => redis.close()));
  });

  afterAll(() => {
    admin?.disconnect();
  });

  runCacheContract("redis", ({ now, observer }) => make({ now, observer }));

  test("a lookup another instance already filled is counted as shared_hit", async () => {
    const keyPrefix = newPrefix();
    const a = lookupRecorder();
    const b = lookupRecorder();
    const first = (await make({ keyPrefix, observer: a.observer })).namespace<Token>("tok", OPTIONS);
    const second = (await make({ keyPrefix, observer: b.observer })).namespace<Token>("tok", OPTIONS);
    await first.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
    const loader = counter<Token>(() => ({ id: "tok_other", scope: "read_only" }));
    expect(await second.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
    await second.getOrLoad("d1", loader.load);
    expect(loader.calls).toBe(0);
    expect(a.lookups).toEqual(["tok:miss"]);
    expect(b.lookups).toEqual(["tok:shared_hit", "tok:hit"]);
  });

  const adminClient = () => {
    if (!admin) throw new Error("redis is not available");
    return admin;
  };

  test('kind is "redis" and a healthy run counts no redis errors', async () => {
    const cache = await make();
    await cache.namespace<Token>("tokens", OPTIONS).getOrLoad("d1", async () => ({ id: "t", scope: "read_only" }));
    expect(cache.kind).toBe("redis");
    expect(cache.stats().redisErrors).toBe(0);
  });

  test("a value loaded by instance A is served to instance B from Redis without calling load", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    const b = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    await a.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
    const loader = counter<Token>(() => ({ id: "other", scope: "read_only" }));
    expect(await b.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
    expect(loader.calls).toBe(0);
    expect(b.peek("d1")).toEqual({ id: "tok_1", scope: "read_only" });
  });

  test("negative entries are shared through Redis: B answers null without calling load", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    const b = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    expect(await a.getOrLoad("garbage", async () => null)).toBeNull();
    const loader = counter<Token>(() => ({ id: "tok_1", scope: "read_only" }));
    expect(await b.getOrLoad("garbage", loader.load)).toBeNull();
    expect(loader.calls).toBe(0);
    expect(b.peek("garbage")).toBeNull();
    const ttl = await adminClient().pttl(`${keyPrefix}:tokens:garbage`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(OPTIONS.negativeTtlMs);
  });

  test("the Redis key is prefix:namespace:key, JSON, expiring maxAgeMs after its load started (ttlMs if shorter)", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix, maxAgeMs: 10_000 })).namespace<Token>("tokens", OPTIONS);
    await a.getOrLoad("d1", async () => {
      await Bun.sleep(300);
      return { id: "tok_1", scope: "read_only" };
    });
    const key = `${keyPrefix}:tokens:d1`;
    expect(JSON.parse(String(await adminClient().get(key)))).toEqual({ id: "tok_1", scope: "read_only" });
    const ttl = await adminClient().pttl(key);
    // The 300 ms the load took count against the entry's life.
    expect(ttl).toBeGreaterThan(5_000);
    expect(ttl).toBeLessThanOrEqual(9_700);
    const short = (await make({ keyPrefix, maxAgeMs: 10_000 })).namespace<Token>("short", { ...OPTIONS, ttlMs: 3_000 });
    await short.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
    expect(await adminClient().pttl(`${keyPrefix}:short:d1`)).toBeLessThanOrEqual(3_000);
  });

  test("an entry read back from Redis lives in L1 only as long as it still lives in Redis: refilling never extends its age", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix, maxAgeMs: 1_500 })).namespace<Token>("tokens", OPTIONS);
    const b = (await make({ keyPrefix, maxAgeMs: 1_500 })).namespace<Token>("tokens", OPTIONS);
    await a.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
    await Bun.sleep(1_000);
    const loader = counter<Token>(() => ({ id: "tok_1", scope: "from_load" }));
    expect(await b.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
    expect(loader.calls).toBe(0);
    expect(b.peek("d1")).toEqual({ id: "tok_1", scope: "read_only" });
    // A's load started 1.5 s ago by now: neither tier may still hold it.
    await Bun.sleep(600);
    expect(a.peek("d1")).toBeUndefined();
    expect(b.peek("d1")).toBeUndefined();
    expect(await b.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "from_load" });
    expect(loader.calls).toBe(1);
  });

  test("a hot key held in L1 is answered without a Redis round trip", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    await a.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
    // Were Redis consulted, this different value would come back.
    await adminClient().set(`${keyPrefix}:tokens:d1`, JSON.stringify({ id: "tok_1", scope: "from_redis" }));
    const loader = counter<Token>(() => ({ id: "tok_1", scope: "from_load" }));
    expect(await a.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
    expect(loader.calls).toBe(0);
  });

  test("L1 keeps an entry at most l1TtlMs; then it comes back from Redis, not from load", async () => {
    const clock = createClock();
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix, now: clock.now, l1TtlMs: 1_000 })).namespace<Token>("tokens", OPTIONS);
    await a.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
    clock.advance(1_000);
    expect(a.peek("d1")).toBeUndefined();
    const loader = counter<Token>(() => ({ id: "tok_1", scope: "from_load" }));
    expect(await a.getOrLoad("d1", loader.load)).toEqual({ id: "tok_1", scope: "read_only" });
    expect(loader.calls).toBe(0);
  });

  test("invalidate through A: by the time it resolves, B's peek no longer holds the key", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    const b = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    for (let i = 0; i < 25; i++) {
      const key = `d${i}`;
      await a.getOrLoad(key, async () => ({ id: key, scope: "read_write" }));
      await b.getOrLoad(key, async () => ({ id: key, scope: "read_write" }));
      expect(b.peek(key)).toEqual({ id: key, scope: "read_write" });
      await a.invalidate(key);
      // Checked synchronously after the await: no time for a late message to sneak in.
      expect(b.peek(key)).toBeUndefined();
      expect(a.peek(key)).toBeUndefined();
    }
    expect(await b.getOrLoad("d0", async () => ({ id: "d0", scope: "revoked" }))).toEqual({
      id: "d0",
      scope: "revoked",
    });
  });

  test("invalidate through A drops B's negative entry too (a created resource is seen at once)", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix })).namespace<Token>("services", OPTIONS);
    const b = (await make({ keyPrefix })).namespace<Token>("services", OPTIONS);
    await b.getOrLoad("svc", async () => null);
    await a.invalidate("svc");
    expect(b.peek("svc")).toBeUndefined();
    expect(await b.getOrLoad("svc", async () => ({ id: "svc", scope: "x" }))).toEqual({ id: "svc", scope: "x" });
  });

  test("stale fill race: B's load that read the store before A's invalidate is not left in Redis or in B", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    const b = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    const c = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    const storeRead = deferred<Token | null>();
    const loadStarted = deferred<void>();
    const pending = b.getOrLoad("d1", () => {
      loadStarted.resolve();
      return storeRead.promise;
    });
    await loadStarted.promise;
    // A revokes (store committed) and invalidates while B still holds the old row.
    await a.invalidate("d1");
    storeRead.resolve({ id: "tok_1", scope: "read_write" });
    expect(await pending).toEqual({ id: "tok_1", scope: "read_write" });
    expect(b.peek("d1")).toBeUndefined();
    // C has nothing in L1, so it would read B's fill from Redis if there were one.
    const fresh = counter<Token>(() => ({ id: "tok_1", scope: "revoked" }));
    expect(await c.getOrLoad("d1", fresh.load)).toEqual({ id: "tok_1", scope: "revoked" });
    expect(fresh.calls).toBe(1);
    expect(await b.getOrLoad("d1", async () => ({ id: "tok_1", scope: "revoked" }))).toEqual({
      id: "tok_1",
      scope: "revoked",
    });
  });

  test("a fill overtaken by a tombstone whose broadcast B missed is kept neither in Redis nor in B's L1", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    const b = (await make({ keyPrefix })).namespace<Token>("tokens", OPTIONS);
    // Learn the marker an invalidation leaves, on a key nobody uses.
    await a.invalidate("unused");
    const marker = await adminClient().get(`${keyPrefix}:tokens:unused`);
    expect(marker).not.toBeNull();
    const storeRead = deferred<Token | null>();
    const loadStarted = deferred<void>();
    const pending = b.getOrLoad("d1", () => {
      loadStarted.resolve();
      return storeRead.promise;
    });
    await loadStarted.promise;
    // The tombstone lands without any message reaching B.
    await adminClient().set(`${keyPrefix}:tokens:d1`, String(marker), "PX", 10_000);
    storeRead.resolve({ id: "tok_1", scope: "read_write" });
    await pending;
    expect(b.peek("d1")).toBeUndefined();
    expect(await adminClient().get(`${keyPrefix}:tokens:d1`)).toBe(marker);
  });

  test("once the tombstone lapses (tombstoneTtlMs), fills reach Redis again", async () => {
    const keyPrefix = newPrefix();
    const a = (await make({ keyPrefix, tombstoneTtlMs: 100 })).namespace<Token>("tokens", OPTIONS);
    await a.invalidate("d1");
    await Bun.sleep(150);
    await a.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_only" }));
    expect(JSON.parse(String(await adminClient().get(`${keyPrefix}:tokens:d1`)))).toEqual({
      id: "tok_1",
      scope: "read_only",
    });
  });

  test("an invalidation a subscribed instance does not acknowledge within ackTimeoutMs resolves only once maxAgeMs has passed", async () => {
    const keyPrefix = newPrefix();
    // A subscriber that hears invalidations and never acknowledges: a wedged instance.
    const deaf = new Redis(TEST_REDIS_URL);
    try {
      await deaf.subscribe(`${keyPrefix}:invalidate`);
      const cache = await make({ keyPrefix, ackTimeoutMs: 200, maxAgeMs: 700 });
      const a = cache.namespace<Token>("tokens", OPTIONS);
      const started = performance.now();
      await a.invalidate("d1");
      const elapsed = performance.now() - started;
      // By then no instance can hold an entry loaded before the call: they all expire at maxAgeMs.
      expect(elapsed).toBeGreaterThanOrEqual(690);
      expect(elapsed).toBeLessThan(2_000);
      expect(cache.stats().ackTimeouts).toBe(1);
    } finally {
      deaf.disconnect();
    }
  });

  test("Redis unreachable: getOrLoad loads (nothing kept in process while deaf), invalidate resolves after maxAgeMs, errors counted, no key or value logged", async () => {
    const lines: string[] = [];
    const started = performance.now();
    const cache = await make({
      url: "redis://127.0.0.1:1",
      maxAgeMs: 400,
      logger: createLogger((line) => lines.push(line)),
    });
    expect(performance.now() - started).toBeLessThan(3_000);
    const tokens = cache.namespace<Token>("tokens", OPTIONS);
    const loader = counter<Token>(() => ({ id: "tok_secretish", scope: "value-marker" }));
    expect(await tokens.getOrLoad("digest-marker", loader.load)).toEqual({
      id: "tok_secretish",
      scope: "value-marker",
    });
    expect(await tokens.getOrLoad("digest-marker", loader.load)).toEqual({
      id: "tok_secretish",
      scope: "value-marker",
    });
    // Another instance's revocation could not reach this one: every lookup reads the store.
    expect(loader.calls).toBe(2);
    expect(tokens.peek("digest-marker")).toBeUndefined();
    const invalidating = performance.now();
    await tokens.invalidate("digest-marker");
    const took = performance.now() - invalidating;
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(1_500);
    expect(tokens.peek("digest-marker")).toBeUndefined();
    expect(cache.stats().redisErrors).toBeGreaterThan(0);
    expect(lines.length).toBeGreaterThan(0);
    const log = lines.join("\n");
    expect(log).not.toContain("digest-marker");
    expect(log).not.toContain("value-marker");
    expect(log).not.toContain("tok_secretish");
  });

  test("while the invalidation channel is down nothing is served from process, not even what was loaded before", async () => {
    const upstream = new URL(TEST_REDIS_URL);
    const proxy = await startTcpProxy({ hostname: upstream.hostname, port: Number(upstream.port || 6379) });
    try {
      const cache = await make({ url: `redis://127.0.0.1:${proxy.port}`, maxAgeMs: 60_000 });
      const tokens = cache.namespace<Token>("tokens", OPTIONS);
      await tokens.getOrLoad("held", async () => ({ id: "tok_1", scope: "read_only" }));
      expect(tokens.peek("held")).toBeDefined();
      proxy.cut();
      // A revoking instance would no longer count this one as a receiver and answer at once:
      // this one must stop answering from its process tier as soon as it knows it is deaf.
      await eventually(() => tokens.peek("held") === undefined);
      const loader = counter<Token>(() => ({ id: "tok_1", scope: "from_load" }));
      expect(await tokens.getOrLoad("held", loader.load)).toEqual({ id: "tok_1", scope: "from_load" });
      expect(await tokens.getOrLoad("held", loader.load)).toEqual({ id: "tok_1", scope: "from_load" });
      expect(loader.calls).toBe(2);
      expect(tokens.peek("held")).toBeUndefined();
    } finally {
      proxy.close();
    }
  });

  test("a silently dropped link (blackhole) is noticed by the heartbeat: nothing served from process, Redis skipped, back after the heal", async () => {
    const upstream = new URL(TEST_REDIS_URL);
    const proxy = await startTcpProxy({ hostname: upstream.hostname, port: Number(upstream.port || 6379) });
    try {
      const cache = await make({ url: `redis://127.0.0.1:${proxy.port}`, maxAgeMs: 60_000 });
      const tokens = cache.namespace<Token>("tokens", OPTIONS);
      await tokens.getOrLoad("held", async () => ({ id: "tok_1", scope: "read_only" }));
      proxy.blackhole();
      // No close reaches the client; only the heartbeat (1 s + a 500 ms command timeout) can tell.
      await eventually(() => tokens.peek("held") === undefined, 5_000);
      // Both connections are pinged on the same beat; let the command connection's drop land too.
      await Bun.sleep(300);
      const loader = counter<Token>(() => ({ id: "tok_1", scope: "from_load" }));
      const started = performance.now();
      expect(await tokens.getOrLoad("held", loader.load)).toEqual({ id: "tok_1", scope: "from_load" });
      // The dropped connection is not ready: Redis is skipped, not waited for.
      expect(performance.now() - started).toBeLessThan(250);
      const resetsBefore = cache.stats().l1Resets;
      await proxy.restore();
      await eventually(() => cache.stats().l1Resets > resetsBefore, 10_000);
      await tokens.getOrLoad("again", async () => ({ id: "tok_2", scope: "read_only" }));
      expect(tokens.peek("again")).toBeDefined();
    } finally {
      proxy.close();
    }
  });

  test("Redis connections dropped mid-run: the cache keeps serving, and clears all of L1 once resubscribed", async () => {
    const keyPrefix = newPrefix();
    const lines: string[] = [];
    const cache = await make({ keyPrefix, maxAgeMs: 20_000, logger: createLogger((line) => lines.push(line)) });
    const tokens = cache.namespace<Token>("tokens", OPTIONS);
    await tokens.getOrLoad("held", async () => ({ id: "tok_1", scope: "value-marker" }));
    const resetsBefore = cache.stats().l1Resets;
    const ids = await clientIds(adminClient(), (name) => name.startsWith(keyPrefix));
    expect(ids.length).toBe(2);
    for (const id of ids) await adminClient().call("CLIENT", "KILL", "ID", id);

    const unreachableLoad = async (): Promise<Token | null> => {
      throw new Error("held must be served from a cache");
    };
    // Serving goes on whatever the connection state: from Redis, or from load.
    expect(await tokens.getOrLoad("new", async () => ({ id: "tok_2", scope: "read_only" }))).toEqual({
      id: "tok_2",
      scope: "read_only",
    });

    // "held" was never invalidated: it leaves L1 only because of the reconnection.
    await eventually(() => cache.stats().l1Resets > resetsBefore);
    expect(tokens.peek("held")).toBeUndefined();
    // And the shared tier comes back: the value is read from Redis, not from load.
    await eventually(async () => {
      const value = await tokens.getOrLoad("held", unreachableLoad).catch(() => undefined);
      return value?.scope === "value-marker";
    });
    expect(lines.join("\n")).not.toContain("value-marker");
  });

  test("an invalidation issued while the command connection is down is replayed once it is back", async () => {
    const keyPrefix = newPrefix();
    // B's L1 outlives the test, so only the replayed broadcast can empty it. A's maxAgeMs is
    // what its unconfirmed invalidate waits out.
    const a = await make({ keyPrefix, l1TtlMs: 60_000, maxAgeMs: 1_500 });
    const commandName = `${keyPrefix}:cmd`;
    const [commandId] = await clientIds(adminClient(), (name) => name === commandName);
    const aTokens = a.namespace<Token>("tokens", OPTIONS);
    const b = (await make({ keyPrefix, l1TtlMs: 60_000, maxAgeMs: 60_000 })).namespace<Token>("tokens", OPTIONS);
    await aTokens.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_write" }));
    await b.getOrLoad("d1", async () => ({ id: "tok_1", scope: "read_write" }));
    expect(commandId).toBeDefined();
    await adminClient().call("CLIENT", "KILL", "ID", String(commandId));
    await aTokens.invalidate("d1");
    // A local drop is immediate; B and Redis follow once A's command connection is back.
    expect(aTokens.peek("d1")).toBeUndefined();
    await eventually(async () => b.peek("d1") === undefined);
    await eventually(async () => (await adminClient().get(`${keyPrefix}:tokens:d1`))?.startsWith("{") === false);
  });
});
