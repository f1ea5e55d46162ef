/**
 * What a listener records of each request it answers (docs/operations.md): the HTTP series
 * through the Observer and, with INTAKE_ACCESS_LOG=true, one JSON line. Shared by the main
 * port (the gateway and its native health route) and the gRPC port, so both report alike.
 *
 * The access log reads what the call learned from the call's context values — the principal
 * admission set, the ingest service and the reason of a 401 — after the response is built, so
 * none of it can reach the response. When the access log is off nothing is allocated for it.
 */
import type { ContextValues } from "@connectrpc/connect";
import { formatId } from "../domain/ids.ts";
import type { Observer } from "../domain/ports/observer.ts";
import type { Logger } from "../logger.ts";
import { type CallContext, ingestServiceKey, principalKey, signatureFailureKey } from "./context.ts";

const CALL = Symbol("intake.call");
type CallTagged = { [CALL]?: CallContext };

/**
 * Hangs a request's call context on the request object itself (the gateway's hooks and the
 * access log find it there): a property store, cheaper than a WeakMap entry per request.
 */
export function tagCall(request: object, call: CallContext): CallContext {
  (request as CallTagged)[CALL] = call;
  return call;
}

export function callOf(request: object): CallContext | undefined {
  return (request as CallTagged)[CALL];
}

/** One answered request, as the access log reports it. */
export interface Exchange {
  method: string;
  route: string;
  status: number;
  durationMs: number;
  requestId: string | null;
  values: ContextValues | undefined;
  /** A service the route names (e.g. `/v1/services/:id`), when the call did not note one. */
  serviceId: string | null;
  bytesIn: number | null;
  bytesOut: number | null;
}

export interface RequestObserver {
  readonly observer: Observer;
  /** False when neither metrics nor the access log are on: listeners then skip observing. */
  readonly enabled: boolean;
  readonly accessLog: boolean;
  /** Writes one access-log line (call only when `accessLog`). */
  log(exchange: Exchange): void;
}

export function createRequestObserver(deps: {
  observer: Observer;
  metrics: boolean;
  accessLog: boolean;
  logger: Logger;
}): RequestObserver {
  const { observer, accessLog, logger } = deps;
  return {
    observer,
    enabled: deps.metrics || accessLog,
    accessLog,
    log(x) {
      const principal = x.values?.get(principalKey);
      const reason = x.values?.get(signatureFailureKey);
      logger.access({
        request_id: x.requestId,
        method: x.method,
        route: x.route,
        status: x.status,
        duration_ms: Math.round(x.durationMs * 1000) / 1000,
        token_id: principal ? formatId("tok", principal.tokenId) : null,
        service_id: x.values?.get(ingestServiceKey) ?? x.serviceId,
        bytes_in: x.bytesIn,
        bytes_out: x.bytesOut,
        ...(reason !== undefined && { reason }),
      });
    },
  };
}

/**
 * A declared Content-Length, 0 for no body, null when unknown (a chunked body). `hasBody` is
 * asked only without the header: reading `.body` makes Bun build a stream for it.
 */
export function declaredLength(headers: Headers, hasBody: () => boolean): number | null {
  const declared = headers.get("content-length");
  if (declared !== null) {
    const n = Number(declared);
    return Number.isSafeInteger(n) && n >= 0 ? n : null;
  }
  return hasBody() ? null : 0;
}

// Bodies that are streamed for as long as the call lives (SSE, Connect/gRPC streams): their
// size is not known when the line is written.
const STREAMED = /^(text\/event-stream|application\/(connect\+|grpc))/i;

/**
 * The response and its body size for the access log. A body without Content-Length is read
 * once and answered from the bytes (Bun sets the length itself when it sends a string body, so
 * it is not on the Response); streamed bodies are left alone and reported as null.
 */
export async function measuredResponse(response: Response): Promise<{ response: Response; bytes: number | null }> {
  const known = declaredLength(response.headers, () => response.body !== null);
  if (known !== null) return { response, bytes: known };
  if (STREAMED.test(response.headers.get("content-type") ?? "")) return { response, bytes: null };
  const body = await response.arrayBuffer();
  return {
    response: new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    }),
    bytes: body.byteLength,
  };
}

const SERVICE_ID = /^svc_[0-9a-f]{32}$/;

/** The `svc_` id in a path's segment `index`, when it is one. */
export function serviceIdInPath(pathname: string, index: number): string | null {
  const segment = pathname.split("/")[index];
  return segment !== undefined && SERVICE_ID.test(segment) ? segment : null;
}

/**
 * Wraps a fetch handler with the request's access-log line (INTAKE_ACCESS_LOG); without it,
 * the handler itself. The gateway counts its requests for the metrics in its own hooks.
 * `routeOf` names the route template the handler matched (read after it answered);
 * `serviceOf` the service a route names in its path.
 */
export function logFetch(
  handle: (request: Request) => Response | Promise<Response>,
  seen: RequestObserver,
  routeOf: (request: Request) => string,
  serviceOf: (route: string, request: Request) => string | null = () => null,
): (request: Request) => Response | Promise<Response> {
  if (!seen.accessLog) return handle;
  return async (request) => {
    const started = performance.now();
    const answered = await handle(request);
    const elapsed = performance.now() - started;
    const route = routeOf(request);
    const { response, bytes } = await measuredResponse(answered);
    seen.log({
      method: request.method,
      route,
      status: response.status,
      durationMs: elapsed,
      requestId: response.headers.get("x-request-id"),
      values: callOf(request)?.values,
      serviceId: serviceOf(route, request),
      bytesIn: declaredLength(request.headers, () => request.body !== null),
      bytesOut: bytes,
    });
    return response;
  };
}

/**
 * The same for a synchronous Bun.serve native route (the health probe) whose responses all have
 * the body size `bytesOut`: no promise is added to the probe's path.
 */
export function observeNative(
  handle: (request: Request) => Response,
  seen: RequestObserver,
  route: string,
  bytesOut: number,
): (request: Request) => Response {
  if (!seen.enabled) return handle;
  const { observer } = seen;
  return (request) => {
    const started = performance.now();
    const response = handle(request);
    const elapsed = performance.now() - started;
    observer.httpRequest(route, request.method, response.status, elapsed / 1000);
    if (seen.accessLog) {
      seen.log({
        method: request.method,
        route,
        status: response.status,
        durationMs: elapsed,
        requestId: response.headers.get("x-request-id"),
        values: undefined,
        serviceId: null,
        bytesIn: declaredLength(request.headers, () => request.body !== null),
        bytesOut,
      });
    }
    return response;
  };
}
