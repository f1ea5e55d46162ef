/**
 * Connect (JSON and binary) and gRPC-Web on the main port, at /intake.v1.<Service>/<Method>,
 * inside the Elysia app so they share its listener, X-Request-Id and 404/405 handling.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import { universalServerRequestFromFetch, universalServerResponseToFetch } from "@connectrpc/connect/protocol";
import { Elysia } from "elysia";
import { ELYSIA_SETTINGS } from "./http.ts";

/** `router` must have plain gRPC disabled: Bun.serve's HTTP/2 drops trailers. */
export function connectRoutes(router: ConnectRouter) {
  const app = new Elysia({ ...ELYSIA_SETTINGS, name: "rpc" });
  for (const handler of router.handlers) {
    app.post(
      handler.requestPath,
      async ({ request }) =>
        universalServerResponseToFetch(await handler(universalServerRequestFromFetch(request, { httpVersion: "1.1" }))),
      // The handler reads the body itself, bounded by the router's readMaxBytes; hidden from
      // the OpenAPI document, which describes the REST surface (docs/rpc.md covers these).
      { parse: "none", detail: { hide: true } },
    );
  }
  return app;
}
