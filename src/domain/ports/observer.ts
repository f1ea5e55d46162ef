/**
 * What the domain and the edges report for metrics (docs/operations.md). The domain states
 * outcomes; it never knows Prometheus. The composition root hands one observer to everything
 * that reports; `noopObserver` is for callers that measure nothing (the CLI, unit tests, and
 * INTAKE_METRICS=false).
 *
 * No method takes a tenant, token, service id or any user input: labels are closed sets.
 * Every method is called on a request's path, so an implementation must be cheap (no
 * allocation, no label hashing per call) and must never throw.
 */

import type { StreamChange } from "../incident-types.ts";
import type { PublishAck } from "./publisher.ts";

/**
 * `intake_ingest_events_total{outcome}`. Reported once per ingest attempt by domain/ingest.ts
 * (from its result, or the DomainError code it ends with: a refusal raised inside it is counted
 * there, not again by its caller). `internal_error` is an attempt that ended in a 500.
 */
export type IngestOutcome =
  | "accepted"
  | "duplicate"
  | "invalid_signature"
  | "paused"
  | "invalid_request"
  | "payload_too_large"
  | "rate_limited"
  | "unavailable"
  | "internal_error";

/** Why an ingest 401 happened: for the operator's log and metrics only, never the response. */
export type SignatureFailureReason =
  | "unknown_service"
  | "malformed_signature_header"
  | "timestamp_outside_tolerance"
  | "no_matching_signature";

/** `intake_cache_lookups_total{namespace,result}`: where a lookup was answered. */
export type CacheLookupResult = "hit" | "negative_hit" | "shared_hit" | "miss";

/** `intake_rate_limited_total{policy}`. */
/** `feed`: the cap on live feed reads per token and per tenant (docs/feed.md). */
export type RateLimitPolicy = "api" | "ingest" | "feed";

export interface Observer {
  /**
   * One request answered by a listener: `route` is a route template or RPC path from the code
   * (`unmatched` for anything else), never a raw path; `method` is the HTTP method as received
   * (the implementation folds unknown ones into one label value).
   */
  httpRequest(route: string, method: string, status: number, durationSeconds: number): void;
  ingestOutcome(outcome: IngestOutcome): void;
  /** `intake_ingest_signature_failures_total{reason}`: alongside ingestOutcome("invalid_signature"). */
  signatureFailure(reason: SignatureFailureReason): void;
  /** One group commit (or per-request commit): its event count and its wall time. */
  commitBatch(size: number, durationSeconds: number): void;
  /** `intake_cache_lookups_total` of one namespace, its series resolved once (a lookup counts on every read). */
  cacheLookups(namespace: string): CacheLookups;
  /** A live feed stream (SSE or StreamFeed) opened (+1) or ended (-1). */
  feedStreams(delta: 1 | -1): void;
  /** A request refused with 429 under `policy`. */
  rateLimited(policy: RateLimitPolicy): void;
  /** A rate-limit decision taken in process because the shared limiter (Redis) was unreachable. */
  rateLimiterFallback(policy: RateLimitPolicy): void;
  /** `intake_incident_changes_total{change}`: one committed incident change (§17), by an event, by hand or auto. */
  incidentChange(change: StreamChange): void;
  /** `intake_export_published_total{result}`: one message JetStream acknowledged (docs/export.md). */
  exportPublished(result: PublishAck): void;
  /** `intake_export_lag_events`: feed positions committed and not yet acknowledged, on the exporting instance. */
  exportLag(positions: number): void;
}

/** Counts the lookups of one cache namespace by where each was answered. */
export type CacheLookups = Record<CacheLookupResult, () => void>;

const nothing = () => {};
const noLookups: CacheLookups = { hit: nothing, negative_hit: nothing, shared_hit: nothing, miss: nothing };

export const noopObserver: Observer = {
  httpRequest() {},
  ingestOutcome() {},
  signatureFailure() {},
  commitBatch() {},
  cacheLookups: () => noLookups,
  feedStreams() {},
  rateLimited() {},
  rateLimiterFallback() {},
  incidentChange() {},
  exportPublished() {},
  exportLag() {},
};
