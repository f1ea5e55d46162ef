/**
 * Service stats on PostgreSQL (SPEC §22, docs/search.md "Service stats"): one statement per
 * flush of an instance's aggregator, adding to the stored counts. Instances flushing the same
 * buckets at once add up: ON CONFLICT DO UPDATE waits for the other's row and adds to it, and
 * rows go in key order, so two flushes lock shared rows in one order and cannot deadlock.
 */
import type { ServiceStatsRepo } from "../../domain/ports/store.ts";
import type { StatsOutcome } from "../../domain/stats-types.ts";
import type { PostgresPool } from "./pool.ts";

// Through services: a deleted (or never existing) service's counts find no row and are dropped,
// and the tenant comes with it. Grouped first, so a key given twice is one row.
const ADD =
  "insert into service_stats (service_id, tenant_id, bucket_start, outcome, count) " +
  "select s.id, s.tenant_id, u.bucket_start, u.outcome, u.count from " +
  "(select service_id, bucket_start, outcome, sum(count)::bigint as count " +
  "from unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[]) as r(service_id, bucket_start, outcome, count) " +
  "group by 1, 2, 3) u join services s on s.id = u.service_id " +
  "order by 1, 3, 4 " +
  "on conflict (service_id, bucket_start, outcome) do update set count = service_stats.count + excluded.count";
const READ =
  "select bucket_start - (bucket_start % $5::bigint) as b, outcome, sum(count)::bigint from service_stats " +
  "where service_id = $2 and tenant_id = $1 and bucket_start >= $3 and bucket_start < $4 " +
  "group by 1, 2 order by 1, 2";
const EXPIRE =
  "delete from service_stats where ctid in (select ctid from service_stats where bucket_start < $1 " +
  "order by bucket_start limit $2 for update skip locked)";

export function createStatsRepo(pool: PostgresPool): ServiceStatsRepo {
  const { guard } = pool;
  return {
    add: (counts) =>
      guard(async () => {
        if (counts.length === 0) return;
        await pool
          .client()
          .unsafe(ADD, [
            counts.map((c) => c.serviceId),
            counts.map((c) => c.bucketStart),
            counts.map((c) => c.outcome),
            counts.map((c) => c.count),
          ]);
      }),
    read: (tenantId, serviceId, range) =>
      guard(async () => {
        const rows = (await pool
          .client()
          .unsafe(READ, [tenantId, serviceId, range.from, range.to, range.bucketMs])
          .values()) as [string | number, StatsOutcome, string | number][];
        return rows.map(([b, outcome, count]) => ({ bucketStart: Number(b), outcome, count: Number(count) }));
      }),
    deleteOlderThan: (cutoff, batch) =>
      guard(async () => {
        const result = await pool.client().unsafe(EXPIRE, [cutoff, batch]);
        return result.count;
      }),
  };
}
