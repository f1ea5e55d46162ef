/**
 * Scenario 3's independent floor: signed ingest on SQLite written from scratch, with none of
 * Intake's code (no domain function, store adapter, group committer or writer worker), so the
 * scenario can see what those cost. One Bun process, one thread:
 *
 * - read the body; look the service up by the path's last segment (a Map: one service);
 * - verify the Stripe v1 signature: `X-Service-Signature: t=<unix>,v1=<hex>`, HMAC-SHA256 keyed
 *   by the `whsec_` string over `<t>.<body>`, within the tolerance, constant-time compare;
 * - check that the body is a UTF-8 JSON object;
 * - queue the row; a flush scheduled with `setImmediate` inserts up to 256 queued rows per
 *   transaction (group commit) into a bun:sqlite file in WAL mode with `synchronous = FULL`,
 *   with the indexes the contract needs: per service newest first (service_id, id), the feed's
 *   order (tenant_id, position), idempotency keys (unique service_id, idempotency_key);
 * - answer 202 `{id, received_at}` after the commit (200 with the first event's id for a
 *   repeated Idempotency-Key).
 *
 * The commit runs on the event loop: while it fsyncs, no request is read. Positions come from
 * a counter in this process, the only writer of its file.
 *
 * With FLOOR_FTS=1 it also keeps §18's payload index as the least code would: an FTS5 table with
 * the trigram tokenizer over the payloads (external content, filled by an insert trigger), the
 * floor of scenario 18's search-on goal.
 *
 * Usage: PORT=<port> FLOOR_DATABASE=<new sqlite file> FLOOR_SERVICE_ID=svc_<32 hex> \
 *   FLOOR_SECRET=whsec_… [FLOOR_TOLERANCE_SECONDS=86400] [FLOOR_FTS=1] bun bench/floor-ingest-bare.ts
 */
import { Database } from "bun:sqlite";
import { timingSafeEqual } from "node:crypto";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`floor-ingest-bare: ${name} is required`);
  return value;
}

const port = Number(process.env.PORT ?? "0");
const toleranceSeconds = Number(process.env.FLOOR_TOLERANCE_SECONDS ?? "86400");
const MAX_BATCH = 256;

const db = new Database(required("FLOOR_DATABASE"), { create: true, readwrite: true });
db.exec("PRAGMA journal_mode = WAL");
db.exec("PRAGMA synchronous = FULL");
db.exec(`CREATE TABLE IF NOT EXISTS events (
  id TEXT PRIMARY KEY NOT NULL,
  service_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  idempotency_key TEXT,
  payload BLOB NOT NULL,
  position INTEGER NOT NULL
)`);
db.exec("CREATE UNIQUE INDEX IF NOT EXISTS events_idempotency ON events (service_id, idempotency_key)");
db.exec("CREATE INDEX IF NOT EXISTS events_service_newest ON events (service_id, id)");
db.exec("CREATE INDEX IF NOT EXISTS events_feed ON events (tenant_id, position)");
if (process.env.FLOOR_FTS === "1") {
  db.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(payload, content='events', content_rowid='rowid', " +
      "tokenize='trigram case_sensitive 0')",
  );
  db.exec(
    "CREATE TRIGGER IF NOT EXISTS events_fts_insert AFTER INSERT ON events BEGIN " +
      "INSERT INTO events_fts (rowid, payload) VALUES (new.rowid, new.payload); END",
  );
}

const insert = db.prepare<{ id: string }, [string, string, string, number, string | null, Uint8Array, number]>(
  "INSERT INTO events (id, service_id, tenant_id, received_at, idempotency_key, payload, position) " +
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (service_id, idempotency_key) DO NOTHING RETURNING id",
);
const prior = db.prepare<{ id: string; received_at: number }, [string, string]>(
  "SELECT id, received_at FROM events WHERE service_id = ? AND idempotency_key = ?",
);
let position = (db.query("SELECT coalesce(max(position), 0) AS p FROM events").get() as { p: number }).p;

interface Row {
  id: string;
  serviceId: string;
  tenantId: string;
  receivedAt: number;
  key: string | null;
  payload: Uint8Array;
  done(first: { id: string; received_at: number } | null): void;
  fail(error: unknown): void;
}

const commit = db.transaction((batch: Row[]) =>
  batch.map((r) => {
    if (insert.get(r.id, r.serviceId, r.tenantId, r.receivedAt, r.key, r.payload, position + 1)) {
      position++;
      return null;
    }
    return r.key === null ? null : prior.get(r.serviceId, r.key);
  }),
);

let queue: Row[] = [];
let scheduled = false;

function flush(): void {
  scheduled = false;
  while (queue.length > 0) {
    const batch = queue.length <= MAX_BATCH ? queue : queue.slice(0, MAX_BATCH);
    queue = queue.length <= MAX_BATCH ? [] : queue.slice(MAX_BATCH);
    const before = position;
    try {
      const firsts = commit.immediate(batch);
      batch.forEach((r, i) => {
        r.done(firsts[i] ?? null);
      });
    } catch (error) {
      position = before;
      for (const r of batch) r.fail(error);
    }
  }
}

function enqueue(row: Omit<Row, "done" | "fail">): Promise<{ id: string; received_at: number } | null> {
  return new Promise((done, fail) => {
    queue.push({ ...row, done, fail });
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
}

const services = new Map([[required("FLOOR_SERVICE_ID"), { secret: required("FLOOR_SECRET"), tenantId: "t1" }]]);
const SIGNATURE = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });
const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };
const refuse = (status: number) => new Response(null, { status });

function signed(header: string | null, body: Uint8Array, secret: string, nowSeconds: number): boolean {
  const m = header === null ? null : SIGNATURE.exec(header);
  if (!m) return false;
  const [, t = "", v1 = ""] = m;
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return false;
  const hmac = new Bun.CryptoHasher("sha256", secret);
  hmac.update(`${t}.`);
  hmac.update(body);
  return timingSafeEqual(Buffer.from(hmac.digest("hex"), "latin1"), Buffer.from(v1, "latin1"));
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
  development: false,
  async fetch(request) {
    if (request.method !== "POST") return new Response('{"status":"ok"}', { headers: JSON_HEADERS }); // readiness
    const url = request.url;
    const service = services.get(url.slice(url.lastIndexOf("/") + 1));
    const body = new Uint8Array(await request.arrayBuffer());
    const now = Date.now();
    if (!service || !signed(request.headers.get("x-service-signature"), body, service.secret, Math.floor(now / 1000)))
      return refuse(401);
    if (!isJsonObject(body)) return refuse(400);
    const id = Bun.randomUUIDv7().replaceAll("-", "");
    const first = await enqueue({
      id,
      serviceId: url.slice(url.lastIndexOf("/") + 1),
      tenantId: service.tenantId,
      receivedAt: now,
      key: request.headers.get("idempotency-key"),
      payload: body,
    });
    if (first) {
      const answer = { id: `evt_${first.id}`, received_at: new Date(first.received_at).toISOString(), duplicate: true };
      return new Response(JSON.stringify(answer), { status: 200, headers: JSON_HEADERS });
    }
    const answer = { id: `evt_${id}`, received_at: new Date(now).toISOString() };
    return new Response(JSON.stringify(answer), { status: 202, headers: JSON_HEADERS });
  },
});

process.stdout.write(`independent ingest floor listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  flush();
  db.close();
  process.exit(0);
});
