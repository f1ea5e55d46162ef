/**
 * The Tracer port over OpenTelemetry (docs/tracing.md): the only module importing it, loaded
 * by the composition root only when an OTLP endpoint is configured (SPEC §21).
 *
 * Spans go through a batch processor to the OTLP/HTTP exporter of the configured protocol
 * (`http/protobuf` or `http/json`); the exporter reads its own variables (endpoint, headers,
 * timeout). The context of the active span lives in an AsyncLocalStorage held by this tracer
 * alone: nothing is registered globally, so two apps in one process trace apart.
 */
import {
  type Attributes,
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type { TracingConfig } from "../config-tracing.ts";
import type { CommitWait, HeaderLookup, ServerRequest, Tracer, TraceSpan } from "../domain/ports/tracer.ts";

const getter: TextMapGetter<HeaderLookup> = {
  get: (lookup, key) => lookup(key) ?? undefined,
  keys: () => ["traceparent", "tracestate"],
};

function samplerOf(config: TracingConfig["sampler"]): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.ratio);
  switch (config.kind) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio();
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

async function exporterOf(config: TracingConfig): Promise<SpanExporter> {
  if (config.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter();
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter();
}

/** What a server span learns after it opens: the name it ends with when it is an RPC. */
interface ServerSpan {
  span: Span;
  context: Context;
  method: string;
  rpcName: string | null;
}

/** `/v1/services/:id` → `/v1/services/{id}`: the semantic conventions' form of a route template. */
function templateOf(route: string): string {
  let template = templates.get(route);
  if (template === undefined) {
    template = route.replace(/:([A-Za-z_]+)/g, "{$1}");
    // The routes are a fixed set from the code; the bound only guards against a surprise.
    if (templates.size < 1000) templates.set(route, template);
  }
  return template;
}
const templates = new Map<string, string>();

interface Wait {
  span: Span;
}

export async function createOtelTracer(config: TracingConfig, version: string): Promise<Tracer> {
  const resource = resourceFromAttributes({
    "service.name": config.serviceName,
    "service.version": version,
  }).merge(resourceFromAttributes(envDetector.detect().attributes ?? {}));
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(config.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporterOf(config) })],
  });
  const tracer = provider.getTracer("intake", version);
  const contexts = new AsyncLocalStorageContextManager();
  contexts.enable();
  const propagator = new W3CTraceContextPropagator();

  const active = (): Context => contexts.active();

  return {
    serverSpan(request: ServerRequest): TraceSpan | null {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, getter);
      const attributes: Attributes = { "http.request.method": request.method, "url.scheme": request.scheme };
      if (request.host) {
        const colon = request.host.lastIndexOf(":");
        const bracket = request.host.lastIndexOf("]");
        if (colon > bracket) {
          attributes["server.address"] = request.host.slice(0, colon);
          const port = Number(request.host.slice(colon + 1));
          if (Number.isInteger(port)) attributes["server.port"] = port;
        } else attributes["server.address"] = request.host;
      }
      const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
      // Not sampled: its children would not be either (every sampler offered is parent-based or
      // decides on the trace id), so nothing of this request is traced further.
      if (!span.isRecording()) return null;
      const server: ServerSpan = { span, context: trace.setSpan(parent, span), method: request.method, rpcName: null };
      return server;
    },
    rpcCall(s, service, method) {
      const server = s as ServerSpan;
      if (server.rpcName !== null) return;
      server.rpcName = `${service}/${method}`;
      server.span.setAttributes({ "rpc.system": "grpc", "rpc.service": service, "rpc.method": method });
    },
    rpcStatus(s, code) {
      (s as ServerSpan).span.setAttribute("rpc.grpc.status_code", code);
    },
    endServer(s, route, status, requestId) {
      const { span, method, rpcName } = s as ServerSpan;
      if (rpcName === null && route !== "unmatched") {
        const template = templateOf(route);
        span.updateName(`${method} ${template}`);
        span.setAttribute("http.route", template);
      } else if (rpcName !== null) span.updateName(rpcName);
      span.setAttribute("http.response.status_code", status);
      if (requestId !== null) span.setAttribute("intake.request_id", requestId);
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute("error.type", String(status));
      }
      span.end();
    },
    within(s, fn) {
      return contexts.with((s as ServerSpan).context, fn);
    },
    async child(name, attributes, fn) {
      const parent = active();
      // Work outside any request (retention, the writer's background) makes no trace of its own.
      if (trace.getSpan(parent) === undefined) return fn();
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
      try {
        return await contexts.with(trace.setSpan(parent, span), fn);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute("error.type", error instanceof Error ? error.name : "error");
        throw error;
      } finally {
        span.end();
      }
    },
    commitWait(): CommitWait | null {
      const parent = active();
      if (trace.getSpan(parent) === undefined) return null;
      const wait: Wait = { span: tracer.startSpan("ingest commit wait", { kind: SpanKind.INTERNAL }, parent) };
      return wait;
    },
    endCommitWait(w, error) {
      const { span } = w as Wait;
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
    async commit(waits, size, fn) {
      const links: Link[] = [];
      for (const w of waits) if (w !== null) links.push({ context: (w as Wait).span.spanContext() });
      // Its own trace: a commit serves many requests, each linked to it and it to each.
      const span = tracer.startSpan(
        "ingest commit",
        { kind: SpanKind.INTERNAL, root: true, links, attributes: { "intake.commit.events": size } },
        ROOT_CONTEXT,
      );
      const link: Link = { context: span.spanContext() };
      for (const w of waits) if (w !== null) (w as Wait).span.addLink(link);
      try {
        return await contexts.with(trace.setSpan(ROOT_CONTEXT, span), fn);
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
    async shutdown() {
      // A collector that is down loses these spans; it never stops the shutdown.
      await provider.shutdown().catch(() => {});
      contexts.disable();
    },
  };
}
