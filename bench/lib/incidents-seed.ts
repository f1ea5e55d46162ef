/**
 * Scenario 16 (a page of open incidents, 1M vs 1k): incidents seeded in bulk SQL straight into a
 * store (SQLite file or PostgreSQL database) before Intake starts on it, one statement each.
 *
 * A tenant's history as it accumulates: `count` incidents of one service, ids in time order (the
 * order the list pages in), each on its own dedup key; all resolved (by auto-resolve) except
 * `OPEN_INCIDENTS` spread evenly through the whole history, so the newest open ones lie far
 * apart among resolved rows: a page of open incidents that read the tenant's rows instead of
 * the open ones would have to skip a million of them.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";

/** Open incidents per seeded tenant: five pages of 20. */
export const OPEN_INCIDENTS = 100;

export interface IncidentSeed {
  tenantId: string;
  /** Raw service id (without `svc_`). */
  serviceId: string;
  count: number;
}

/** Every `openEvery`-th row is open (triggered or acknowledged). */
function openEvery(count: number): number {
  return Math.max(1, Math.floor(count / OPEN_INCIDENTS));
}

/** The history starts this long before the seed: one millisecond per incident, ending now. */
function firstMs(count: number): number {
  return Date.now() - count - 60_000;
}

/** Inserts `seed.count` incidents into the SQLite file at `path` (no Intake running on it). */
export function seedIncidentsSqlite(path: string, seed: IncidentSeed): number {
  const started = performance.now();
  const client = new Database(path, { readwrite: true });
  try {
    client.exec("PRAGMA busy_timeout = 5000");
    client.exec("PRAGMA cache_size = -1000000");
    client
      .transaction(() => {
        client
          .query(
            `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1)
             INSERT INTO incidents (id, tenant_id, service_id, dedup_key, status, severity, title, source,
                                    alert_count, created_at, last_event_at, acknowledged_at, resolved_at,
                                    acknowledged_by_type, acknowledged_by_id, resolved_by_type, resolved_by_id)
             SELECT printf('%012x7%019x', ?2 + i, i), ?3, ?4, 'seed/' || i,
                    CASE WHEN i % ?5 <> 0 THEN 'resolved' WHEN i % (2 * ?5) = 0 THEN 'acknowledged' ELSE 'triggered' END,
                    CASE i % 4 WHEN 0 THEN 'critical' WHEN 1 THEN 'error' WHEN 2 THEN 'warning' ELSE 'info' END,
                    'Seeded incident ' || i, 'host-' || (i % 50), 1 + i % 5, ?2 + i, ?2 + i,
                    CASE WHEN i % (2 * ?5) = 0 THEN ?2 + i + 1 END,
                    CASE WHEN i % ?5 <> 0 THEN ?2 + i + 1 END,
                    NULL, NULL,
                    CASE WHEN i % ?5 <> 0 THEN 'auto' END, NULL
             FROM seq`,
          )
          .run(seed.count, firstMs(seed.count), seed.tenantId, seed.serviceId, openEvery(seed.count));
      })
      .immediate();
    client.exec("ANALYZE");
    client.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    client.close();
  }
  return (performance.now() - started) / 1000;
}

/** Inserts `seed.count` incidents into the PostgreSQL database at `url`, then analyzes them. */
export async function seedIncidentsPostgres(url: string, seed: IncidentSeed): Promise<number> {
  const started = performance.now();
  const sql = new SQL({ url, max: 1 });
  try {
    await sql.begin(async (tx) => {
      // The secondary indexes are dropped and built again after the rows (one sort each instead
      // of a million inserts into each), and the foreign keys (one tenant, one service, both
      // just made) are not checked row by row: a fraction of the time, in scenario 16's budget.
      const indexes = (await tx.unsafe(
        "select indexname, indexdef from pg_indexes where tablename = 'incidents' and indexname <> 'incidents_pkey'",
      )) as Array<{ indexname: string; indexdef: string }>;
      for (const index of indexes) await tx.unsafe(`drop index "${index.indexname}"`);
      await tx.unsafe("set local session_replication_role = replica");
      await tx.unsafe("set local maintenance_work_mem = '256MB'");
      await tx.unsafe(
        `insert into incidents (id, tenant_id, service_id, dedup_key, status, severity, title, source,
                              alert_count, created_at, last_event_at, acknowledged_at, resolved_at,
                              acknowledged_by_type, acknowledged_by_id, resolved_by_type, resolved_by_id)
       select lpad(to_hex($1::bigint + i), 12, '0') || '7' || lpad(to_hex(i), 19, '0'), $2, $3, 'seed/' || i,
              case when i % $4 <> 0 then 'resolved' when i % (2 * $4) = 0 then 'acknowledged' else 'triggered' end,
              (array['critical', 'error', 'warning', 'info'])[1 + i % 4], 'Seeded incident ' || i,
              'host-' || (i % 50), 1 + i % 5, $1::bigint + i, $1::bigint + i,
              case when i % (2 * $4) = 0 then $1::bigint + i + 1 end,
              case when i % $4 <> 0 then $1::bigint + i + 1 end,
              null, null,
              case when i % $4 <> 0 then 'auto' end, null
       from generate_series(1, $5::bigint) i`,
        [firstMs(seed.count), seed.tenantId, seed.serviceId, openEvery(seed.count), seed.count],
      );
      for (const index of indexes) await tx.unsafe(index.indexdef);
    });
    await sql.unsafe("vacuum analyze incidents");
  } finally {
    await sql.close();
  }
  return (performance.now() - started) / 1000;
}
