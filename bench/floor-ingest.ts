/**
 * The floor for scenarios 3 and 4: the least work any server must do to answer a signed ingest
 * the way the SPEC requires, hand-written on a bare `Bun.serve`: read the body,
 * verify its Stripe v1 signature (one HMAC-SHA256 of `<t>.<body>` with the service's secret),
 * check that it is a UTF-8 JSON object, and answer 202 only once it is committed, in groups.
 * The commit uses Intake's own group committer and store adapter (SQLite: the writer worker,
 * FULL sync; PostgreSQL: the unnest batch insert), the fastest durable batch write we know;
 * nothing else of Intake: no routing, service lookup, caching, protobuf, ids or framework.
 * Any path; one service, fixed at start.
 *
 * Usage: PORT=<port> FLOOR_DATABASE=<sqlite file path | postgres://…> FLOOR_SERVICE_ID=<32 hex> \
 *   FLOOR_SECRET=whsec_… bun bench/floor-ingest.ts
 * The database must already hold Intake's tables and the service (the bench points it at the
 * database of the Intake it is compared with; the two run one after the other, never at once).
 */
import { timingSafeEqual } from "node:crypto";
import { createGroupCommitter } from "../src/domain/group-commit.ts";
import type { InsertEventResult, NewEvent } from "../src/store/ports.ts";
import { createPostgresStore } from "../src/store/postgres/store.ts";
import { createSqliteStore } from "../src/store/sqlite/store.ts";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const port = Number(process.env.PORT ?? "0");
const serviceId = required("FLOOR_SERVICE_ID");
const keyed = new Bun.CryptoHasher("sha256", required("FLOOR_SECRET"));
const database = required("FLOOR_DATABASE");
const store = database.startsWith("postgres")
  ? createPostgresStore({ url: database })
  : createSqliteStore({ path: database });
await store.migrate(); // already applied by Intake: a no-op that readies the store's statements
const committer = createGroupCommitter<NewEvent, InsertEventResult>({
  maxBatch: 256,
  maxDelayMs: 1,
  flush: (events) => store.events.insertBatch(events),
});
const utf8 = new TextDecoder("utf-8", { fatal: true });
const headers = { "content-type": "application/json; charset=utf-8" };

function verified(header: string, body: Uint8Array): boolean {
  let t = "";
  let v1 = "";
  for (const part of header.split(",")) {
    if (part.startsWith("t=")) t = part.slice(2);
    else if (part.startsWith("v1=")) v1 = part.slice(3);
  }
  const hasher = keyed.copy();
  hasher.update(`${t}.`);
  hasher.update(body);
  const expected = Buffer.from(hasher.digest("hex"));
  const given = Buffer.from(v1);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function isJsonObject(body: Uint8Array): boolean {
  try {
    const value: unknown = JSON.parse(utf8.decode(body));
    return typeof value === "object" && value !== null && !Array.isArray(value);
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
    if (!verified(request.headers.get("x-service-signature") ?? "", payload))
      return new Response(null, { status: 401 });
    if (!isJsonObject(payload)) return new Response(null, { status: 400 });
    const id = Bun.randomUUIDv7().replaceAll("-", "");
    const receivedAt = Date.now();
    await committer.submit({ id, serviceId, receivedAt, idempotencyKey: null, payload });
    return new Response(JSON.stringify({ id: `evt_${id}`, received_at: new Date(receivedAt).toISOString() }), {
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
