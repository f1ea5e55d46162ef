/**
 * Rate limits (docs/rate-limits.md): the bounds every configured limit obeys, whether it comes
 * from the environment (INTAKE_RATE_LIMIT_API / INTAKE_RATE_LIMIT_INGEST) or from a service's
 * own `rate_limit`, and the 429 a spent limit answers.
 */
import { DomainError, type FieldIssue } from "./errors.ts";
import type { RateDecision, RateLimit } from "./ports/rate-limiter.ts";

/** A window longer than a day is a quota, not a rate: out of scope. */
export const MAX_WINDOW_SECONDS = 86_400;
export const MAX_LIMIT = 1_000_000_000;

/** Problems with a `{limit, windowSeconds}` pair, each named under `field`. */
export function rateLimitIssues(field: string, limit: number, windowSeconds: number): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    issues.push({ field: `${field}.limit`, message: `must be a whole number from 1 to ${MAX_LIMIT}` });
  }
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS) {
    issues.push({
      field: `${field}.window_seconds`,
      message: `must be a whole number of seconds from 1 to ${MAX_WINDOW_SECONDS}`,
    });
  }
  return issues;
}

/** `<n>/<s>s` (e.g. `1000/60s`), or null with what is wrong. */
export function parseRateLimitText(raw: string): RateLimit | null {
  const match = /^(\d{1,10})\/(\d{1,6})s$/.exec(raw.trim());
  if (!match) return null;
  const limit = Number(match[1]);
  const windowSeconds = Number(match[2]);
  return rateLimitIssues("", limit, windowSeconds).length === 0 ? { limit, windowSeconds } : null;
}

export class RateLimitedError extends DomainError {
  constructor(
    readonly decision: RateDecision,
    message = `The ${decision.policy === "api" ? "token's" : "service's"} rate limit is spent; retry in ${decision.resetSeconds} s.`,
  ) {
    super("rate_limited", message);
  }
}
