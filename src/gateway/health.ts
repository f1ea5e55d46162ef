import { create } from "@bufbuild/protobuf";
import { createContextValues } from "@connectrpc/connect";
import { Elysia } from "elysia";
import { GetHealthRequestSchema } from "../../gen/intake/v1/health_pb.ts";
import { createRequestIdGenerator } from "../domain/ids.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { observeNative, type RequestObserver } from "../rpc/observe.ts";
import { ELYSIA_SETTINGS, JSON_TYPE, REQUEST_ID_HEADER } from "./http.ts";
import { Health } from "./schemas.ts";

/** No auth, no store, no cache (docs/api.md): the body is built once, at start, by the rpc implementation. */
export async function healthBody(impls: RpcImpls): Promise<string> {
  const answer = await impls.health.getHealth(create(GetHealthRequestSchema), { values: createContextValues() });
  return JSON.stringify({ status: answer.status, version: answer.version });
}

export function healthRoutes(body: string) {
  return new Elysia({ ...ELYSIA_SETTINGS, name: "health" }).get(
    "/v1/health",
    () => new Response(body, { headers: { "content-type": JSON_TYPE } }),
    {
      parse: "none",
      response: { 200: Health },
      detail: { summary: "Liveness probe and deployed version", tags: ["Health"], security: [] },
    },
  );
}

/**
 * The probe as a Bun.serve native route: load balancers call it constantly, and Elysia's
 * dispatch was most of its cost (bench/README.md, scenario 1). Other methods on the path fall
 * through to the gateway, which answers 405 with Allow. It is counted and logged like any other
 * route (docs/operations.md): a probe's rate is worth seeing, and its cost is a few counters.
 * Bun sets the Content-Length of a string body itself; an explicit one cost the probe about 3%
 * of its CPU per request, and the access log has the size from the body it was given.
 */
export function nativeHealthRoutes(body: string, seen: RequestObserver) {
  const newRequestId = createRequestIdGenerator();
  const probe = () =>
    new Response(body, { headers: { "content-type": JSON_TYPE, [REQUEST_ID_HEADER]: newRequestId() } });
  return { "/v1/health": { GET: observeNative(probe, seen, "/v1/health", Buffer.byteLength(body)) } };
}
