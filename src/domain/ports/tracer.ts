/**
 * Traces (SPEC §21, docs/tracing.md): what the listeners, the edge and the composition root
 * ask of a tracer. Only `tracing/otel.ts` knows OpenTelemetry; with no OTLP endpoint
 * configured the composition root hands out no tracer at all (`null`), and every caller skips
 * its tracing on that one check.
 *
 * Spans are opaque here. No method takes a token, secret, payload or tenant name: a server
 * span carries the method, the route template or RPC method, the status and where it was
 * served; a child span names the store or cache operation, never its arguments.
 */

/** Reads one request header (lower-case name); null or undefined when absent. */
export type HeaderLookup = (name: string) => string | null | undefined;

/** An open span (the adapter's own object). */
export type TraceSpan = object;

/** Where a request arrived: the server span's `url.scheme`, `server.address`, `server.port`. */
export interface ServerRequest {
  method: string;
  scheme: string;
  /** The Host (or :authority) the caller named, when it named one (read only for a traced request). */
  host(): string | null;
  headers: HeaderLookup;
}

/** The ingest commit one request waits for (its child span, linked to the batch's commit span). */
export type CommitWait = object;

export interface Tracer {
  /**
   * Opens the server span of a request at a listener, continuing the caller's trace when its
   * W3C `traceparent` (and `tracestate`) say so. Null when the sampler dropped it: the request
   * is then handled as with tracing off.
   */
  serverSpan(request: ServerRequest): TraceSpan | null;
  /** The call is an RPC: the span is named `<service>/<method>` and carries the rpc.* attributes. */
  rpcCall(span: TraceSpan, service: string, method: string): void;
  /** The call ended with this gRPC / Connect status code (0 OK). */
  rpcStatus(span: TraceSpan, code: number): void;
  /**
   * Ends the server span: named by `route` (a route template, or the RPC method it was named
   * by), with the status it was answered with.
   */
  endServer(span: TraceSpan, route: string, status: number, requestId: string | null): void;
  /** Runs `fn` with `span` active: the spans opened inside it (store, cache, commit) are its children. */
  within<T>(span: TraceSpan, fn: () => T): T;
  /** A child span of the active span around one asynchronous call (a store transaction, a cache call). */
  child<T>(name: string, attributes: Readonly<Record<string, string | number>>, fn: () => Promise<T>): Promise<T>;
  /** A request starts waiting for a group commit: a child span of its active span (null: none active). */
  commitWait(): CommitWait | null;
  /** The wait ended (its batch committed, or failed with `error`). */
  endCommitWait(wait: CommitWait, error?: unknown): void;
  /**
   * One commit of `size` events: its own span, linked to each request waiting for it and
   * linked from each of their wait spans; `fn` (the write) runs under it.
   */
  commit<R>(waits: ReadonlyArray<CommitWait | null>, size: number, fn: () => Promise<R>): Promise<R>;
  /** Exports what is buffered and stops (app close). */
  shutdown(): Promise<void>;
}
