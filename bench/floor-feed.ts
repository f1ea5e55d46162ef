/**
 * The feed paging floor (bench scenario 8): `GET /v1/feed?after=<cursor>&limit=<n>` answered
 * with ONE prepared bun:sqlite statement over the same rows and the same bytes Intake writes
 * (bench/lib/feed-floor.ts), and nothing else: no authentication, no routing, no validation
 * beyond the numbers.
 *
 * Usage: PORT=<port> FLOOR_DATABASE=<sqlite file> FLOOR_TENANT_ID=<uuid> bun bench/floor-feed.ts
 */
import { Database } from "bun:sqlite";
import { feedFloor } from "./lib/feed-floor.ts";
import { requiredEnv } from "./lib/procs.ts";

const port = Number(process.env.PORT ?? "0");
const db = new Database(requiredEnv("FLOOR_DATABASE"), { readonly: true });
db.exec("PRAGMA busy_timeout = 5000");

const server = Bun.serve({
  port,
  hostname: "127.0.0.1",
  development: false,
  fetch: feedFloor(db, requiredEnv("FLOOR_TENANT_ID")),
});

process.stdout.write(`feed floor listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  db.close();
  process.exit(0);
});
