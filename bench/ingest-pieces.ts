/**
 * Where scenario 3's gap to its independent floor (bench/floor-ingest-bare.ts) goes, piece by
 * piece, in one process: batches of 256 signed-size events (1 KiB) committed one after another,
 * each way on a SQLite file of its own (WAL, synchronous = FULL), and for each the process's CPU
 * time per event (every thread: `process.cpuUsage`) and the wall time per batch.
 *
 * - bare: the independent floor's table (three indexes, no foreign key), in-thread.
 * - intake-insert: Intake's `createEventInsert` on Intake's schema (migrated), in-thread.
 * - intake-insert, no foreign-key / no service-position-index: the same without the events'
 *   foreign key check, or without the (service_id, position) index (the feed's service filter).
 * - intake-store: the store's `events.insertBatch` (the writer worker: each batch posted to it
 *   and its results posted back).
 * - intake-committer: the same through `createGroupCommitter` (one promise per event), as the
 *   ingest path submits events.
 *
 * Usage: bun bench/ingest-pieces.ts [batches=200] [rounds=3]
 */
import { Database } from "bun:sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGroupCommitter } from "../src/domain/group-commit.ts";
import type { InsertEventResult, NewEvent } from "../src/domain/ports/store.ts";
import { openDatabase } from "../src/store/sqlite/connection.ts";
import { createEventInsert } from "../src/store/sqlite/event-insert.ts";
import { createSqliteStore } from "../src/store/sqlite/store.ts";
import { bootstrap, makeKeys } from "./lib/intake.ts";
import { median } from "./lib/report.ts";
import { seedServices } from "./lib/seed.ts";

const BATCH = 256;
const batches = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
const dir = mkdtempSync(join(tmpdir(), "intake-pieces-"));
const payload = new Uint8Array(1024).fill(120);

function events(n: number): NewEvent[] {
  return Array.from({ length: n }, () => ({
    id: Bun.randomUUIDv7().replaceAll("-", ""),
    tenantId,
    serviceId,
    receivedAt: Date.now(),
    idempotencyKey: null,
    payload: payload.slice(),
  }));
}

const keys = makeKeys();
let tenantId = "";
let serviceId = "";

/** A bootstrapped Intake file (its CLI) with one seeded service, copied for each way. */
const base = await (async () => {
  const spec = { name: "base", dataDir: join(dir, "base"), keys };
  const boot = await bootstrap(spec);
  const path = join(spec.dataDir, "intake.sqlite");
  const seeded = seedServices({ path, tenantId: boot.tenantId, count: 1, secretsKey: keys.secretsKey });
  tenantId = boot.tenantId;
  serviceId = seeded.idsNewestFirst[0] as string;
  const db = new Database(path);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)"); // the copies take the main file only
  db.close();
  return path;
})();

function intakeFile(name: string): string {
  const path = join(dir, `${name}.sqlite`);
  copyFileSync(base, path);
  return path;
}

type Way = { name: string; commit(batch: NewEvent[]): Promise<unknown> | unknown; close(): Promise<void> | void };

async function bare(): Promise<Way> {
  const db = new Database(join(dir, "bare.sqlite"), { create: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec(
    "CREATE TABLE events (id TEXT PRIMARY KEY NOT NULL, service_id TEXT NOT NULL, tenant_id TEXT NOT NULL, received_at INTEGER NOT NULL, idempotency_key TEXT, payload BLOB NOT NULL, position INTEGER NOT NULL)",
  );
  db.exec("CREATE UNIQUE INDEX events_idempotency ON events (service_id, idempotency_key)");
  db.exec("CREATE INDEX events_service_newest ON events (service_id, id)");
  db.exec("CREATE INDEX events_feed ON events (tenant_id, position)");
  const insert = db.prepare(
    "INSERT INTO events (id, service_id, tenant_id, received_at, idempotency_key, payload, position) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (service_id, idempotency_key) DO NOTHING RETURNING id",
  );
  let position = 0;
  const tx = db.transaction((b: NewEvent[]) =>
    b.map((e) => insert.get(e.id, e.serviceId, e.tenantId, e.receivedAt, e.idempotencyKey, e.payload, ++position)),
  );
  return { name: "bare", commit: (b) => tx.immediate(b), close: () => db.close() };
}

async function intakeInsert(): Promise<Way> {
  const db = openDatabase(intakeFile("insert"));
  const insertAll = createEventInsert(db);
  return { name: "intake-insert", commit: (b) => insertAll(b), close: () => db.close() };
}

/** Intake's insert with one thing of its schema taken away: what that thing costs. */
function intakeInsertWithout(what: "foreign-key" | "service-position-index"): Way {
  const db = openDatabase(intakeFile(`insert-${what}`));
  if (what === "foreign-key") db.exec("PRAGMA foreign_keys = OFF");
  else db.exec("DROP INDEX events_service_position_idx");
  const insertAll = createEventInsert(db);
  return { name: `intake-insert, no ${what}`, commit: (b) => insertAll(b), close: () => db.close() };
}

async function intakeStore(): Promise<Way> {
  const store = createSqliteStore({ path: intakeFile("store") });
  await store.migrate();
  return { name: "intake-store", commit: (b) => store.events.insertBatch(b), close: () => store.close() };
}

async function intakeCommitter(): Promise<Way> {
  const store = createSqliteStore({ path: intakeFile("committer") });
  await store.migrate();
  const committer = createGroupCommitter<NewEvent, InsertEventResult>({
    maxBatch: BATCH,
    maxDelayMs: 1,
    flush: (b) => store.events.insertBatch(b),
  });
  return {
    name: "intake-committer",
    commit: (b) => Promise.all(b.map((e) => committer.submit(e))),
    close: async () => {
      await committer.drain();
      await store.close();
    },
  };
}

const ways = [
  await bare(),
  await intakeInsert(),
  intakeInsertWithout("foreign-key"),
  intakeInsertWithout("service-position-index"),
  await intakeStore(),
  await intakeCommitter(),
];
const results = new Map<string, { cpuUs: number[]; wallMs: number[] }>(
  ways.map((w) => [w.name, { cpuUs: [], wallMs: [] }]),
);
for (const w of ways) await w.commit(events(BATCH)); // warm
for (let r = 0; r < rounds; r++) {
  for (const w of r % 2 === 0 ? ways : [...ways].reverse()) {
    const work = Array.from({ length: batches }, () => events(BATCH));
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    for (const b of work) await w.commit(b);
    const wall = performance.now() - t0;
    const used = process.cpuUsage(cpu);
    const res = results.get(w.name) as { cpuUs: number[]; wallMs: number[] };
    res.cpuUs.push((used.user + used.system) / (batches * BATCH));
    res.wallMs.push(wall / batches);
  }
}
for (const w of ways) await w.close();
rmSync(dir, { recursive: true, force: true });
for (const [name, r] of results) {
  console.log(
    `${name.padEnd(40)} CPU ${median(r.cpuUs).toFixed(2)} µs/event (${r.cpuUs.map((x) => x.toFixed(2)).join(" ")}), wall ${median(r.wallMs).toFixed(2)} ms/batch`,
  );
}
