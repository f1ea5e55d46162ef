/**
 * One deployment of real `intake serve` processes, as the multi-instance end-to-end tests run
 * it: a fresh PostgreSQL database, a Redis key prefix and a pepper and secrets key of its own,
 * shared by every instance; the first tenant bootstrapped through the CLI (the operator's
 * path); instances started on it. `close()` stops its instances and drops its database and
 * Redis keys, for afterAll even when a test failed.
 */
import { Redis } from "ioredis";
import { type IntakeProcess, runCli, startIntake } from "./intake-process.ts";
import { TEST_REDIS_URL } from "./services.ts";
import { createTestDatabase, dropRedisKeys, randomKeyEnv, randomRedisPrefix, type TestDatabase } from "./stack.ts";

export interface DeploymentOptions {
  /** On top of the deployment's own variables, for the CLI and every instance (limits, windows). */
  env?: Record<string, string>;
  /**
   * REDIS_URL of every instance: the test Redis by default; a proxy in front of it; or null
   * for none, where each instance brings its own (`start(name, { REDIS_URL })`) or uses no Redis.
   */
  redisUrl?: string | null;
  /** The first tenant's name (`bootstrap --tenant-name`). */
  tenantName?: string;
}

/** What `intake bootstrap --json` prints. */
export interface Bootstrapped {
  tenant_id: string;
  token_id: string;
  token: string;
}

export interface Deployment {
  /** The variables every instance and the CLI get: DATABASE_URL, REDIS_URL, prefix, keys, options.env. */
  env: Record<string, string>;
  database: TestDatabase;
  /** INTAKE_REDIS_KEY_PREFIX: every key and channel of this deployment starts with `<prefix>:`. */
  prefix: string;
  /** The first tenant and its owner read_write token. */
  owner: Bootstrapped;
  /** `intake serve` on the deployment; `env` goes on top (an instance's own REDIS_URL or gRPC port). */
  start(name: string, env?: Record<string, string>): Promise<IntakeProcess>;
  /** `intake bootstrap` again: a new tenant, or another owner token of `tenantId`. */
  bootstrap(tenant: { name: string } | { tenantId: string }): Promise<Bootstrapped>;
  close(): Promise<void>;
}

export async function createDeployment(options: DeploymentOptions = {}): Promise<Deployment> {
  const database = await createTestDatabase();
  const prefix = randomRedisPrefix();
  const redisUrl = options.redisUrl === undefined ? TEST_REDIS_URL : options.redisUrl;
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    ...(redisUrl === null ? {} : { REDIS_URL: redisUrl }),
    INTAKE_REDIS_KEY_PREFIX: prefix,
    ...randomKeyEnv(),
    ...options.env,
  };
  const instances: IntakeProcess[] = [];

  async function bootstrap(tenant: { name: string } | { tenantId: string }): Promise<Bootstrapped> {
    const args = "name" in tenant ? ["--tenant-name", tenant.name] : ["--tenant-id", tenant.tenantId];
    return JSON.parse(await runCli(["bootstrap", ...args, "--json"], env)) as Bootstrapped;
  }

  async function close(): Promise<void> {
    await Promise.all(instances.splice(0).map((instance) => instance.stop()));
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    redis.on("error", () => {});
    try {
      await redis.connect();
      await dropRedisKeys(redis, prefix);
    } catch {
      // No Redis answering: this deployment left nothing there.
    } finally {
      redis.disconnect();
    }
    await database.drop();
  }

  let owner: Bootstrapped;
  try {
    // The CLI migrates the fresh database, then creates the tenant.
    owner = await bootstrap({ name: options.tenantName ?? "Acme" });
  } catch (error) {
    await database.drop();
    throw error;
  }
  return {
    env,
    database,
    prefix,
    owner,
    bootstrap,
    async start(name, extra = {}) {
      const instance = await startIntake(name, { ...env, ...extra });
      instances.push(instance);
      return instance;
    },
    close,
  };
}
