/**
 * The rate limiter port (docs/rate-limits.md). Admission asks it for every bearer request when
 * INTAKE_RATE_LIMIT_API is set, and ingest asks it, after the signature verifies, for a service
 * with a limit (its own `rate_limit` or INTAKE_RATE_LIMIT_INGEST).
 *
 * Both adapters count a fixed window anchored at the first request of a key: the window opens
 * on the first request and lasts `windowSeconds`; at most `limit` requests are admitted in it.
 */
import type { RateLimitPolicy } from "./observer.ts";

/** `limit` requests per `windowSeconds`. */
export interface RateLimit {
  limit: number;
  windowSeconds: number;
}

export interface RateDecision {
  policy: RateLimitPolicy;
  allowed: boolean;
  limit: number;
  windowSeconds: number;
  /** Requests the current window still admits after this one (0 when refused). */
  remaining: number;
  /**
   * Whole seconds, rounded up, until the current window ends: when the quota is whole again,
   * and so, for a spent limit, when a request is admitted again. At least 1.
   */
  resetSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `key` (a token id or a service id) against `limit` and decides.
   * A refused request is not counted. Synchronous for the in-process limiter, so the hot path
   * allocates no promise; the shared (Redis) limiter answers after one round trip, or at once
   * from its in-process fallback while Redis is unreachable.
   */
  take(policy: RateLimitPolicy, key: string, limit: RateLimit): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}
