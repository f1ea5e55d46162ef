/**
 * Scenario 13 (ingest during a retention sweep): expired events seeded in bulk SQL straight
 * into a store (SQLite file or PostgreSQL database) before Intake starts on it, and the count
 * of those still there, read from outside while Intake sweeps.
 *
 * Seeded rows look like events received `EXPIRED_AGE_DAYS` ago: `received_at` and the time
 * part of the id both lie in the past (the sweep selects on both, docs/feed.md "Retention"),
 * their positions follow the feed head, which is moved past them, and each carries ~1 KiB.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { idFloor } from "../../src/domain/ids.ts";
import { vacuumEvents } from "./postgres.ts";

/** Far beyond any retention the bench configures (INTAKE_EVENT_RETENTION_DAYS=30). */
export const EXPIRED_AGE_DAYS = 400;
const DAY_MS = 86_400_000;

/** Seeded ids are below this; events ingested during the run are far above it. */
export function expiredIdBound(): string {
  return idFloor(Date.now() - (EXPIRED_AGE_DAYS - 1) * DAY_MS);
}

export interface ExpiredSeed {
  tenantId: string;
  /** Raw service id (without `svc_`). */
  serviceId: string;
  count: number;
}

/** Inserts `count` expired events into the SQLite file at `path` (no Intake running on it). */
export function seedExpiredSqlite(path: string, seed: ExpiredSeed): number {
  const started = performance.now();
  const client = new Database(path, { readwrite: true });
  try {
    client.exec("PRAGMA busy_timeout = 5000");
    const ms = Date.now() - EXPIRED_AGE_DAYS * DAY_MS;
    client
      .transaction(() => {
        const head = (client.query("SELECT head FROM feed_head WHERE id = 1").get() as { head: number } | null)?.head;
        const from = head ?? 0;
        client
          .query(
            `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1)
             INSERT INTO events (rowid, id, service_id, tenant_id, received_at, idempotency_key, payload, position)
             SELECT ?5 + i, printf('%012x7%019x', ?2, i), ?3, ?4, ?2 + i / 1000, NULL,
                    CAST('{"type":"bench.expired","seq":' || i || ',"pad":"' || hex(zeroblob(490)) || '"}' AS BLOB),
                    ?5 + i
             FROM seq`,
          )
          .run(seed.count, ms, seed.serviceId, seed.tenantId, from);
        client
          .query("INSERT INTO feed_head (id, head) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET head = excluded.head")
          .run(from + seed.count);
      })
      .immediate();
    // Leave no WAL behind: the file is copied whole for the no-retention twin.
    client.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    client.close();
  }
  return (performance.now() - started) / 1000;
}

/** Inserts `count` expired events into the PostgreSQL database at `url`. */
export async function seedExpiredPostgres(url: string, seed: ExpiredSeed): Promise<number> {
  const started = performance.now();
  const sql = new SQL({ url, max: 1 });
  try {
    const ms = Date.now() - EXPIRED_AGE_DAYS * DAY_MS;
    await sql.begin(async (tx) => {
      const [row] = await tx.unsafe("select head from feed_head where id = 1 for update");
      const from = Number(row?.head ?? 0);
      await tx.unsafe(
        `insert into events (id, service_id, tenant_id, received_at, idempotency_key, payload, position)
         select lpad(to_hex($1::bigint), 12, '0') || '7' || lpad(to_hex(i), 19, '0'), $2, $3, $1::bigint + i / 1000, null,
                convert_to('{"type":"bench.expired","seq":' || i || ',"pad":"' || repeat('0', 980) || '"}', 'UTF8'),
                $4::bigint + i
         from generate_series(1, $5::bigint) i`,
        [ms, seed.serviceId, seed.tenantId, from, seed.count],
      );
      await tx.unsafe(
        "insert into feed_head (id, head) values (1, $1) on conflict (id) do update set head = excluded.head",
        [from + seed.count],
      );
    });
  } finally {
    await sql.close();
  }
  // Fresh statistics and visibility map: the counts below stay index-only.
  await vacuumEvents(url);
  return (performance.now() - started) / 1000;
}

/** Counts the seeded (expired) events still in a store, from outside the Intake that sweeps it. */
export interface ExpiredCounter {
  count(): Promise<number>;
  close(): Promise<void>;
}

export function sqliteCounter(path: string): ExpiredCounter {
  const client = new Database(path, { readonly: true });
  client.exec("PRAGMA busy_timeout = 5000");
  const query = client.query("SELECT count(*) AS n FROM events WHERE id < ?1");
  const bound = expiredIdBound();
  return {
    count: async () => (query.get(bound) as { n: number }).n,
    close: async () => client.close(),
  };
}

export function postgresCounter(url: string): ExpiredCounter {
  const sql = new SQL({ url, max: 1 });
  const bound = expiredIdBound();
  return {
    count: async () => {
      const [row] = await sql.unsafe("select count(*)::bigint as n from events where id < $1", [bound]);
      return Number(row?.n ?? 0);
    },
    close: () => sql.close(),
  };
}
