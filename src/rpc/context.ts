import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { SignatureFailureReason } from "../domain/ports/observer.ts";
import type { TraceSpan } from "../domain/ports/tracer.ts";
import type { Principal } from "../domain/types.ts";
import { connectErrorFor } from "./errors.ts";

/** Set by admission (the router's gate, or the interceptor) before a bearer method runs. */
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: "verified caller" });

/**
 * The request id (`req_…`) of the call: set by the main port's edge (the X-Request-Id it answers
 * with) or, for Connect and gRPC calls, by the router's gate; written into audit events.
 */
export const requestIdKey = createContextKey<string | undefined>(undefined, { description: "X-Request-Id" });

/** What a service implementation reads from its context: only the values. */
export type CallContext = Pick<HandlerContext, "values">;

export function principalOf(context: CallContext): Principal {
  const principal = context.values.get(principalKey);
  // Unreachable through the routers, which admit first; kept as a guard.
  if (!principal) throw connectErrorFor("missing_credentials", "This call needs a bearer token.");
  return principal;
}

/**
 * Why an ingest call was refused with 401 (docs/operations.md): set by the ingest
 * implementation for the access log, which reads it after the call. It never reaches the
 * response: the answer is the same for every reason.
 */
export const signatureFailureKey = createContextKey<SignatureFailureReason | undefined>(undefined, {
  description: "ingest 401 reason",
});

/** How long a ListFeed long poll held its answer waiting (FeedPage.heldMs): left out of its duration. */
export const heldMsKey = createContextKey<number>(0, { description: "long poll held ms" });

/** The well-formed `svc_` id an ingest call named, for the access log. */
export const ingestServiceKey = createContextKey<string | undefined>(undefined, { description: "ingest service id" });

/** The call's request id; null only for a context built outside the routers. */
export function requestIdOf(context: CallContext): string | null {
  return context.values.get(requestIdKey) ?? null;
}

/** The call's server span, opened by its listener when tracing is on (rpc/tracing.ts). */
export const traceSpanKey = createContextKey<TraceSpan | undefined>(undefined, { description: "server span" });

/**
 * Set by a listener that can tear a call down: a stream that must end (token revoked or
 * expired, service deleted) calls it, and unless the call's end was flushed within a short
 * grace (a reader that stopped reading cannot take it), the listener resets the call.
 */
export const streamEndKey = createContextKey<(() => void) | undefined>(undefined, {
  description: "tear a stalled stream down",
});
