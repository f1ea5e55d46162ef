/**
 * The floor for scenarios 3 and 4: the least work any server must do to answer a signed ingest
 * the way the contract requires, on a bare `Bun.serve`: read the body, verify its Stripe v1
 * signature, check that it is a UTF-8 JSON object, and answer 202 only once it is committed,
 * in groups. Each step is Intake's own function for it (the domain's `verifySignature` and
 * `checkPayload`, the group committer, the store adapter — SQLite: the writer worker, FULL
 * sync; PostgreSQL: the unnest batch insert); nothing else of Intake: no routing, service
 * lookup, cache, secret sealing, protobuf, ids or framework.
 * Any path; one service, fixed at start.
 *
 * Usage: PORT=<port> FLOOR_DATABASE=<sqlite file path | postgres://…> FLOOR_SERVICE_ID=<32 hex> \
 *   FLOOR_SECRET=whsec_… bun bench/floor-ingest.ts
 * The database must already hold Intake's tables and the service (the bench points it at the
 * database of the Intake it is compared with; the two run one after the other, never at once).
 */
import { createGroupCommitter } from "../src/domain/group-commit.ts";
import { checkPayload } from "../src/domain/ingest.ts";
import type { InsertEventResult, NewEvent } from "../src/domain/ports/store.ts";
import { verifySignature } from "../src/domain/signing.ts";
import { createPostgresStore } from "../src/store/postgres/store.ts";
import { createSqliteStore } from "../src/store/sqlite/store.ts";
import { BENCH_TOLERANCE_SECONDS } from "./lib/intake.ts";
import { requiredEnv } from "./lib/procs.ts";

const port = Number(process.env.PORT ?? "0");
const serviceId = requiredEnv("FLOOR_SERVICE_ID");
const secrets = [requiredEnv("FLOOR_SECRET")];
// The pool's requests are signed once, before the load: the same raised tolerance as Intake's.
const TOLERANCE_SECONDS = Number(BENCH_TOLERANCE_SECONDS);
const database = requiredEnv("FLOOR_DATABASE");
const store = database.startsWith("postgres")
  ? createPostgresStore({ url: database })
  : createSqliteStore({ path: database });
await store.migrate(); // already applied by Intake: a no-op that readies the store's statements
// The feed places each event in its tenant's order, as Intake's ingest does.
const tenantId = (await store.services.getById(serviceId))?.tenantId;
if (tenantId === undefined) throw new Error(`FLOOR_SERVICE_ID ${serviceId}: no such service`);
const committer = createGroupCommitter<NewEvent, InsertEventResult>({
  maxBatch: 256,
  maxDelayMs: 1,
  flush: (events) => store.events.insertBatch(events),
});
const headers = { "content-type": "application/json; charset=utf-8" };

function isJsonObject(body: Uint8Array): boolean {
  try {
    checkPayload(body);
    return true;
  } catch {
    return false;
  }
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  // As Intake's listener (src/serve.ts): production mode whatever NODE_ENV says.
  development: false,
  async fetch(request) {
    if (request.method !== "POST") return new Response('{"status":"ok"}', { headers }); // readiness
    const payload = new Uint8Array(await request.arrayBuffer());
    const signature = request.headers.get("x-service-signature");
    const now = Date.now();
    if (!verifySignature(signature, payload, secrets, Math.floor(now / 1000), TOLERANCE_SECONDS).ok) {
      return new Response(null, { status: 401 });
    }
    if (!isJsonObject(payload)) return new Response(null, { status: 400 });
    const id = Bun.randomUUIDv7().replaceAll("-", "");
    await committer.submit({ id, tenantId, serviceId, receivedAt: now, idempotencyKey: null, payload });
    return new Response(JSON.stringify({ id: `evt_${id}`, received_at: new Date(now).toISOString() }), {
      status: 202,
      headers,
    });
  },
});

process.stdout.write(`ingest floor listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  void committer
    .drain()
    .then(() => store.close())
    .finally(() => process.exit(0));
});
