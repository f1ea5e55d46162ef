import { afterAll, describe, expect, test } from "bun:test";
import { Redis } from "ioredis";
import { createApp } from "../../src/app.ts";
import { ConfigError, loadKeyMaterial, parseConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { dropRedisKeys } from "../support/stack.ts";

describe("INTAKE_REDIS_KEY_PREFIX", () => {
  test("defaults to intake and is read from the environment", () => {
    expect(parseConfig({}).redisKeyPrefix).toBe("intake");
    expect(parseConfig({ INTAKE_REDIS_KEY_PREFIX: "acme-prod" }).redisKeyPrefix).toBe("acme-prod");
  });

  test("a prefix that would break keys or glob patterns is a config error naming the variable", () => {
    for (const bad of ["has space", "star*", "x".repeat(65)]) {
      const error = (() => {
        try {
          parseConfig({ INTAKE_REDIS_KEY_PREFIX: bad });
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join("\n")).toContain("INTAKE_REDIS_KEY_PREFIX");
    }
  });
});

const ok = await serviceAvailable("redis");

describe.skipIf(!ok)("INTAKE_REDIS_KEY_PREFIX with Redis", () => {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  afterAll(() => redis.disconnect());

  test("the app's cache writes its keys under the configured prefix only", async () => {
    const prefix = `intake_test_${crypto.randomUUID().replaceAll("-", "")}`;
    const config = parseConfig({
      DATABASE_URL: "sqlite::memory:",
      INTAKE_GRPC_PORT: "0",
      REDIS_URL: TEST_REDIS_URL,
      INTAKE_REDIS_KEY_PREFIX: prefix,
    });
    const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
    try {
      const boot = await app.domain.onboarding.bootstrapTenant({ name: "Acme", permissionMode: "role_based" });
      const res = await app.fetch(
        new Request("http://intake.test/v1/tenant", { headers: { authorization: `Bearer ${boot.token}` } }),
      );
      expect(res.status).toBe(200);
      // The token lookup and the tenant read filled L2: one key each under our prefix, by namespace.
      const keys = (await redis.keys(`${prefix}:*`)).map((k) => k.slice(prefix.length).replace(/:[^:]+$/, ":…"));
      expect(keys.sort()).toEqual([":tnt:…", ":tok:…"]);
    } finally {
      await app.close();
      await dropRedisKeys(redis, prefix);
    }
  });
});
