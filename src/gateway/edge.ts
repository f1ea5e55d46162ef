/**
 * The edge pipeline: what every REST request gets, in this order, and nowhere else.
 *
 *   1. begin      its exchange: a fresh X-Request-Id (never the caller's), the clock when
 *                 something records it (metrics or the access log)
 *   2. route      the route template it matched (the router's; `unmatched` for none; a 405's
 *                 path template)
 *   3. admission  the operation's policy (rpc/policy.ts, rpc/admission.ts, shared with RPC):
 *                 401 → 429 → 403 scope → 403 role; the RateLimit decision is kept
 *   4. input      an unknown target (404) → the body: 413 → 415 → 400 (body.ts) → numbers
 *                 (strict-numbers.ts: no string where a number goes) → the schemas
 *   5. the call   the operation's handler, over the domain
 *   6. answer     the handler's Response, or the error answer (errors.ts, one error table)
 *   7. finish     X-Request-Id and the RateLimit fields on the answer; `Cache-Control: no-store`
 *                 on /v1; the CORS fields (cors.ts, INTAKE_CORS_ORIGINS); a HEAD's answer
 *                 without its body (a stream's cancelled); a body of 1 KiB or more compressed
 *                 when the client offers gzip or br (compression.ts); then `record`: the HTTP
 *                 series and the access-log line (rpc/observe.ts, shared with the gRPC port)
 *
 * A tracing span, when tracing is on (docs/tracing.md), opens in `begin` (continuing the
 * caller's `traceparent`), is the active span through steps 3 to 5 (`within`: the store, cache
 * and commit spans those steps open are its children) and closes in `finish`, named by the
 * route template. Off, the exchange's `span` stays null and each step's one check skips it.
 *
 * Each request carries its `RestExchange`, passed explicitly from step to step. Two routers
 * lead into these steps and nothing else: Elysia's routes (gateway.ts; step 4's schemas are
 * Elysia's validators, between `transform` and the handler) and, under `serve`, the Bun
 * native routes of the operations declared `native` (native-routes.ts), which decode only a
 * plain path and query themselves and hand anything else to Elysia before step 1.
 */
import { ConnectError } from "@connectrpc/connect";
import { createRequestIdGenerator } from "../domain/ids.ts";
import type { Limits } from "../domain/limits.ts";
import type { Maybe } from "../domain/maybe.ts";
import type { RateDecision } from "../domain/ports/rate-limiter.ts";
import type { Tracer, TraceSpan } from "../domain/ports/tracer.ts";
import { RateLimitedError } from "../domain/rate-limits.ts";
import type { Principal } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import type { Admission } from "../rpc/admission.ts";
import { connectErrorFor } from "../rpc/errors.ts";
import { declaredLength, type Exchange, measuredResponse, type RequestObserver } from "../rpc/observe.ts";
import { POLICY } from "../rpc/policy.ts";
import {
  RATE_LIMIT_HEADER,
  RATE_LIMIT_POLICY_HEADER,
  RETRY_AFTER_HEADER,
  setRateLimitHeaders,
} from "../rpc/rate-limit.ts";
import { judgeBody } from "./body.ts";
import { compressed, compressibleType, pickEncoding } from "./compression.ts";
import type { Cors } from "./cors.ts";
import { responseForError } from "./errors.ts";
import { pathAndQuery, REQUEST_ID_HEADER, readCapped } from "./http.ts";
import type { Call, Operation } from "./operation.ts";
import { checkNumbers } from "./strict-numbers.ts";

/** A REST request's exchange: what every step reads and notes. */
export interface RestExchange extends Exchange {
  readonly request: Request;
  readonly requestId: string;
  /** The rate-limit decision the request was taken under (null: its route is not limited). */
  rate: RateDecision | null;
  /** Step 7 ran: Elysia hands an error's answer to its response hook too, and it is finished once. */
  finished: boolean;
  /** Its server span (null: tracing is off). */
  readonly span: TraceSpan | null;
}

/** A body route's raw bytes, buffered by Elysia's `parse` before anything judges them (`null`: over the cap). */
export class Buffered {
  constructor(readonly raw: Uint8Array | null) {}
}

/** What step 4 hands the call: the caller and the decoded body. */
interface Entered {
  principal: Principal | null;
  body: unknown;
}

export interface EdgeDeps {
  admission: Admission;
  limits: Limits;
  logger: Logger;
  requests: RequestObserver;
  /** Traces (docs/tracing.md); null or absent when no OTLP endpoint is configured. */
  tracer?: Tracer | null;
  /** INTAKE_CORS_ORIGINS' fields (cors.ts); null: none listed, no CORS header is written. */
  cors?: Cors | null;
}

/** A request URL whose path is under /v1 (scanned in place: no string is made). */
function underV1(url: string): boolean {
  return url.startsWith("/v1/", url.indexOf("/", url.indexOf("//") + 2));
}

/** A route of the RPC protocols (Connect, gRPC-Web): they negotiate compression themselves. */
function rpcRoute(route: string): boolean {
  return route.startsWith("/intake.") || route.startsWith("/grpc.");
}

/**
 * A HEAD's answer. Elysia answers a HEAD with its GET route and sends the answer's fields
 * with its body's length and no body; it reads the body for that length, which for a stream
 * never ends. So a stream's body (a type not worth compressing: SSE, Connect's) is cancelled
 * here and the answer goes without it (its Content-Length then reads 0).
 */
function headOnly(response: Response): Response {
  const headers = response.headers;
  if (compressibleType(headers.get("content-type")) && !headers.has("content-encoding")) return response;
  response.body?.cancel().catch(() => {});
  return new Response(null, { status: response.status, statusText: response.statusText, headers });
}

export function createEdge(deps: EdgeDeps) {
  const { admission, limits, logger, requests } = deps;
  const tracer = deps.tracer ?? null;
  const cors = deps.cors ?? null;
  const newRequestId = createRequestIdGenerator();
  const bodyCap = limits.managementBodyBytes;

  /** 1. */
  function begin(request: Request): RestExchange {
    return {
      request,
      method: request.method,
      started: requests.timed ? performance.now() : 0,
      requestId: newRequestId(),
      route: "unmatched",
      principal: null,
      serviceId: null,
      reason: null,
      values: null,
      bytesIn: null,
      heldMs: 0,
      rate: null,
      finished: false,
      span: tracer === null ? null : openSpan(tracer, request),
    };
  }

  /** Runs `fn` under the exchange's span (the edge's steps 3 to 5, an RPC call on the main port). */
  function within<T>(x: RestExchange, fn: () => T): T {
    return x.span === null || tracer === null ? fn() : tracer.within(x.span, fn);
  }

  function admitted(x: RestExchange, principal: Principal, rate: RateDecision | null): Principal {
    x.principal = principal;
    x.rate = rate;
    return principal;
  }

  /** 3. Synchronous when the token is in the in-process cache (and the limiter in process). */
  function admit(x: RestExchange, op: Operation): Maybe<Principal | null> {
    if (!POLICY[op.rpc].bearer) return null;
    const pending = admission.admit(x.request.headers.get("authorization"), op.rpc);
    return pending instanceof Promise
      ? pending.then((a) => admitted(x, a.principal, a.rate))
      : admitted(x, pending.principal, pending.rate);
  }

  function checkParams(op: Operation, params: Record<string, unknown>): void {
    // A path segment that is not valid percent-encoding (`%E0%A4%A`) reaches a route as null,
    // and would fail the params schema as a 400: it names no resource, so it is a 404. (An
    // operation without a bearer token, ingest, judges its own id: the same 401 as any other.)
    const open = !POLICY[op.rpc].bearer;
    for (const key in params) {
      if (typeof params[key] === "string") continue;
      if (open) params[key] = "";
      else throw connectErrorFor("not_found", "No such resource.");
    }
  }

  /** 4, up to the schemas. */
  async function judged(
    x: RestExchange,
    op: Operation,
    principal: Principal | null,
    params: Record<string, string>,
    raw: unknown,
    query: unknown,
  ): Promise<Entered> {
    if (op.exists) await op.exists({ x, request: x.request, principal, params, query: undefined, body: undefined });
    const buffered = raw instanceof Buffered ? raw.raw : new Uint8Array(0);
    const body = judgeBody(buffered, x.request.headers.get("content-type"), bodyCap);
    checkNumbers(op.schemas, query, body);
    return { principal, body };
  }

  /** 4 up to the schemas, after admission (401 before a 404 for the path's id). */
  function entered(
    x: RestExchange,
    op: Operation,
    principal: Principal | null,
    params: Record<string, string>,
    raw: unknown,
    query: unknown,
  ): Maybe<Entered> {
    checkParams(op, params);
    if (op.body === "json") return judged(x, op, principal, params, raw, query);
    checkNumbers(op.schemas, query, undefined);
    return { principal, body: undefined };
  }

  /** 3 and 4 up to the schemas (Elysia's `transform`). */
  function enter(
    x: RestExchange,
    op: Operation,
    params: Record<string, string>,
    raw: unknown,
    query: unknown,
  ): Maybe<Entered> {
    if (x.span !== null) return within(x, () => enterNow(x, op, params, raw, query));
    return enterNow(x, op, params, raw, query);
  }

  function enterNow(
    x: RestExchange,
    op: Operation,
    params: Record<string, string>,
    raw: unknown,
    query: unknown,
  ): Maybe<Entered> {
    const principal = admit(x, op);
    return principal instanceof Promise
      ? principal.then((p) => entered(x, op, p, params, raw, query))
      : entered(x, op, principal, params, raw, query);
  }

  /** 5. */
  function call(
    x: RestExchange,
    op: Operation,
    principal: Principal | null,
    params: Record<string, string>,
    query: unknown,
    body: unknown,
  ): Maybe<Response> {
    const input: Call = { x, request: x.request, principal, params, query, body };
    if (x.span !== null) return within(x, () => op.handle(input));
    return op.handle(input);
  }

  /** 6, for an error: the contract's answer, with the RateLimit fields a refusal carries. */
  function refuse(x: RestExchange, error: unknown): Response {
    const response = responseForError(error, x.requestId, logger);
    // A 429 carries its decision; a refusal raised by admission (429, 403), its error's metadata.
    if (error instanceof RateLimitedError) setRateLimitHeaders(response.headers, error.decision);
    else if (error instanceof ConnectError) {
      for (const name of [RATE_LIMIT_POLICY_HEADER, RATE_LIMIT_HEADER, RETRY_AFTER_HEADER]) {
        const value = error.metadata.get(name);
        if (value !== null) response.headers.set(name, value);
      }
    }
    return response;
  }

  function recorded(x: RestExchange, response: Response): Response | Promise<Response> {
    if (!requests.accessLog) {
      requests.record(x, response.status, null);
      return response;
    }
    x.bytesIn = declaredLength(x.request.headers, () => x.request.body !== null);
    if (x.serviceId === null && (x.route.startsWith("/v1/services/:id") || x.route === "/v1/ingest/:service_id")) {
      x.serviceId = serviceIdInPath(x.request.url);
    }
    return measuredResponse(response).then(({ response: measured, bytes }) => {
      requests.record(x, measured.status, bytes);
      return measured;
    });
  }

  /** 7. */
  function finish(x: RestExchange, answer: Response): Response | Promise<Response> {
    if (x.finished) return answer;
    x.finished = true;
    let response = answer;
    try {
      response.headers.set(REQUEST_ID_HEADER, x.requestId);
    } catch {
      // Immutable headers (Response.redirect): a copy carries them.
      response = new Response(answer.body, answer);
      response.headers.set(REQUEST_ID_HEADER, x.requestId);
    }
    const headers = response.headers;
    // After a decision, every answer of a limited route carries its fields (docs/rate-limits.md).
    if (x.rate) setRateLimitHeaders(headers, x.rate);
    if (x.span !== null) tracer?.endServer(x.span, x.route, response.status, x.requestId);
    // Several /v1 answers carry a token or a secret: no cache keeps any of them.
    const v1 = underV1(x.request.url);
    if (v1) headers.set("cache-control", "no-store");
    if (cors !== null) cors.decorate(x.route, x.request.headers.get("origin"), headers);
    if (x.method === "HEAD") response = headOnly(response);
    // A /v1 answer without a caller (the probe, an ingest ack, a setup result, a 401) is small:
    // not even the request's fields are read for it (bench scenario 1's probe reads none).
    else if (!v1 || x.principal !== null) {
      const accept = x.request.headers.get("accept-encoding");
      const encoding = accept === null ? null : compressible(x, response) ? pickEncoding(accept) : null;
      if (encoding !== null) {
        const shrunk = compressed(response, encoding);
        return requests.timed ? shrunk.then((r) => recorded(x, r)) : shrunk;
      }
    }
    return requests.timed ? recorded(x, response) : response;
  }

  /** Worth compressing in step 7: a text body the route built, not a stream's, not encoded yet. */
  function compressible(x: RestExchange, response: Response): boolean {
    const status = response.status;
    if (status === 204 || status === 304 || status < 200 || rpcRoute(x.route)) return false;
    const headers = response.headers;
    return !headers.has("content-encoding") && compressibleType(headers.get("content-type"));
  }

  /** A CORS preflight (OPTIONS) on a path whose route allows `methods`; null when it is not one to answer. */
  function preflight(x: RestExchange, methods: readonly string[]): Response | null {
    return cors === null ? null : cors.preflight(x.route, methods, x.request);
  }

  /** Steps 1 to 7 in one go, for a native route: its path and query were decoded by native-routes.ts. */
  function serve(
    op: Operation,
    request: Request,
    params: Record<string, string>,
    query: unknown,
  ): Response | Promise<Response> {
    const x = begin(request);
    x.route = op.path;
    return x.span === null ? serveNow(x, op, params, query) : within(x, () => serveNow(x, op, params, query));
  }

  function serveNow(
    x: RestExchange,
    op: Operation,
    params: Record<string, string>,
    query: unknown,
  ): Response | Promise<Response> {
    let answer: Maybe<Response>;
    try {
      const principal = admit(x, op);
      answer =
        principal instanceof Promise
          ? principal.then((p) => call(x, op, p, params, query, undefined))
          : call(x, op, principal, params, query, undefined);
    } catch (error) {
      return finish(x, refuse(x, error));
    }
    if (!(answer instanceof Promise)) return finish(x, answer);
    return answer.then(
      (response) => finish(x, response),
      (error: unknown) => finish(x, refuse(x, error)),
    );
  }

  /** The main port's Connect or gRPC-Web call: its span is named by the RPC method (rpc.ts). */
  function rpcCall(x: RestExchange, service: string, method: string): void {
    if (x.span !== null) tracer?.rpcCall(x.span, service, method);
  }

  return {
    begin,
    within,
    rpcCall,
    enter,
    call,
    refuse,
    finish,
    preflight,
    serve,
    readBody: (request: Request) => readCapped(request, bodyCap),
  };
}

export type Edge = ReturnType<typeof createEdge>;

/** Elysia's per-request context, which carries the request's exchange from `onRequest` on (gateway.ts). */
interface WithExchange {
  exchange: RestExchange;
}

/** The exchange of an Elysia request context (set by the gateway's `onRequest`). */
export function exchangeOf(context: object): RestExchange {
  return (context as WithExchange).exchange;
}

/** Step 1 for an Elysia request: its exchange, on its context. */
export function attachExchange(context: object, x: RestExchange): void {
  (context as WithExchange).exchange = x;
}

/** A request's server span: the listener is plain HTTP; the Host header names where it was served. */
function openSpan(tracer: Tracer, request: Request): TraceSpan | null {
  const headers = request.headers;
  return tracer.serverSpan({
    method: request.method,
    scheme: "http",
    host: () => headers.get("host"),
    headers: (name) => headers.get(name),
  });
}

const SERVICE_ID = /^svc_[0-9a-f]{32}$/;

/** The `svc_` id of a `/v1/services/<id>…` or `/v1/ingest/<id>` URL, when it is one (the access log's `service_id`). */
function serviceIdInPath(url: string): string | null {
  const segment = pathAndQuery(url)[0].split("/")[3];
  return segment !== undefined && SERVICE_ID.test(segment) ? segment : null;
}
