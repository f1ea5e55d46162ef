/**
 * Gates for the suites that need a real PostgreSQL or Redis. Where the server does not
 * answer, the suite is skipped with one printed line, or, with INTAKE_REQUIRE_SERVICES=1
 * (CI), the test file fails: a suite that must run never passes silently.
 *
 * The fast tier (`bun run test:fast`, INTAKE_TEST_TIER=fast; docs/testing.md) uses neither
 * server: every gate answers false there without connecting, so a suite that needs one is
 * skipped with one printed line, and a file that also covers an in-process adapter (the
 * memory rate limiter beside the Redis one) still runs that part.
 */
import { SQL } from "bun";
import Redis from "ioredis";

export const TEST_POSTGRES_URL = process.env.INTAKE_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const TEST_REDIS_URL = process.env.INTAKE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

const required = process.env.INTAKE_REQUIRE_SERVICES === "1";
/** `bun run test:fast`: no PostgreSQL, no Redis, whatever answers. */
export const FAST_TIER = process.env.INTAKE_TEST_TIER === "fast";
const probes = new Map<string, Promise<boolean>>();

async function probePostgres(): Promise<boolean> {
  const sql = new SQL(TEST_POSTGRES_URL, { max: 1, connectionTimeout: 2, idleTimeout: 1 });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.close().catch(() => {});
  }
}

async function probeRedis(): Promise<boolean> {
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** The bare probe: true when the server answers; prints nothing, never throws. */
export function probeService(name: "postgres" | "redis"): Promise<boolean> {
  return name === "postgres" ? probePostgres() : probeRedis();
}

/** True when the server answers. Prints the skip line once per process; throws when required. */
export function serviceAvailable(name: "postgres" | "redis"): Promise<boolean> {
  let probe = probes.get(name);
  if (!probe && FAST_TIER) {
    console.log(`SKIP: ${name} suites: the fast tier runs without PostgreSQL and Redis (bun run test has them)`);
    probe = Promise.resolve(false);
    probes.set(name, probe);
  }
  if (!probe) {
    const url = name === "postgres" ? TEST_POSTGRES_URL : TEST_REDIS_URL;
    probe = (name === "postgres" ? probePostgres() : probeRedis()).then((ok) => {
      if (!ok && required) {
        throw new Error(`INTAKE_REQUIRE_SERVICES=1 but ${name} does not answer at ${url}`);
      }
      if (!ok)
        console.log(
          `SKIP: ${name} suites: no server answers at ${url} (set INTAKE_REQUIRE_SERVICES=1 to fail instead)`,
        );
      return ok;
    });
    probes.set(name, probe);
  }
  return probe;
}
