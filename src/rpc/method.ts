import type { Maybe } from "../domain/maybe.ts";
import type { Logger } from "../logger.ts";
import type { CallContext } from "./context.ts";
import { toConnectError } from "./errors.ts";

/**
 * Wraps a method body so every failure leaves the rpc layer as a ConnectError carrying the REST
 * code. A body that answers synchronously (from the in-process cache) stays synchronous: no
 * async layer is added to the hot path (domain/maybe.ts).
 */
export function rpcMethod<I, O>(
  logger: Logger,
  body: (request: I, context: CallContext) => Promise<O>,
): (request: I, context: CallContext) => Promise<O>;
export function rpcMethod<I, O>(
  logger: Logger,
  body: (request: I, context: CallContext) => Maybe<O>,
): (request: I, context: CallContext) => Maybe<O>;
export function rpcMethod<I, O>(
  logger: Logger,
  body: (request: I, context: CallContext) => Maybe<O>,
): (request: I, context: CallContext) => Maybe<O> {
  const rethrow = (error: unknown): never => {
    throw toConnectError(error, logger);
  };
  return (request, context) => {
    let result: Maybe<O>;
    try {
      result = body(request, context);
    } catch (error) {
      return rethrow(error);
    }
    return result instanceof Promise ? result.catch(rethrow) : result;
  };
}
