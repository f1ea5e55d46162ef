/**
 * The store-path floor of scenarios 3 and 4 (its handler: bench/lib/ingest-floor.ts) on a bare
 * `Bun.serve`: read the body, verify its Stripe v1 signature, check that it is a UTF-8 JSON
 * object, and answer 202 only once it is committed, in groups, through Intake's own group
 * committer and store adapter (SQLite: the writer worker, FULL sync; PostgreSQL: the unnest
 * batch insert).
 *
 * Usage: PORT=<port> FLOOR_DATABASE=<sqlite file path | postgres://…> FLOOR_SERVICE_ID=<32 hex> \
 *   FLOOR_SECRET=whsec_… bun bench/floor-ingest.ts
 * The database must already hold Intake's tables and the service. Scenario 3 gives it a SQLite
 * file of its own, bootstrapped by Intake, since it also runs beside Intake there; scenario 4
 * points it at the PostgreSQL database of the Intake it is compared with (one after the other).
 * Since it runs Intake's own store path, it cannot see what that path costs: scenario 3 also
 * runs the independent floor (bench/floor-ingest-bare.ts), and Intake against this one is what
 * the edge adds above the store.
 */
import { createPostgresStore } from "../src/store/postgres/store.ts";
import { createSqliteStore } from "../src/store/sqlite/store.ts";
import { ingestFloor } from "./lib/ingest-floor.ts";
import { BENCH_TOLERANCE_SECONDS } from "./lib/intake.ts";
import { requiredEnv } from "./lib/procs.ts";

const port = Number(process.env.PORT ?? "0");
const database = requiredEnv("FLOOR_DATABASE");
const store = database.startsWith("postgres")
  ? createPostgresStore({ url: database })
  : createSqliteStore({ path: database });
await store.migrate(); // already applied by Intake: a no-op that readies the store's statements
const floor = await ingestFloor({
  store,
  serviceId: requiredEnv("FLOOR_SERVICE_ID"),
  secret: requiredEnv("FLOOR_SECRET"),
  // The pool's requests are signed once, before the load: the same raised tolerance as Intake's.
  toleranceSeconds: Number(BENCH_TOLERANCE_SECONDS),
});

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  // As Intake's listener (src/serve.ts): production mode whatever NODE_ENV says.
  development: false,
  fetch: floor.fetch,
});

process.stdout.write(`ingest floor listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  void floor
    .drain()
    .then(() => store.close())
    .finally(() => process.exit(0));
});
