/** A service's ingest stats (§22, docs/search.md "Service stats"): REST JSON with RFC 3339 times. */
import type { ServiceStats } from "../domain/stats.ts";
import { isoOfMs } from "./time.ts";

export function serviceStatsJson(stats: ServiceStats) {
  return {
    window: stats.window,
    bucket_seconds: stats.bucketMs / 1000,
    from: isoOfMs(stats.from),
    to: isoOfMs(stats.to),
    buckets: stats.buckets.map((b) => ({ start: isoOfMs(b.start), counts: b.counts })),
    totals: stats.totals,
  };
}
