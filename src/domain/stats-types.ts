/**
 * The outcomes a service's ingest stats count (SPEC §22, docs/search.md "Service stats"): §15's
 * ingest outcomes with `invalid_signature` split into its reasons, so a person sees why a sender
 * is refused. `unknown_service` is not among them: such a request names no service to count it
 * against. Shared by the domain, the Store port and both schemas (a CHECK over this list).
 */
export const STATS_OUTCOMES = [
  "accepted",
  "duplicate",
  "malformed_signature_header",
  "timestamp_outside_tolerance",
  "no_matching_signature",
  "paused",
  "invalid_request",
  "payload_too_large",
  "rate_limited",
  "unavailable",
  "internal_error",
] as const;

export type StatsOutcome = (typeof STATS_OUTCOMES)[number];

/** Stats are kept in buckets of this size (5 minutes); a 7-day window reads them summed by hour. */
export const STATS_BUCKET_MS = 300_000;

/** One count to add: `count` more `outcome`s of a service in the bucket starting at `bucketStart`. */
export interface StatsCount {
  /** Raw id. */
  serviceId: string;
  bucketStart: number;
  outcome: StatsOutcome;
  count: number;
}

/** A read bucket: the counts of one outcome in the bucket starting at `bucketStart` (epoch ms). */
export interface StatsRow {
  bucketStart: number;
  outcome: StatsOutcome;
  count: number;
}
