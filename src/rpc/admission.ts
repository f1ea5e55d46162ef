/**
 * Admission: bearer credential → verified principal → access rule of the method.
 * 401 missing_credentials / invalid_credentials, then 403 token_scope_insufficient, then
 * 403 owner_required (SPEC §1 check order).
 */
import type { HandlerContext, Interceptor } from "@connectrpc/connect";
import { authorize } from "../domain/access.ts";
import type { Tokens } from "../domain/tokens.ts";
import type { Principal } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { principalKey } from "./context.ts";
import { connectErrorFor, INTERNAL_MESSAGE, toConnectError } from "./errors.ts";
import { type MethodName, type MethodPolicy, POLICY } from "./policy.ts";

const BEARER = /^Bearer +(\S+) *$/i;

const INVALID_MESSAGES = {
  malformed: "The bearer token is not a valid Intake token.",
  token_id: "That is a token id (tok_...), not a credential; send the service_live_ token itself.",
  unknown: "The bearer token is not valid.",
  revoked: "The bearer token is not valid.",
  expired: "The bearer token has expired.",
} as const;

export function createAdmission(tokens: Tokens, logger: Logger) {
  function admitted(result: Awaited<ReturnType<Tokens["verifyToken"]>>, method: MethodName): Principal {
    if (!result.ok) throw connectErrorFor("invalid_credentials", INVALID_MESSAGES[result.reason]);
    const policy = POLICY[method];
    if (policy.bearer) {
      try {
        authorize(result.principal, policy);
      } catch (error) {
        throw toConnectError(error, logger);
      }
    }
    return result.principal;
  }

  /** Synchronous when the token is in the in-process cache: the hot path allocates no promise. */
  function admit(authorization: string | null, method: MethodName): Principal | Promise<Principal> {
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
   * caller without a valid credential never gets its body read or parsed (SPEC §1: 401 before
   * 400). A method missing from POLICY is a programming error and fails closed.
   */
  const gate = async (context: HandlerContext): Promise<void> => {
    const method = `${context.service.typeName}/${context.method.name}`;
    const policy: MethodPolicy | undefined = (POLICY as Record<string, MethodPolicy>)[method];
    if (!policy) {
      logger.error("rpc method without an access policy", { method });
      throw connectErrorFor("internal_error", INTERNAL_MESSAGE);
    }
    if (policy.bearer) {
      context.values.set(principalKey, await admit(context.requestHeader.get("authorization"), method as MethodName));
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
      req.contextValues.set(principalKey, await admit(req.header.get("authorization"), method));
    }
    return next(req);
  };

  return { admit, gate, interceptor };
}

export type Admission = ReturnType<typeof createAdmission>;
