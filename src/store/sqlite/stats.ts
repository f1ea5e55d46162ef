/**
 * Service stats on SQLite (SPEC §22, docs/search.md "Service stats"): one short IMMEDIATE
 * transaction per flush of an instance's aggregator, adding to the stored counts.
 */
import type { ServiceStatsRepo } from "../../domain/ports/store.ts";
import type { StatsOutcome, StatsRow } from "../../domain/stats-types.ts";
import type { SqliteContext } from "./context.ts";

export function createStatsRepo(ctx: SqliteContext): ServiceStatsRepo {
  const { run, client } = ctx;
  const statements = ctx.prepared(() => ({
    // Through services: a deleted (or never existing) service's counts find no row and are
    // dropped, and the tenant comes with it.
    add: client.prepare<unknown, [string, number, StatsOutcome, number]>(
      "INSERT INTO service_stats (service_id, tenant_id, bucket_start, outcome, count) " +
        "SELECT id, tenant_id, ?2, ?3, ?4 FROM services WHERE id = ?1 " +
        "ON CONFLICT (service_id, bucket_start, outcome) DO UPDATE SET count = count + excluded.count",
    ),
    read: client.prepare<StatsRow, [string, string, number, number, number]>(
      "SELECT bucket_start - (bucket_start % ?5) AS bucketStart, outcome, sum(count) AS count FROM service_stats " +
        "WHERE service_id = ?2 AND tenant_id = ?1 AND bucket_start >= ?3 AND bucket_start < ?4 " +
        "GROUP BY 1, 2 ORDER BY 1, 2",
    ),
    expire: client.prepare<unknown, [number, number]>(
      "DELETE FROM service_stats WHERE rowid IN " +
        "(SELECT rowid FROM service_stats WHERE bucket_start < ?1 ORDER BY bucket_start LIMIT ?2)",
    ),
  }));

  return {
    add: (counts) =>
      run(() => {
        if (counts.length === 0) return;
        const { add } = statements();
        client
          .transaction(() => {
            for (const c of counts) add.run(c.serviceId, c.bucketStart, c.outcome, c.count);
          })
          .immediate();
      }),
    read: (tenantId, serviceId, range) =>
      run(() => statements().read.all(tenantId, serviceId, range.from, range.to, range.bucketMs)),
    deleteOlderThan: (cutoff, batch) =>
      run(() => {
        const { expire } = statements();
        return client.transaction(() => expire.run(cutoff, batch).changes).immediate();
      }),
  };
}
