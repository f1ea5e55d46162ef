/**
 * The gRPC listener (HTTP/2 cleartext, INTAKE_GRPC_PORT): the same router, gate and
 * interceptor as the main port, with plain gRPC enabled (it needs HTTP/2 trailers, which
 * node:http2 sends), plus the standard grpc.health.v1.Health and server reflection.
 */
import {
  constants,
  createServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
} from "node:http2";
import type { AddressInfo } from "node:net";
import { type ContextValues, createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health } from "../../gen/grpc/health/v1/health_pb.ts";
import type { Tracer, TraceSpan } from "../domain/ports/tracer.ts";
import type { Logger } from "../logger.ts";
import { requestIdKey, streamEndKey, traceSpanKey } from "./context.ts";
import { createGrpcHealth } from "./grpc-health.ts";
import { createGrpcReflection, REFLECTION_SERVICES } from "./grpc-reflection.ts";
import type { Exchange, RequestObserver } from "./observe.ts";
import { POLICY } from "./policy.ts";
import { RPC_SERVICE_NAMES, type RpcRouterDeps, registerServices, rpcRouterOptions } from "./router.ts";

/**
 * How long a stream that must end has to flush its ending status before its HTTP/2 stream is
 * reset: a reader that stopped reading never takes it, and SPEC §10 closes the stream within a
 * second of a revoke, of which the end-condition check takes up to its own interval.
 */
export const STALLED_END_GRACE_MS = 300;

/**
 * `grpc-message` in the gRPC spec's own percent-encoding: only bytes outside printable ASCII,
 * and "%", are escaped. connect-es escapes with encodeURIComponent (":" becomes "%3A", valid
 * but more than needed) and @grpc/grpc-js decodes with decodeURI, which leaves "%3A" as it
 * is, so grpc-js callers read "Authorization%3A Bearer". The minimal form reads the same in
 * every decoder (docs/rpc.md).
 */
export function canonicalGrpcMessage(wire: string): string {
  let text: string;
  try {
    text = decodeURIComponent(wire);
  } catch {
    return wire;
  }
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export interface GrpcListener {
  /** The bound port (the ephemeral one when asked for port 0). */
  readonly port: number;
  /**
   * Drains: health turns NOT_SERVING, Watch streams end, every connection gets GOAWAY (its
   * in-flight calls finish, no new ones start), and connections still open after `drainMs`
   * are cut.
   */
  close(): Promise<void>;
}

export interface GrpcListenOptions {
  port: number;
  host: string;
  logger: Logger;
  /** How long in-flight calls get to finish on close (default 10 s). */
  drainMs?: number;
  /** Metrics and the access log, as on the main port (docs/operations.md). */
  requests?: RequestObserver;
}

/** The RPC paths this listener serves: the route label of a call; anything else is `unmatched`. */
const RPC_PATHS = new Set(Object.keys(POLICY).map((method) => `/${method}`));
/** The services behind those paths, to tell an unknown method from an unknown service. */
const RPC_SERVICES = new Set(Object.keys(POLICY).map((method) => method.split("/")[0]));

function headerValue(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? (value[0] ?? null) : value;
}

/** A call's server span, continuing the caller's `traceparent`; an intake.v1 path names it by its RPC method. */
function openGrpcSpan(tracer: Tracer, req: Http2ServerRequest, path: string, values: ContextValues): TraceSpan | null {
  const span = tracer.serverSpan({
    method: req.method,
    scheme: "http",
    host: () => headerValue(req.headers[":authority"]) ?? headerValue(req.headers.host),
    headers: (name) => headerValue(req.headers[name]),
  });
  if (span === null) return null;
  const [, service, method] = /^\/([^/]+)\/([^/]+)$/.exec(path) ?? [];
  if (RPC_PATHS.has(path) && service !== undefined && method !== undefined) tracer.rpcCall(span, service, method);
  values.set(traceSpanKey, span);
  return span;
}

/**
 * A path no handler serves. A gRPC or gRPC-Web caller gets the gRPC answer for it, status 12
 * UNIMPLEMENTED in HTTP 200's trailers (grpc-go's wording), rather than a bare 404 that
 * clients report as "HTTP status 404"; anything else keeps connect-node's 404, which is the
 * Connect protocol's answer for an unknown procedure (Connect clients read it as
 * `unimplemented`).
 */
function unimplemented(req: Http2ServerRequest, res: Http2ServerResponse): void {
  const contentType = req.headers["content-type"] ?? "";
  const path = req.url.split("?")[0] ?? "";
  const [, service, method] = /^\/([^/]+)\/([^/]+)$/.exec(path) ?? [];
  const message = canonicalGrpcMessage(
    service === undefined
      ? `malformed method name: ${path}`
      : RPC_SERVICES.has(service)
        ? `unknown method ${method} for service ${service}`
        : `unknown service ${service}`,
  );
  if (/^application\/grpc-web/.test(contentType)) {
    // gRPC-Web carries its trailers in the body: one frame flagged 0x80.
    const trailer = new TextEncoder().encode(`grpc-status: 12\r\ngrpc-message: ${message}\r\n`);
    const frame = new Uint8Array(5 + trailer.length);
    frame[0] = 0x80;
    new DataView(frame.buffer).setUint32(1, trailer.length);
    frame.set(trailer, 5);
    const text = contentType.startsWith("application/grpc-web-text");
    res.writeHead(200, { "content-type": text ? "application/grpc-web-text+proto" : "application/grpc-web+proto" });
    res.end(text ? Buffer.from(frame).toString("base64") : frame);
    return;
  }
  if (/^application\/grpc(\+|;|$)/.test(contentType)) {
    res.writeHead(200, { "content-type": "application/grpc" });
    res.addTrailers({ "grpc-status": "12", "grpc-message": message });
    res.end();
    return;
  }
  res.writeHead(404);
  res.end();
}

export async function listenGrpc(deps: RpcRouterDeps, options: GrpcListenOptions): Promise<GrpcListener> {
  const { logger, drainMs = 10_000 } = options;
  const protocols = { grpc: true };
  const health = createGrpcHealth(RPC_SERVICE_NAMES);
  const seen = options.requests?.timed ? options.requests : null;
  const tracer = deps.tracer ?? null;
  // Each call's context values, made with its exchange below, for the gate and the implementations
  // to note on (the principal, an ingest's service and 401 reason) and the access log to read.
  const callValues = new WeakMap<object, ContextValues>();
  const handler = connectNodeAdapter({
    ...rpcRouterOptions(deps.admission, deps.limits, protocols, tracer),
    // The values the gate and the implementations note on (the principal, an ingest's service
    // and 401 reason), made per request below so the access log can read them afterwards.
    contextValues: (req) => {
      const values = callValues.get(req) ?? createContextValues();
      const stream = (req as Http2ServerRequest).stream;
      // A feed stream that must end: unless its status went out within the grace (its
      // reader stopped reading), RST_STREAM(CANCEL) closes it whatever the reader does.
      values.set(streamEndKey, () => {
        setTimeout(() => {
          if (!stream.closed && !stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
        }, STALLED_END_GRACE_MS).unref();
      });
      return values;
    },
    routes: (router) => {
      registerServices(deps, protocols)(router);
      router.service(Health, health.impl);
      // Reflection lists what this router serves, itself included, so a service registered
      // above can never be missing from `list_services`.
      const served = [...router.handlers.map((h) => h.service), ...REFLECTION_SERVICES];
      const reflection = createGrpcReflection(served);
      router.service(REFLECTION_SERVICES[0], reflection.v1);
      router.service(REFLECTION_SERVICES[1], reflection.v1alpha);
    },
    fallback: (req, res) => unimplemented(req as Http2ServerRequest, res as Http2ServerResponse),
  });

  const server = createServer((req, res) => {
    // A call answered before its request was read to the end (an oversized message, a
    // rejected credential) leaves the stream half-open while the client waits on flow control,
    // and a drain would wait for it. RFC 9113 §8.1: after a complete response the server may
    // end such a stream with RST_STREAM(NO_ERROR).
    req.stream.once("finish", () => {
      if (!req.complete && !req.stream.closed) req.stream.close(constants.NGHTTP2_NO_ERROR);
    });
    const path = req.url.split("?")[0] ?? "";
    const values = seen || tracer ? createContextValues() : null;
    if (values) callValues.set(req, values);
    const span = tracer && values ? openGrpcSpan(tracer, req, path, values) : null;
    if (seen && values) {
      const declared = Number(req.headers["content-length"]);
      const x: Exchange = {
        method: req.method,
        started: performance.now(),
        requestId: null,
        route: RPC_PATHS.has(path) ? path : "unmatched",
        principal: null,
        serviceId: null,
        heldMs: 0,
        reason: null,
        values,
        bytesIn: Number.isSafeInteger(declared) ? declared : null,
      };
      // A call's whole life: for a server stream (Watch, a feed) that is how long it stayed open.
      res.once("close", () => {
        // The router's gate stamped it on this call's values and in the x-request-id header
        // (absent only when the call never reached the gate, e.g. an unknown path).
        x.requestId = values.get(requestIdKey) ?? null;
        seen.record(x, res.statusCode, null);
      });
    }
    const addTrailers = res.addTrailers.bind(res);
    res.addTrailers = (trailers) => {
      const message = trailers["grpc-message"];
      if (typeof message === "string") trailers["grpc-message"] = canonicalGrpcMessage(message);
      const status = Number(trailers["grpc-status"]);
      if (span && tracer && Number.isInteger(status)) tracer.rpcStatus(span, status);
      addTrailers(trailers);
    };
    if (span && tracer && values) {
      res.once("close", () => {
        const route = RPC_PATHS.has(path) ? path : "unmatched";
        tracer.endServer(span, route, res.statusCode, values.get(requestIdKey) ?? null);
      });
      // The gate's lookups and the call run under the call's span.
      tracer.within(span, () => handler(req, res));
    } else handler(req, res);
  });
  const sessions = new Set<Http2Session>();
  server.on("session", (session: Http2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    // A client that vanishes mid-call must not crash the process.
    session.on("error", (error: unknown) => logger.warn("grpc session error", { error }));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  function close(): Promise<void> {
    closing ??= new Promise<void>((resolve) => {
      health.setServing(false);
      health.endWatches();
      server.close(() => resolve());
      for (const session of sessions) session.close();
      const cut = setTimeout(() => {
        for (const session of sessions) session.destroy();
      }, drainMs);
      cut.unref();
    });
    return closing;
  }

  return { port, close };
}
