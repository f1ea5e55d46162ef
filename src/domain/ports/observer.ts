/**
 * What the domain and the edges report for metrics (docs/operations.md). The domain states
 * outcomes; it never knows Prometheus. The composition root hands one observer to everything
 * that reports; `noopObserver` is for callers that measure nothing (the CLI, unit tests).
 *
 * No method takes a tenant, token, service id or any user input: labels are closed sets.
 */

/** `intake_ingest_events_total{outcome}`. */
export type IngestOutcome =
  | "accepted"
  | "duplicate"
  | "invalid_signature"
  | "paused"
  | "invalid_request"
  | "payload_too_large"
  | "rate_limited"
  | "unavailable";

/** Why an ingest 401 happened: for the operator's log and metrics only, never the response. */
export type SignatureFailureReason =
  | "unknown_service"
  | "malformed_signature_header"
  | "timestamp_outside_tolerance"
  | "no_matching_signature";

/** `intake_cache_lookups_total{namespace,result}`: where a lookup was answered. */
export type CacheLookupResult = "hit" | "negative_hit" | "shared_hit" | "miss";

/** `intake_rate_limited_total{policy}`. */
export type RateLimitPolicy = "api" | "ingest";

export interface Observer {
  ingestOutcome(outcome: IngestOutcome): void;
  /** One group commit (or per-request commit): its event count and its wall time. */
  commitBatch(size: number, durationSeconds: number): void;
  cacheLookup(namespace: string, result: CacheLookupResult): void;
  /** A live feed stream (SSE or StreamFeed) opened (+1) or ended (-1). */
  feedStreams(delta: 1 | -1): void;
  /** A request refused with 429 under `policy`. */
  rateLimited(policy: RateLimitPolicy): void;
  /** A rate-limit decision taken in process because the shared limiter (Redis) was unreachable. */
  rateLimiterFallback(policy: RateLimitPolicy): void;
}

export const noopObserver: Observer = {
  ingestOutcome() {},
  commitBatch() {},
  cacheLookup() {},
  feedStreams() {},
  rateLimited() {},
  rateLimiterFallback() {},
};
