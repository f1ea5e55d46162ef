/**
 * Which store and cache a test world runs on. `INTAKE_TEST_STACK` unset (or `sqlite-memory`):
 * in-memory SQLite and the memory cache. `postgres-redis`: a freshly created PostgreSQL
 * database (dropped when the world closes), the Redis cache under a random key prefix, and
 * a random pepper and secrets key, so that worlds running side by side share nothing.
 */
import { SQL } from "bun";
import type { Env } from "../../src/config.ts";
import { FAST_TIER, serviceAvailable, TEST_POSTGRES_URL, TEST_REDIS_URL } from "./services.ts";

export type TestStack = "sqlite-memory" | "postgres-redis";

export function testStack(env: Env = process.env): TestStack {
  const raw = env.INTAKE_TEST_STACK;
  if (raw === undefined || raw === "" || raw === "sqlite-memory") return "sqlite-memory";
  if (raw === "postgres-redis") return "postgres-redis";
  // A typo must not quietly run the default stack and report it as the other one.
  throw new Error(`INTAKE_TEST_STACK must be sqlite-memory or postgres-redis (got "${raw}")`);
}

/** The test server's URL pointed at another database. */
export function postgresUrlFor(database: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

let admin: SQL | undefined;
/**
 * One small pool for CREATE/DROP DATABASE, shared by every world of the process. Idle
 * connections close on their own so a finished test run is not held open by them.
 */
function adminSql(): SQL {
  admin ??= new SQL(TEST_POSTGRES_URL, { max: 2, idleTimeout: 2, connectionTimeout: 5 });
  return admin;
}

export interface TestDatabase {
  name: string;
  url: string;
  /** Drops it, closing whatever connections are still open on it. */
  drop(): Promise<void>;
}

/**
 * A database of its own: drizzle-kit's migrations name the "public" schema, so a schema
 * per world would not isolate worlds; a database does.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `intake_test_${crypto.randomUUID().replaceAll("-", "")}`;
  await adminSql().unsafe(`create database "${name}"`);
  let dropped = false;
  return {
    name,
    url: postgresUrlFor(name),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await adminSql().unsafe(`drop database if exists "${name}" with (force)`);
    },
  };
}

/** A key prefix no other world or test uses. */
export function randomRedisPrefix(): string {
  return `intake_test_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** Deletes every key a test left under its prefix (L2 entries and tombstones). */
export async function dropRedisKeys(
  redis: { keys(pattern: string): Promise<string[]>; del(...keys: string[]): Promise<number> },
  prefix: string,
): Promise<void> {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
}

/** Pepper and secrets key as the environment carries them; random per call. */
export function randomKeyEnv(): { INTAKE_TOKEN_PEPPER: string; INTAKE_SECRETS_KEY: string } {
  const b64 = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  return { INTAKE_TOKEN_PEPPER: b64(), INTAKE_SECRETS_KEY: b64() };
}

export interface StackResources {
  stack: TestStack;
  /** Environment to build the world's config from (the test's own env goes on top). */
  env: Env;
  /** Frees what `acquireStack` made; call after the app has closed. */
  release(): Promise<void>;
}

export async function acquireStack(stack: TestStack = testStack()): Promise<StackResources> {
  if (stack === "sqlite-memory") {
    return { stack, env: { DATABASE_URL: "sqlite::memory:" }, release: async () => {} };
  }
  if (FAST_TIER) throw new Error("INTAKE_TEST_STACK=postgres-redis is not for the fast tier: run `bun run test`");
  for (const service of ["postgres", "redis"] as const) {
    // The caller asked for this stack explicitly: a missing server is a failure, not a skip.
    if (!(await serviceAvailable(service))) {
      throw new Error(`INTAKE_TEST_STACK=postgres-redis but ${service} does not answer`);
    }
  }
  const database = await createTestDatabase();
  return {
    stack,
    env: {
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      INTAKE_REDIS_KEY_PREFIX: randomRedisPrefix(),
      ...randomKeyEnv(),
    },
    release: () => database.drop(),
  };
}
