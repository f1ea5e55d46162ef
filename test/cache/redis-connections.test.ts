/**
 * One instance, one pair of Redis connections: the cache, the rate limiter and the feed
 * notifier share a command connection and a subscriber (src/redis/connection.ts), opened and
 * closed once by the composition root. Runs on PostgreSQL + Redis whenever both answer.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { type App, createApp } from "../../src/app.ts";
import { loadKeyMaterial, parseConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { acquireStack, dropRedisKeys } from "../support/stack.ts";

const ok = (await serviceAvailable("redis")) && (await serviceAvailable("postgres"));

/** Redis's view of the connections whose CLIENT SETNAME starts with the prefix. */
async function named(admin: Redis, prefix: string): Promise<Array<{ name: string; sub: number }>> {
  const list = String(await admin.call("CLIENT", "LIST"));
  return list
    .split("\n")
    .map((line) => ({ name: /(?:^| )name=(\S*)/.exec(line)?.[1] ?? "", sub: Number(/ sub=(\d+)/.exec(line)?.[1]) }))
    .filter((client) => client.name.startsWith(`${prefix}:`));
}

describe.skipIf(!ok)("Redis connections of an instance (postgres-redis)", () => {
  const admin = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  afterAll(() => admin.disconnect());

  test("an instance opens at most 2 Redis connections, shared by cache, limiter and notifier, and closes them", async () => {
    const stack = await acquireStack("postgres-redis");
    const config = parseConfig({ ...stack.env, INTAKE_GRPC_PORT: "0", INTAKE_RATE_LIMIT_API: "100/60s" });
    const prefix = config.redisKeyPrefix;
    let app: App | undefined;
    try {
      app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
      const { token } = await app.domain.onboarding.bootstrapTenant({ name: "Acme", permissionMode: "flat" });
      // The cache (token, tenant) and the limiter (INTAKE_RATE_LIMIT_API) do their work; the
      // notifier subscribed when it was built.
      const res = await app.fetch(
        new Request("http://intake.test/v1/tenant", { headers: { authorization: `Bearer ${token}` } }),
      );
      expect(res.status).toBe(200);

      const clients = await named(admin, prefix);
      expect(clients.map((c) => c.name).sort()).toEqual([`${prefix}:cmd`, `${prefix}:sub`]);
      // The subscriber carries the cache's two channels and the notifier's feed channel.
      expect(clients.find((c) => c.name === `${prefix}:sub`)?.sub).toBe(3);
      expect(await admin.call("PUBSUB", "NUMSUB", `${prefix}:feed`)).toEqual([`${prefix}:feed`, 1]);
      // The limiter decided through Redis: its window is there.
      expect((await admin.keys(`${prefix}:rl:*`)).length).toBeGreaterThan(0);

      await app.close();
      app = undefined;
      expect(await named(admin, prefix)).toEqual([]);
    } finally {
      await app?.close();
      await dropRedisKeys(admin, prefix);
      await stack.release();
    }
  });
});
