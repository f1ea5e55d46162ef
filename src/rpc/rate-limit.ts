/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers) of a rate-limit decision,
 * as the REST gateway and the RPC routers send them (docs/rate-limits.md, docs/rpc.md).
 */
import { createContextKey } from "@connectrpc/connect";
import type { RateDecision } from "../domain/ports/rate-limiter.ts";

export const RATE_LIMIT_POLICY_HEADER = "ratelimit-policy";
export const RATE_LIMIT_HEADER = "ratelimit";
export const RETRY_AFTER_HEADER = "retry-after";

/** `RateLimit-Policy: "api";q=<limit>;w=<window seconds>` */
export function policyField(d: RateDecision): string {
  return `"${d.policy}";q=${d.limit};w=${d.windowSeconds}`;
}

/** `RateLimit: "api";r=<remaining>;t=<seconds until the window resets>` */
export function rateLimitField(d: RateDecision): string {
  return `"${d.policy}";r=${d.remaining};t=${d.resetSeconds}`;
}

/** Writes the fields of `d` (plus Retry-After when it refused) into `headers`. */
export function setRateLimitHeaders(headers: Headers, d: RateDecision): void {
  headers.set(RATE_LIMIT_POLICY_HEADER, policyField(d));
  headers.set(RATE_LIMIT_HEADER, rateLimitField(d));
  if (!d.allowed) headers.set(RETRY_AFTER_HEADER, String(d.resetSeconds));
}

/**
 * Where a call reports the rate-limit decision taken inside an implementation (ingest's, after
 * the signature): the REST gateway and the RPC gate each put one in the call's context values.
 */
export const rateLimitSinkKey = createContextKey<((decision: RateDecision) => void) | undefined>(undefined, {
  description: "receives the rate-limit decision of the call",
});
