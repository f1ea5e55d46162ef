/**
 * The feed paging floor (bench scenario 8): `GET /v1/feed?after=<cursor>&limit=<n>` answered
 * with ONE prepared statement over the same rows and the same bytes Intake writes
 * (bench/lib/feed-floor.ts), and nothing else: no authentication, no routing, no validation
 * beyond the numbers. On a SQLite file (bun:sqlite) or a PostgreSQL database (Bun's SQL client,
 * as Intake's PostgreSQL store).
 *
 * Usage: PORT=<port> FLOOR_TENANT_ID=<uuid> FLOOR_DATABASE=<sqlite file> bun bench/floor-feed.ts
 *        PORT=<port> FLOOR_TENANT_ID=<uuid> FLOOR_DATABASE_URL=<postgres://…> bun bench/floor-feed.ts
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { feedFloor, feedFloorPostgres } from "./lib/feed-floor.ts";
import { requiredEnv } from "./lib/procs.ts";

const port = Number(process.env.PORT ?? "0");
const tenantId = requiredEnv("FLOOR_TENANT_ID");
const url = process.env.FLOOR_DATABASE_URL;

let fetch: (request: Request) => Response | Promise<Response>;
let close: () => Promise<void>;
if (url) {
  const sql = new SQL({ url, prepare: true });
  fetch = feedFloorPostgres(sql, tenantId);
  close = () => sql.close();
} else {
  const db = new Database(requiredEnv("FLOOR_DATABASE"), { readonly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  fetch = feedFloor(db, tenantId);
  close = async () => db.close();
}

const server = Bun.serve({ port, hostname: "127.0.0.1", development: false, fetch });

process.stdout.write(`feed floor (${url ? "PostgreSQL" : "SQLite"}) listening on ${server.url.href}\n`);
process.on("SIGTERM", async () => {
  server.stop(true);
  await close();
  process.exit(0);
});
