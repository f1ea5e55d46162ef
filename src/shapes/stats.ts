/**
 * A service's ingest stats (§22, docs/search.md "Service stats"): REST JSON with RFC 3339
 * times; the RPC `GetServiceStatsResponse`, counts as int64.
 */
import { create } from "@bufbuild/protobuf";
import { type GetServiceStatsResponse, GetServiceStatsResponseSchema } from "../../gen/intake/v1/services_pb.ts";
import type { ServiceStats } from "../domain/stats.ts";
import { isoOfMs, ts } from "./time.ts";

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

function int64Counts(counts: Partial<Record<string, number>>): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [outcome, n] of Object.entries(counts)) if (n !== undefined) out[outcome] = BigInt(n);
  return out;
}

export function serviceStatsMessage(stats: ServiceStats): GetServiceStatsResponse {
  return create(GetServiceStatsResponseSchema, {
    window: stats.window,
    bucketSeconds: stats.bucketMs / 1000,
    from: ts(stats.from),
    to: ts(stats.to),
    buckets: stats.buckets.map((b) => ({ start: ts(b.start), counts: int64Counts(b.counts) })),
    totals: int64Counts(stats.totals),
  });
}
