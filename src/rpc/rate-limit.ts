/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers) of a rate-limit decision,
 * as the REST gateway and the RPC routers send them (docs/rate-limits.md, docs/rpc.md).
 */
import { createContextKey } from "@connectrpc/connect";
import type { RateDecision } from "../domain/ports/rate-limiter.ts";

export const RATE_LIMIT_POLICY_HEADER = "ratelimit-policy";
export const RATE_LIMIT_HEADER = "ratelimit";
export const RETRY_AFTER_HEADER = "retry-after";

/**
 * The last `RateLimit-Policy` value written per policy name: a deployment's limit is the same on
 * every response, so its text is built once instead of per request (bench scenario 2 with
 * INTAKE_RATE_LIMIT_API). A cache of a pure function: a service's own limit just replaces the entry.
 */
const lastPolicyField = new Map<string, { limit: number; windowSeconds: number; field: string }>();

/** `RateLimit-Policy: "api";q=<limit>;w=<window seconds>` */
export function policyField(d: RateDecision): string {
  const last = lastPolicyField.get(d.policy);
  if (last !== undefined && last.limit === d.limit && last.windowSeconds === d.windowSeconds) return last.field;
  const field = `"${d.policy}";q=${d.limit};w=${d.windowSeconds}`;
  lastPolicyField.set(d.policy, { limit: d.limit, windowSeconds: d.windowSeconds, field });
  return field;
}

/** `RateLimit: "api";r=<remaining>;t=<seconds until the window resets>` */
export function limitField(d: RateDecision): string {
  return `"${d.policy}";r=${d.remaining};t=${d.resetSeconds}`;
}

/** Writes the fields of `d` (plus Retry-After when it refused) into `headers`. */
export function setRateLimitHeaders(headers: Headers, d: RateDecision): void {
  headers.set(RATE_LIMIT_POLICY_HEADER, policyField(d));
  headers.set(RATE_LIMIT_HEADER, limitField(d));
  if (!d.allowed) headers.set(RETRY_AFTER_HEADER, String(d.resetSeconds));
}

/**
 * Where a call reports the rate-limit decision taken inside an implementation (ingest's, after
 * the signature): the RPC gate puts one in the call's context values (the REST edge hands the
 * domain its own callback).
 */
export const rateLimitSinkKey = createContextKey<((decision: RateDecision) => void) | undefined>(undefined, {
  description: "receives the rate-limit decision of the call",
});
