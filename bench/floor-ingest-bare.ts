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
 * the trigram tokenizer over the payloads (external content, filled by an insert trigger; on
 * PostgreSQL pg_trgm's GIN index over the payload as text), the floor of scenario 18's
 * search-on goal.
 *
 * With FLOOR_ALERTS=1 it also does the least §17 work for a body with a top-level `event_action`
 * (scenario 15's floor): take `event_action`, `dedup_key` and `payload.{severity,summary,source}`
 * from the parsed body, and in the batch's transaction read the key's open incident the first
 * time the batch meets the key (the batch's own state of it after that), apply the rules, write
 * the event with its `incident_id`, a change row (with the incident after it, for the stream)
 * when opened, acknowledged, resolved or severity raised, and each touched incident once at the
 * end (a join sets only what moved). Indexes: one open incident per (service, key), unique; an
 * incident's timeline `(incident_id, id)` over alert events; the change stream's
 * `(tenant_id, position)`. No list filters' indexes, no foreign keys, no checks on the fields:
 * less than §17 asks, so what this floor misses, no implementation meets. The 202 adds
 * `dedup_key` and `incident_id`.
 *
 * With FLOOR_DATABASE_URL (an empty PostgreSQL database) it writes there instead, through Bun's
 * SQL client on one connection: the same tables and indexes (`incidents` with fillfactor 50, so
 * a join can be a HOT update), a batch one INSERT over column arrays (`unnest`, the payloads as
 * one `bytea` cut apart by offset), autocommitted; with alerts, one read of the batch's keys'
 * open incidents first, then one INSERT whose CTEs write the incidents (an upsert on the primary
 * key) and the change rows. One writer, so no lock and no explicit transaction.
 *
 * Usage: PORT=<port> FLOOR_DATABASE=<new sqlite file> | FLOOR_DATABASE_URL=<postgres url> \
 *   FLOOR_SERVICE_ID=svc_<32 hex> FLOOR_SECRET=whsec_… [FLOOR_TOLERANCE_SECONDS=86400] \
 *   [FLOOR_FTS=1] [FLOOR_ALERTS=1] bun bench/floor-ingest-bare.ts
 */
import { Database } from "bun:sqlite";
import { timingSafeEqual } from "node:crypto";
import { SQL } from "bun";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`floor-ingest-bare: ${name} is required`);
  return value;
}

const port = Number(process.env.PORT ?? "0");
const toleranceSeconds = Number(process.env.FLOOR_TOLERANCE_SECONDS ?? "86400");
const MAX_BATCH = 256;

const postgresUrl = process.env.FLOOR_DATABASE_URL;
// With FLOOR_DATABASE_URL the SQLite statements below are prepared on an unused memory database.
const db = new Database(postgresUrl ? ":memory:" : required("FLOOR_DATABASE"), { create: true, readwrite: true });
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
const alerts = process.env.FLOOR_ALERTS === "1";
if (alerts) {
  db.exec("ALTER TABLE events ADD COLUMN incident_id TEXT");
  db.exec("CREATE INDEX events_timeline ON events (incident_id, id) WHERE incident_id IS NOT NULL");
  db.exec(`CREATE TABLE incidents (id TEXT PRIMARY KEY NOT NULL, tenant_id TEXT NOT NULL, service_id TEXT NOT NULL,
    dedup_key TEXT NOT NULL, status TEXT NOT NULL, severity TEXT NOT NULL, title TEXT NOT NULL, source TEXT NOT NULL,
    alert_count INTEGER NOT NULL, created_at INTEGER NOT NULL, last_event_at INTEGER NOT NULL,
    acknowledged_at INTEGER, resolved_at INTEGER, acknowledged_by TEXT, resolved_by TEXT)`);
  db.exec("CREATE UNIQUE INDEX incidents_open_key ON incidents (service_id, dedup_key) WHERE status <> 'resolved'");
  db.exec(`CREATE TABLE incident_changes (position INTEGER PRIMARY KEY NOT NULL, tenant_id TEXT NOT NULL,
    incident_id TEXT NOT NULL, change TEXT NOT NULL, occurred_at INTEGER NOT NULL, incident TEXT NOT NULL)`);
  db.exec("CREATE INDEX incident_changes_feed ON incident_changes (tenant_id, position)");
}
const COLUMNS =
  "id, tenant_id, service_id, dedup_key, status, severity, title, source, alert_count, created_at, last_event_at, acknowledged_at, resolved_at, acknowledged_by, resolved_by";
const q = (sql: string) => (alerts ? db.prepare(sql) : null);
const openByKey = q(`SELECT ${COLUMNS} FROM incidents WHERE service_id = ? AND dedup_key = ? AND status <> 'resolved'`);
const insertIncident = q(`INSERT INTO incidents (${COLUMNS}) VALUES (${COLUMNS.replace(/\w+/g, "?")})`);
const touch = q("UPDATE incidents SET alert_count = ?, last_event_at = ?, severity = ? WHERE id = ?");
const change = q(
  "UPDATE incidents SET alert_count = ?, last_event_at = ?, severity = ?, status = ?, acknowledged_at = ?, resolved_at = ?, acknowledged_by = ?, resolved_by = ? WHERE id = ?",
);
const insertChange = q(
  "INSERT INTO incident_changes (position, tenant_id, incident_id, change, occurred_at, incident) VALUES (?, ?, ?, ?, ?, ?)",
);
const insertLinked = q(
  "INSERT INTO events (id, service_id, tenant_id, received_at, idempotency_key, payload, position, incident_id) " +
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (service_id, idempotency_key) DO NOTHING RETURNING id",
);
let position = (db.query("SELECT coalesce(max(position), 0) AS p FROM events").get() as { p: number }).p;

interface Alert {
  action: string;
  key: string;
  severity: string;
  summary: string;
  source: string;
}
interface Incident {
  id: string;
  tenant_id: string;
  service_id: string;
  dedup_key: string;
  status: string;
  severity: string;
  title: string;
  source: string;
  alert_count: number;
  created_at: number;
  last_event_at: number;
  acknowledged_at: number | null;
  resolved_at: number | null;
  acknowledged_by: string | null;
  resolved_by: string | null;
}
/** An incident as the batch sees it, with its status as read from the file (null: new). */
type Seen = Incident & { stored: string | null };
type First = { id: string; received_at: number } | null;

interface Row {
  id: string;
  serviceId: string;
  tenantId: string;
  receivedAt: number;
  key: string | null;
  payload: Uint8Array;
  alert: Alert | null;
  incident: string | null; // set by the commit: the incident the alert event opened or changed
  done(first: First): void;
  fail(error: unknown): void;
}

const RANK: Record<string, number> = { info: 0, warning: 1, error: 2, critical: 3 };

/** §17's rules: the incident after `a` (a copy; null when nothing changes) and the change to stream. */
function apply(open: Seen | undefined, a: Alert, r: Row): [Seen | null, string | null] {
  const at = r.receivedAt;
  if (!open) {
    if (a.action !== "trigger") return [null, null];
    const id = Bun.randomUUIDv7().replaceAll("-", "");
    const none = { acknowledged_at: null, resolved_at: null, acknowledged_by: null, resolved_by: null };
    const head = { id, tenant_id: r.tenantId, service_id: r.serviceId, dedup_key: a.key, status: "triggered" };
    const body = { severity: a.severity, title: a.summary, source: a.source, alert_count: 1, created_at: at };
    return [{ ...head, ...body, last_event_at: at, ...none, stored: null }, "opened"];
  }
  const next = { ...open, alert_count: open.alert_count + 1, last_event_at: at };
  if (a.action === "trigger")
    return (RANK[a.severity] ?? 0) > (RANK[open.severity] ?? 0)
      ? [{ ...next, severity: a.severity }, "severity_raised"]
      : [next, null];
  if (a.action === "resolve") return [{ ...next, status: "resolved", resolved_at: at, resolved_by: r.id }, "resolved"];
  if (open.status === "acknowledged") return [next, null];
  return [{ ...next, status: "acknowledged", acknowledged_at: at, acknowledged_by: r.id }, "acknowledged"];
}

/** Each alert event's effect is decided before its row goes in and kept only if the row went in. */
function commitAlerts(batch: Row[]): First[] {
  const open = new Map<string, Seen | undefined>(); // per key: its open incident as of this event
  const touched = new Map<string, Seen>();
  const firsts = batch.map((r) => {
    let [incident, changed]: [Seen | null, string | null] = [null, null];
    if (r.alert) {
      if (!open.has(r.alert.key)) {
        const stored = openByKey?.get(r.serviceId, r.alert.key) as Incident | null;
        open.set(r.alert.key, stored ? { ...stored, stored: stored.status } : undefined);
      }
      [incident, changed] = apply(open.get(r.alert.key), r.alert, r);
    }
    const at = position + 1;
    if (!insertLinked?.get(r.id, r.serviceId, r.tenantId, r.receivedAt, r.key, r.payload, at, incident?.id ?? null))
      return r.key === null ? null : prior.get(r.serviceId, r.key);
    position++;
    if (!r.alert || !incident) return null;
    r.incident = incident.id;
    open.set(r.alert.key, incident.status === "resolved" ? undefined : incident);
    touched.set(incident.id, incident);
    if (changed) {
      const { stored: _, ...record } = incident;
      insertChange?.run(++position, r.tenantId, incident.id, changed, r.receivedAt, JSON.stringify(record));
    }
    return null;
  });
  // Stored incidents first: one resolved here frees its key for one opened in this batch.
  for (const i of touched.values()) {
    if (i.stored === i.status) touch?.run(i.alert_count, i.last_event_at, i.severity, i.id);
    else if (i.stored !== null) {
      const { acknowledged_at, resolved_at, acknowledged_by, resolved_by } = i;
      const fields = [i.alert_count, i.last_event_at, i.severity, i.status] as const;
      change?.run(...fields, acknowledged_at, resolved_at, acknowledged_by, resolved_by, i.id);
    }
  }
  for (const { stored, ...i } of touched.values()) if (stored === null) insertIncident?.run(...Object.values(i));
  return firsts;
}

const commit = db.transaction((batch: Row[]): First[] =>
  alerts
    ? commitAlerts(batch)
    : batch.map((r) => {
        if (insert.get(r.id, r.serviceId, r.tenantId, r.receivedAt, r.key, r.payload, position + 1)) {
          position++;
          return null;
        }
        return r.key === null ? null : prior.get(r.serviceId, r.key);
      }),
);

/** The same on PostgreSQL: duplicates found first, then one INSERT (with alerts: a read first). */
async function postgresCommit(url: string): Promise<(batch: Row[]) => Promise<First[]>> {
  const sql = new SQL({ url, max: 1 });
  await sql.unsafe(`create table events (id text primary key, service_id text not null, tenant_id text not null,
      received_at bigint not null, idempotency_key text, payload bytea not null, position bigint not null, incident_id text);
    create unique index events_idempotency on events (service_id, idempotency_key);
    create index events_service_newest on events (service_id, id);
    create index events_feed on events (tenant_id, position);
    create index events_timeline on events (incident_id, id) where incident_id is not null;
    create table incidents (id text primary key, tenant_id text not null, service_id text not null, dedup_key text not null,
      status text not null, severity text not null, title text not null, source text not null, alert_count int not null,
      created_at bigint not null, last_event_at bigint not null, acknowledged_at bigint, resolved_at bigint,
      acknowledged_by text, resolved_by text) with (fillfactor = 50);
    create unique index incidents_open_key on incidents (service_id, dedup_key) where status <> 'resolved';
    create table incident_changes (position bigint primary key, tenant_id text not null, incident_id text not null,
      change text not null, occurred_at bigint not null, incident text not null);
    create index incident_changes_feed on incident_changes (tenant_id, position);`);
  const arrays = (types: string, from: number) =>
    types
      .split(" ")
      .map((t, i) => `$${from + i}::${t}[]`)
      .join(", ");
  const insertEvents =
    "insert into events (id, service_id, tenant_id, received_at, idempotency_key, payload, position, incident_id) " +
    "select u.id, u.s, u.t, u.r, u.k, substring($10::bytea from u.o + 1 for u.l), u.p, u.i " +
    `from unnest(${arrays("text text text bigint text int int bigint text", 1)}) as u(id, s, t, r, k, o, l, p, i)`;
  const incidentTypes = "text text text text text text text text int bigint bigint bigint bigint text text";
  const moved = "alert_count last_event_at severity status acknowledged_at resolved_at acknowledged_by resolved_by";
  const insertAlerts =
    `with i as (insert into incidents (${COLUMNS}) select * from unnest(${arrays(incidentTypes, 11)}) on conflict (id) ` +
    `do update set ${moved
      .split(" ")
      .map((c) => `${c} = excluded.${c}`)
      .join(", ")}), ` +
    "c as (insert into incident_changes (position, tenant_id, incident_id, change, occurred_at, incident) " +
    `select * from unnest(${arrays("bigint text text text bigint text", 26)})) ${insertEvents}`;
  const priors =
    "select id, idempotency_key, received_at from events where service_id = $1 and idempotency_key = any($2)";
  // A probe of incidents_open_key per key, whatever the statistics (a LATERAL subquery with a LIMIT
  // is not flattened into a join, which on a fresh table's few thousand rows became a seq scan).
  const openOf =
    "select i.* from unnest($2::text[]) as k(key) cross join lateral (select * from incidents " +
    "where service_id = $1 and dedup_key = k.key and status <> 'resolved' limit 1) i";
  /** Appends one row's values to column arrays. */
  const put = (columns: unknown[][], values: unknown[]) => {
    for (let c = 0; c < values.length; c++) columns[c]?.push(values[c]);
  };
  if (process.env.FLOOR_FTS === "1") {
    // §18's payload index as the least code keeps it: pg_trgm's GIN index over the payload as text.
    await sql.unsafe(`create extension if not exists pg_trgm;
      create function floor_payload_text(b bytea) returns text language sql immutable strict
        as $$ select convert_from(b, 'UTF8') $$;
      create index events_payload_trgm on events using gin (floor_payload_text(payload) gin_trgm_ops);`);
  }
  const row = await sql.unsafe("select coalesce(max(position), 0)::float8 as p from events");
  position = row[0].p;
  return async (batch) => {
    const firsts: First[] = batch.map(() => null);
    const seen = new Map<string, { id: string; received_at: number }>();
    const keys = batch.flatMap((r) => (r.key === null ? [] : [r.key]));
    const serviceId = batch[0]?.serviceId ?? ""; // one service (the Map above)
    if (keys.length > 0)
      for (const p of await sql.unsafe(priors, [serviceId, keys]))
        seen.set(p.idempotency_key, { id: p.id, received_at: Number(p.received_at) });
    const going = batch.filter((r, i) => {
      const first = r.key === null ? undefined : seen.get(r.key);
      if (first) firsts[i] = first;
      else if (r.key !== null) seen.set(r.key, { id: r.id, received_at: r.receivedAt });
      return !first;
    });
    const open = new Map<string, Seen | undefined>();
    const alertKeys = [...new Set(going.flatMap((r) => (r.alert ? [r.alert.key] : [])))];
    if (alertKeys.length > 0)
      for (const i of (await sql.unsafe(openOf, [serviceId, alertKeys])) as Incident[])
        open.set(i.dedup_key, { ...i, alert_count: Number(i.alert_count), stored: i.status });
    const touched = new Map<string, Seen>();
    const changes: unknown[][] = [[], [], [], [], [], []];
    const ev: unknown[][] = [[], [], [], [], [], [], [], [], []];
    let offset = 0;
    for (const r of going) {
      const [incident, changed] = r.alert ? apply(open.get(r.alert.key), r.alert, r) : [null, null];
      const values = [r.id, r.serviceId, r.tenantId, r.receivedAt, r.key, offset, r.payload.byteLength, ++position];
      put(ev, [...values, incident?.id ?? null]);
      offset += r.payload.byteLength;
      if (!r.alert || !incident) continue;
      r.incident = incident.id;
      open.set(r.alert.key, incident.status === "resolved" ? undefined : incident);
      touched.set(incident.id, incident);
      const { stored: _, ...record } = incident;
      if (changed) put(changes, [++position, r.tenantId, incident.id, changed, r.receivedAt, JSON.stringify(record)]);
    }
    if (going.length === 0) return firsts;
    const payloads = Buffer.concat(going.map((r) => r.payload));
    if (!alerts) await sql.unsafe(insertEvents, [...ev, payloads]);
    else {
      // Stored incidents first: one resolved here frees its key for one opened in this batch.
      const ordered = [...touched.values()].sort((a, b) => Number(a.stored === null) - Number(b.stored === null));
      const incidents = COLUMNS.split(", ").map((c) => ordered.map((i) => i[c as keyof Incident]));
      await sql.unsafe(insertAlerts, [...ev, payloads, ...incidents, ...changes]);
    }
    return firsts;
  };
}
const commitBatch: (batch: Row[]) => First[] | Promise<First[]> = postgresUrl
  ? await postgresCommit(postgresUrl)
  : (batch) => commit.immediate(batch);

let queue: Row[] = [];
let scheduled = false;

let flushing = false;

/** Commits the queue in batches, one at a time (on PostgreSQL, one in flight). */
async function flush(): Promise<void> {
  scheduled = false;
  if (flushing) return;
  flushing = true;
  while (queue.length > 0) {
    const batch = queue.length <= MAX_BATCH ? queue : queue.slice(0, MAX_BATCH);
    queue = queue.length <= MAX_BATCH ? [] : queue.slice(MAX_BATCH);
    const before = position;
    try {
      const committed = commitBatch(batch);
      const firsts = committed instanceof Promise ? await committed : committed;
      batch.forEach((r, i) => {
        r.done(firsts[i] ?? null);
      });
    } catch (error) {
      position = before;
      for (const r of batch) {
        r.incident = null;
        r.fail(error);
      }
    }
  }
  flushing = false;
}

/** Queues `row` (the commit sets its `incident`) and resolves after its commit. */
function enqueue(row: Omit<Row, "done" | "fail">): Promise<First> {
  return new Promise((done, fail) => {
    queue.push(Object.assign(row, { done, fail }));
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => void flush());
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

/** The body as a JSON object, or null. */
function jsonObject(body: Uint8Array): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(utf8.decode(body));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** An alert event's fields (FLOOR_ALERTS=1), a trigger without a key keyed by its event id; else null. */
function alertOf(value: Record<string, unknown>, id: string): Alert | null {
  if (!alerts || typeof value.event_action !== "string") return null;
  const p = (typeof value.payload === "object" && value.payload !== null ? value.payload : {}) as Record<
    string,
    unknown
  >;
  const text = (v: unknown) => (typeof v === "string" ? v : "");
  const key = text(value.dedup_key) || `evt_${id}`;
  return {
    action: value.event_action,
    key,
    severity: text(p.severity),
    summary: text(p.summary),
    source: text(p.source),
  };
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
    const value = jsonObject(body);
    if (value === null) return refuse(400);
    const id = Bun.randomUUIDv7().replaceAll("-", "");
    const alert = alertOf(value, id);
    const row = {
      id,
      serviceId: url.slice(url.lastIndexOf("/") + 1),
      tenantId: service.tenantId,
      receivedAt: now,
      key: request.headers.get("idempotency-key"),
      payload: body,
      alert,
      incident: null as string | null,
    };
    const first = await enqueue(row);
    if (first) {
      const answer = { id: `evt_${first.id}`, received_at: new Date(first.received_at).toISOString(), duplicate: true };
      return new Response(JSON.stringify(answer), { status: 200, headers: JSON_HEADERS });
    }
    const answer = { id: `evt_${id}`, received_at: new Date(now).toISOString() };
    if (alert) Object.assign(answer, { dedup_key: alert.key, incident_id: row.incident && `inc_${row.incident}` });
    return new Response(JSON.stringify(answer), { status: 202, headers: JSON_HEADERS });
  },
});

process.stdout.write(`independent ingest floor listening on ${server.url.href}\n`);
process.on("SIGTERM", () => {
  void server.stop(true);
  void flush();
  db.close();
  process.exit(0);
});
