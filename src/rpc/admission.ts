/**
 * Admission: bearer credential → verified principal → the token's rate limit → access rule of
 * the method. 401 missing_credentials / invalid_credentials, then 429 rate_limited, then 403
 * token_scope_insufficient, then 403 owner_required (the check order of docs/api.md).
 */
import type { HandlerContext, Interceptor } from "@connectrpc/connect";
import { authorize } from "../domain/access.ts";
import type { Observer } from "../domain/ports/observer.ts";
import type { RateDecision, RateLimit, RateLimiter } from "../domain/ports/rate-limiter.ts";
import { RateLimitedError } from "../domain/rate-limits.ts";
import type { Tokens } from "../domain/tokens.ts";
import type { Principal } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { principalKey } from "./context.ts";
import { connectErrorFor, INTERNAL_MESSAGE, toConnectError } from "./errors.ts";
import { type MethodName, type MethodPolicy, POLICY } from "./policy.ts";
import { rateLimitSinkKey, setRateLimitHeaders } from "./rate-limit.ts";

const BEARER = /^Bearer +(\S+) *$/i;

const INVALID_MESSAGES = {
  malformed: "The bearer token is not a valid Intake token.",
  token_id: "That is a token id (tok_...), not a credential; send the service_live_ token itself.",
  unknown: "The bearer token is not valid.",
  revoked: "The bearer token is not valid.",
  expired: "The bearer token has expired.",
} as const;

/** The token of an `Authorization: Bearer <token>` header, or null (streams re-verify it). */
export function bearerCredential(authorization: string | null): string | null {
  const match = authorization ? BEARER.exec(authorization) : null;
  return match ? (match[1] as string) : null;
}

/** INTAKE_RATE_LIMIT_API and the limiter that enforces it (docs/rate-limits.md). */
export interface ApiRateLimit {
  limiter: RateLimiter;
  limit: RateLimit;
  observer: Observer;
}

/** A verified caller, and the rate-limit decision its request was admitted under (null: no limit). */
export interface Admitted {
  principal: Principal;
  rate: RateDecision | null;
}

export function createAdmission(tokens: Tokens, logger: Logger, apiRateLimit: ApiRateLimit | null = null) {
  function authorized(principal: Principal, method: MethodName, rate: RateDecision | null): Admitted {
    const policy = POLICY[method];
    if (policy.bearer) {
      try {
        authorize(principal, policy);
      } catch (error) {
        const refused = toConnectError(error, logger);
        // A limited route carries its RateLimit fields on every answer, refusals included.
        if (rate) setRateLimitHeaders(refused.metadata, rate);
        throw refused;
      }
    }
    return { principal, rate };
  }

  function limited(principal: Principal, method: MethodName, rate: RateDecision): Admitted {
    if (!rate.allowed) {
      apiRateLimit?.observer.rateLimited("api");
      throw toConnectError(new RateLimitedError(rate), logger);
    }
    return authorized(principal, method, rate);
  }

  function admitted(
    result: Awaited<ReturnType<Tokens["verifyToken"]>>,
    method: MethodName,
  ): Admitted | Promise<Admitted> {
    if (!result.ok) throw connectErrorFor("invalid_credentials", INVALID_MESSAGES[result.reason]);
    const { principal } = result;
    if (!apiRateLimit) return authorized(principal, method, null);
    // One limit per token across all its bearer routes, keyed by the token's id (never the token).
    const rate = apiRateLimit.limiter.take("api", principal.tokenId, apiRateLimit.limit);
    if (rate instanceof Promise) return rate.then((r) => limited(principal, method, r));
    return limited(principal, method, rate);
  }

  /**
   * Synchronous when the token is in the in-process cache and the limiter (if any) is the
   * in-process one: the hot path allocates no promise.
   */
  function admit(authorization: string | null, method: MethodName): Admitted | Promise<Admitted> {
    if (!authorization) throw connectErrorFor("missing_credentials", "Send an Authorization: Bearer <token> header.");
    const match = BEARER.exec(authorization);
    if (!match) throw connectErrorFor("invalid_credentials", "The Authorization header must be Bearer <token>.");
    let result: ReturnType<Tokens["verifyToken"]>;
    try {
      result = tokens.verifyToken(match[1] as string);
    } catch (error) {
      throw toConnectError(error, logger);
    }
    if (result instanceof Promise) {
      return result.then(
        (r) => admitted(r, method),
        (error: unknown) => {
          throw toConnectError(error, logger);
        },
      );
    }
    return admitted(result, method);
  }

  /**
   * The router's request gate: runs on the headers, before the request message is read, so a
   * caller without a valid credential never gets its body read or parsed (docs/api.md: 401 before
   * 400). A method missing from POLICY is a programming error and fails closed.
   */
  const gate = async (context: HandlerContext): Promise<void> => {
    const method = `${context.service.typeName}/${context.method.name}`;
    const policy: MethodPolicy | undefined = (POLICY as Record<string, MethodPolicy>)[method];
    if (!policy) {
      logger.error("rpc method without an access policy", { method });
      throw connectErrorFor("internal_error", INTERNAL_MESSAGE);
    }
    // Ingest's decision is taken inside the implementation, after the signature verifies. A
    // refusal carries the fields in its error metadata (rpc/errors.ts), which Connect appends
    // to these headers: writing them here too would send each twice.
    context.values.set(rateLimitSinkKey, (rate) => {
      if (rate.allowed) setRateLimitHeaders(context.responseHeader, rate);
    });
    if (policy.bearer) {
      const { principal, rate } = await admit(context.requestHeader.get("authorization"), method as MethodName);
      context.values.set(principalKey, principal);
      // Response headers: Connect also sends them with an error raised later in the call.
      if (rate) setRateLimitHeaders(context.responseHeader, rate);
    }
  };

  /**
   * The same admission for Connect, gRPC-Web and gRPC callers (`authorization` metadata), for
   * routers without the gate; after the gate it finds the principal already set.
   */
  const interceptor: Interceptor = (next) => async (req) => {
    const method = `${req.service.typeName}/${req.method.name}` as MethodName;
    const policy = POLICY[method];
    if (policy?.bearer && !req.contextValues.get(principalKey)) {
      const { principal, rate } = await admit(req.header.get("authorization"), method);
      req.contextValues.set(principalKey, principal);
      const res = await next(req);
      if (rate) setRateLimitHeaders(res.header, rate);
      return res;
    }
    return next(req);
  };

  return { admit, gate, interceptor };
}

export type Admission = ReturnType<typeof createAdmission>;
