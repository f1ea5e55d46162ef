/**
 * What one retention batch costs on PostgreSQL with the current schema (docs/feed.md,
 * "Retention"; bench/README.md, "Retention in batches, no partitions"): `bun bench/retention-batch.ts
 * [expired rows, default 300000] [batch, default 500]`.
 *
 * On a scratch database with that many expired 1 KiB events it
 *  1. holds one batch's DELETE open in a transaction and lists the locks it holds, then
 *     ingests five events through the store from another connection (the real insertBatch,
 *     feed head included) while that transaction is still open — they complete before its
 *     commit, so they did not wait on it — with a third connection watching for lock waits;
 *  2. sweeps the whole table through the store's own `deleteOlderThan`, timing every batch
 *     (no pause between batches: this is the statement's cost, not the sweeper's pacing);
 *  3. does the same sweep on a SQLite file with as many expired events, for comparison.
 */
import { rmSync } from "node:fs";
import { SQL } from "bun";
import { createIdGenerator, idFloor } from "../src/domain/ids.ts";
import type { Store } from "../src/domain/ports/store.ts";
import { createPostgresStore, DELETE_OLDER_THAN } from "../src/store/postgres/store.ts";
import { createSqliteStore } from "../src/store/sqlite/store.ts";
import { bootstrap, createService, makeKeys, startIntake } from "./lib/intake.ts";
import { eventBody } from "./lib/pool.ts";
import { createScratchDatabase } from "./lib/postgres.ts";
import { installCleanup } from "./lib/procs.ts";
import { seedExpiredPostgres, seedExpiredSqlite } from "./lib/sweep.ts";

const count = Number(process.argv[2] ?? 300_000);
const batch = Number(process.argv[3] ?? 500);
const log = (line: string) => process.stdout.write(`${line}\n`);
const ms = (x: number) => x.toFixed(2);
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** Sweeps the whole table through the store's own deleteOlderThan, back to back, timing every batch. */
async function timeSweep(label: string, store: Store, cutoff: number): Promise<void> {
  const times: number[] = [];
  const started = performance.now();
  let total = 0;
  for (;;) {
    const t = performance.now();
    const n = await store.events.deleteOlderThan(cutoff, batch);
    times.push(performance.now() - t);
    total += n;
    if (n < batch) break;
  }
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...times].sort((a, b) => a - b);
  log(
    `\n${label}: sweep of ${total} rows in ${times.length} batches of ${batch}, back to back: ${seconds.toFixed(1)} s (${Math.round(total / seconds)} rows/s)`,
  );
  log(
    `per batch: p50 ${ms(quantile(sorted, 0.5))} ms, p90 ${ms(quantile(sorted, 0.9))} ms, p99 ${ms(quantile(sorted, 0.99))} ms, max ${ms(sorted.at(-1) ?? Number.NaN)} ms`,
  );
  const thirds = [0, 1, 2].map((k) => {
    const part = times
      .slice(Math.floor((k * times.length) / 3), Math.floor(((k + 1) * times.length) / 3))
      .sort((a, b) => a - b);
    return ms(quantile(part, 0.5));
  });
  log(`p50 per batch over the first, middle and last third of the sweep: ${thirds.join(", ")} ms`);
}

/**
 * The same sweep on a SQLite file, for comparison: there a batch holds the database's one
 * write lock for its whole duration, and bun:sqlite runs it on Intake's main thread.
 */
async function sqliteSweep(): Promise<void> {
  const dataDir = `${process.env.TMPDIR ?? "/tmp"}/intake-retention-batch-sqlite-${process.pid}`;
  try {
    const spec = { name: "retention-batch-sqlite", dataDir, keys: makeKeys() };
    const boot = await bootstrap(spec);
    const intake = await startIntake(spec);
    let serviceId: string;
    try {
      serviceId = (await createService(intake.url, boot.token, "retention-batch")).id.slice("svc_".length);
    } finally {
      await intake.stop();
    }
    const path = `${dataDir}/intake.sqlite`;
    const seeded = seedExpiredSqlite(path, { tenantId: boot.tenantId, serviceId, count });
    log(`\nseeded ${count} expired 1 KiB events into a SQLite file in ${seeded.toFixed(1)} s`);
    const store = createSqliteStore({ path });
    try {
      await timeSweep("SQLite", store, Date.now() - 30 * 86_400_000);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

installCleanup();
const db = await createScratchDatabase();
if ("unreachable" in db) {
  log(`PostgreSQL unreachable: ${db.unreachable}`);
  process.exit(2);
}
const dataDir = `${process.env.TMPDIR ?? "/tmp"}/intake-retention-batch-${process.pid}`;
try {
  // Tenant and service through Intake itself, like an operator would.
  const spec = { name: "retention-batch", dataDir, keys: makeKeys(), env: { DATABASE_URL: db.url } };
  const boot = await bootstrap(spec);
  const intake = await startIntake(spec);
  let serviceId: string;
  try {
    serviceId = (await createService(intake.url, boot.token, "retention-batch")).id.slice("svc_".length);
  } finally {
    await intake.stop();
  }
  const seeded = await seedExpiredPostgres(db.url, { tenantId: boot.tenantId, serviceId, count });
  const [size] = await new SQL({ url: db.url, max: 1 }).unsafe(
    "select pg_size_pretty(pg_total_relation_size('events')) as total, version() as version",
  );
  log(`seeded ${count} expired 1 KiB events in ${seeded.toFixed(1)} s (events: ${size?.total}); ${size?.version}`);

  const cutoff = Date.now() - 30 * 86_400_000;
  const store = createPostgresStore({ url: db.url, timeoutMs: 5_000 });

  // 1. The locks of one open batch, and an insert beside it.
  const holder = new SQL({ url: db.url, max: 1 });
  const reserved = await holder.reserve();
  try {
    await reserved.unsafe("begin");
    const [{ pid }] = await reserved.unsafe("select pg_backend_pid() as pid");
    const t0 = performance.now();
    const deleted = await reserved.unsafe(DELETE_OLDER_THAN, [idFloor(cutoff), cutoff, batch]);
    const deleteMs = performance.now() - t0;
    const locks = await new SQL({ url: db.url, max: 1 }).unsafe(
      `select l.locktype, coalesce(c.relname, '') as relation, l.mode, count(*)::int as n
       from pg_locks l left join pg_class c on c.oid = l.relation
       where l.pid = $1 group by 1, 2, 3 order by 1, 2, 3`,
      [pid],
    );
    log(`\none batch of ${batch} held open (${deleted.count} rows, ${ms(deleteMs)} ms); its locks:`);
    for (const l of locks) log(`  ${l.locktype} ${l.relation || "-"} ${l.mode}${l.n > 1 ? ` ×${l.n}` : ""}`);
    const newId = createIdGenerator();
    const insertOne = async () => {
      const t = performance.now();
      await store.events.insertBatch([
        {
          id: newId(),
          tenantId: boot.tenantId,
          serviceId,
          receivedAt: Date.now(),
          idempotencyKey: null,
          payload: new TextEncoder().encode(eventBody(0)),
        },
      ]);
      return performance.now() - t;
    };
    await insertOne(); // the store's pool connected and its statements prepared before the timing
    // A third connection watches for any backend waiting on a lock while the inserts run.
    const watcher = new SQL({ url: db.url, max: 1 });
    let lockWaits = 0;
    let watching = true;
    const watching$ = (async () => {
      while (watching) {
        const [w] = await watcher.unsafe(
          "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
        );
        lockWaits += w?.n ?? 0;
        await Bun.sleep(2);
      }
    })();
    const during: number[] = [];
    for (let k = 0; k < 5; k++) during.push(await insertOne());
    watching = false;
    await watching$;
    await watcher.close();
    log(
      `5 ingest inserts (store insertBatch, another connection) while that batch is open: ${during.map(ms).join(", ")} ms; lock waits seen: ${lockWaits}`,
    );
    await reserved.unsafe("commit");
    const after: number[] = [];
    for (let k = 0; k < 5; k++) after.push(await insertOne());
    log(`the same 5 inserts after its commit: ${after.map(ms).join(", ")} ms`);
  } finally {
    reserved.release();
    await holder.close();
  }

  // 2. Every batch of a whole sweep, timed.
  await timeSweep("PostgreSQL", store, cutoff);
  await store.close();
} finally {
  await db.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
await sqliteSweep();
