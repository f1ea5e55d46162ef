/**
 * The Connect interceptor of traces (docs/tracing.md), on the main port's router and the gRPC
 * port's alike: the call's server span (opened by its listener, which continued the caller's
 * `traceparent`) is named by the RPC method, carries rpc.system/service/method and the call's
 * status code, and is the active span while the implementation runs.
 */
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Tracer } from "../domain/ports/tracer.ts";
import { traceSpanKey } from "./context.ts";

export function tracingInterceptor(tracer: Tracer): Interceptor {
  return (next) => async (request) => {
    const span = request.contextValues.get(traceSpanKey);
    if (span === undefined) return next(request);
    tracer.rpcCall(span, request.service.typeName, request.method.name);
    try {
      const response = await tracer.within(span, () => next(request));
      // A server stream's status is its trailers' (the gRPC listener reads them when it ends).
      if (!response.stream) tracer.rpcStatus(span, 0);
      return response;
    } catch (error) {
      tracer.rpcStatus(span, ConnectError.from(error).code);
      throw error;
    }
  };
}
