/**
 * `bun test/support/probe-services.ts`: exits 0 when both PostgreSQL and Redis answer at the
 * test URLs, else 1 after printing which do not. scripts/test.sh uses it to decide whether
 * the conformance pass on PostgreSQL + Redis can run; it never prints SKIP lines itself.
 */
import { probeService, TEST_POSTGRES_URL, TEST_REDIS_URL } from "./services.ts";

const missing: string[] = [];
if (!(await probeService("postgres"))) missing.push(`postgres at ${TEST_POSTGRES_URL}`);
if (!(await probeService("redis"))) missing.push(`redis at ${TEST_REDIS_URL}`);
if (missing.length > 0) {
  process.stdout.write(`no server answers: ${missing.join(", ")}\n`);
  process.exit(1);
}
process.exit(0);
