/**
 * Connect (JSON and binary) and gRPC-Web on the main port, at /intake.v1.<Service>/<Method>,
 * inside the Elysia app so they share its listener and the edge's steps: X-Request-Id, 404/405,
 * the metrics and the access log (edge.ts). Admission is the router's own gate, over the same
 * policy table (rpc/admission.ts).
 */
import { type ConnectRouter, createContextValues } from "@connectrpc/connect";
import { universalServerRequestFromFetch, universalServerResponseToFetch } from "@connectrpc/connect/protocol";
import { Elysia } from "elysia";
import { requestIdKey, streamEndKey, traceSpanKey } from "../rpc/context.ts";
import { type Edge, exchangeOf } from "./edge.ts";
import { ELYSIA_SETTINGS } from "./http.ts";
import { stallGuard } from "./stall-guard.ts";

/** `router` must have plain gRPC disabled: Bun.serve's HTTP/2 drops trailers. */
export function connectRoutes(router: ConnectRouter, edge: Edge, keepOpen: (request: Request) => void) {
  const app = new Elysia({ ...ELYSIA_SETTINGS, name: "rpc" });
  for (const handler of router.handlers) {
    const service = handler.service.typeName;
    const method = handler.method.name;
    const streaming = handler.method.methodKind === "server_streaming";
    app.post(
      handler.requestPath,
      async (context) => {
        const x = exchangeOf(context);
        const universal = universalServerRequestFromFetch(context.request, { httpVersion: "1.1" });
        // The router's gate and the implementation note the principal (and an ingest's
        // service and 401 reason) here; the access log reads them from the exchange. The call
        // runs under the request id this response carries (audit events name it).
        const values = createContextValues().set(requestIdKey, x.requestId);
        x.values = values;
        universal.contextValues = values;
        // A stream that must end (StreamFeed) resets the connection of a reader that does not
        // take its ending status within the grace, as the gRPC port resets its HTTP/2 stream.
        const guard = streaming ? stallGuard() : null;
        // Connect over HTTP/1.1 has no pings: a quiet stream must outlast the idle timeout.
        if (streaming) keepOpen(context.request);
        if (guard) values.set(streamEndKey, guard.endSoon);
        let answer: Response;
        if (x.span === null) answer = universalServerResponseToFetch(await handler(universal));
        else {
          // Its span is named by the RPC method; the gate's lookups and the call are its children.
          edge.rpcCall(x, service, method);
          values.set(traceSpanKey, x.span);
          answer = universalServerResponseToFetch(await edge.within(x, () => handler(universal)));
        }
        if (!guard || answer.body === null) return answer;
        return new Response(guard.body(answer.body), { status: answer.status, headers: answer.headers });
      },
      // The handler reads the body itself, bounded by the router's readMaxBytes; hidden from
      // the OpenAPI document, which describes the REST surface (docs/rpc.md covers these).
      { parse: "none", detail: { hide: true } },
    );
  }
  return app;
}
