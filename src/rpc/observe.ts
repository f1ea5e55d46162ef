/**
 * What a listener records of each request it answers (docs/operations.md): its HTTP series
 * through the Observer and, with INTAKE_ACCESS_LOG=true, one JSON line. `record` is the one
 * place both happen: the REST edge (gateway/edge.ts, which also carries the Connect and
 * gRPC-Web calls of the main port) and the gRPC port (grpc-server.ts) call it with the
 * request's `Exchange`.
 *
 * The access log reads what the call learned from the exchange's context values — the
 * principal admission set, the ingest service and the reason of a 401 — after the response is
 * built, so none of it can reach the response.
 */
import type { ContextValues } from "@connectrpc/connect";
import { formatId } from "../domain/ids.ts";
import type { Observer, SignatureFailureReason } from "../domain/ports/observer.ts";
import type { Principal } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { heldMsKey, ingestServiceKey, principalKey, signatureFailureKey } from "./context.ts";

/** One request at a listener: made when it arrives, handed explicitly to every step after. */
export interface Exchange {
  readonly method: string;
  /** performance.now() at arrival; 0 when nothing is recorded (no clock read). */
  readonly started: number;
  /** The X-Request-Id it is answered with. */
  requestId: string | null;
  /** The route template (or RPC path) it matched: never the raw path; `unmatched` until known. */
  route: string;
  /** The verified caller (REST admission notes it here; an RPC call, in `values`). */
  principal: Principal | null;
  /** The service an ingest named, or one the route names in its path (`/v1/services/:id…`). */
  serviceId: string | null;
  /** Why an ingest was refused with 401: the access log's, never the answer's. */
  reason: SignatureFailureReason | null;
  /** An RPC call's context values (its principal, ingest service, 401 reason). */
  values: ContextValues | null;
  /** The declared request body size (null: unknown, a chunked body). */
  bytesIn: number | null;
  /** How long a long poll held its answer waiting for an event: not counted in its duration. */
  heldMs: number;
}

export interface RequestObserver {
  /** Metrics or the access log are on: an exchange is timed. */
  readonly timed: boolean;
  readonly accessLog: boolean;
  /** Records one answered exchange: its HTTP series and, when on, its access-log line. */
  record(x: Exchange, status: number, bytesOut: number | null): void;
}

export function createRequestObserver(deps: {
  observer: Observer;
  metrics: boolean;
  accessLog: boolean;
  logger: Logger;
}): RequestObserver {
  const { observer, accessLog, logger, metrics } = deps;
  return {
    timed: metrics || accessLog,
    accessLog,
    record(x, status, bytesOut) {
      if (!metrics && !accessLog) return;
      // A long poll's wait for an event is the caller's choice, not the server's latency.
      const elapsed = performance.now() - x.started - (x.heldMs || (x.values?.get(heldMsKey) ?? 0));
      if (metrics) observer.httpRequest(x.route, x.method, status, elapsed / 1000);
      if (!accessLog) return;
      const principal = x.principal ?? x.values?.get(principalKey);
      const reason = x.reason ?? x.values?.get(signatureFailureKey);
      logger.access({
        request_id: x.requestId,
        method: x.method,
        route: x.route,
        status,
        duration_ms: Math.round(elapsed * 1000) / 1000,
        token_id: principal ? formatId("tok", principal.tokenId) : null,
        service_id: x.values?.get(ingestServiceKey) ?? x.serviceId,
        bytes_in: x.bytesIn,
        bytes_out: bytesOut,
        ...(reason !== undefined && reason !== null && { reason }),
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
