import type { Logger } from "../logger.ts";
import type { CallContext } from "./context.ts";
import { toConnectError } from "./errors.ts";

/** Wraps a method body so every failure leaves the rpc layer as a ConnectError carrying the REST code. */
export function rpcMethod<I, O>(
  logger: Logger,
  body: (request: I, context: CallContext) => Promise<O>,
): (request: I, context: CallContext) => Promise<O> {
  return async (request, context) => {
    try {
      return await body(request, context);
    } catch (error) {
      throw toConnectError(error, logger);
    }
  };
}
