/**
 * The Connect interceptor of traces (docs/tracing.md), on the main port's router and the gRPC
 * port's alike: the call's server span (opened by its listener, which continued the caller's
 * `traceparent`) is named by the RPC method, carries rpc.system/service/method and the call's
 * status code, and is the active span while the implementation runs.
 */
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Tracer, TraceSpan } from "../domain/ports/tracer.ts";
import { traceSpanKey } from "./context.ts";

export function tracingInterceptor(tracer: Tracer): Interceptor {
  return (next) => (request) => {
    const span = request.contextValues.get(traceSpanKey);
    // An untraced call (tracing off for it, or not sampled) goes straight on.
    if (span === undefined) return next(request);
    return traced(tracer, span, () => next(request));
  };
}

async function traced<R extends { stream: boolean }>(
  tracer: Tracer,
  span: TraceSpan,
  call: () => Promise<R>,
): Promise<R> {
  try {
    const response = await tracer.within(span, call);
    // A server stream's status is its trailers' (the gRPC listener reads them when it ends).
    if (!response.stream) tracer.rpcStatus(span, 0);
    return response;
  } catch (error) {
    tracer.rpcStatus(span, ConnectError.from(error).code);
    throw error;
  }
}
