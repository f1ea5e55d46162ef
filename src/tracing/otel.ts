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
  isSpanContextValid,
  type Link,
  ROOT_CONTEXT,
  SamplingDecision,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
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

/**
 * How a request is decided before anything of it is made (bench scenarios 2 and 3, the tracing
 * rows): `root` decides a request without a caller's `traceparent` ("on", "off", or a ratio
 * sampler to ask with a fresh trace id); `followsParent`: a caller's unsampled trace is not
 * traced here either (the parent-based samplers' default).
 */
interface Decision {
  sampler: Sampler;
  root: "on" | "off" | TraceIdRatioBasedSampler;
  followsParent: boolean;
}

function decisionOf(config: TracingConfig["sampler"]): Decision {
  const ratio = () => new TraceIdRatioBasedSampler(config.ratio);
  switch (config.kind) {
    case "always_on":
      return { sampler: new AlwaysOnSampler(), root: "on", followsParent: false };
    case "always_off":
      return { sampler: new AlwaysOffSampler(), root: "off", followsParent: false };
    case "traceidratio": {
      const root = ratio();
      return { sampler: root, root, followsParent: false };
    }
    case "parentbased_always_off":
      return { sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), root: "off", followsParent: true };
    case "parentbased_traceidratio": {
      const root = ratio();
      return { sampler: new ParentBasedSampler({ root }), root, followsParent: true };
    }
    default:
      return { sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }), root: "on", followsParent: true };
  }
}

const COMMIT_SPAN = "ingest commit";

/**
 * The configured sampler, except for a commit's span: it has no parent (a commit serves many
 * requests), and it is made only when a traced request waits for it (`commit` below), so it is
 * sampled when any span it links to is, whatever the ratio.
 */
function withCommits(inner: Sampler): Sampler {
  return {
    shouldSample(context, traceId, name, kind, attributes, links) {
      if (name === COMMIT_SPAN && links.some((link) => (link.context.traceFlags & TraceFlags.SAMPLED) !== 0))
        return { decision: SamplingDecision.RECORD_AND_SAMPLED };
      return inner.shouldSample(context, traceId, name, kind, attributes, links);
    },
    toString: () => `IntakeCommits{${inner.toString()}}`,
  };
}

/**
 * Random ids, but for a trace id decided before its span was started: the SDK then starts the
 * span with the id the sampler already accepted (`serverSpan`), so the two decisions agree.
 */
function pinnableIds() {
  const random = new RandomIdGenerator();
  let pinned: string | null = null;
  const generator: IdGenerator = {
    generateTraceId() {
      const id = pinned ?? random.generateTraceId();
      pinned = null;
      return id;
    },
    generateSpanId: () => random.generateSpanId(),
  };
  return {
    generator,
    fresh: () => random.generateTraceId(),
    pin(traceId: string | null) {
      pinned = traceId;
    },
  };
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
  const decision = decisionOf(config.sampler);
  const ids = pinnableIds();
  const provider = new TracerProvider({
    resource,
    sampler: withCommits(decision.sampler),
    idGenerator: ids.generator,
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporterOf(config) })],
  });
  const tracer = provider.getTracer("intake", version);
  const contexts = new AsyncLocalStorageContextManager();
  contexts.enable();
  const propagator = new W3CTraceContextPropagator();

  const active = (): Context => contexts.active();

  async function childSpan<T>(name: string, attributes: Attributes, parent: Context, fn: () => Promise<T>): Promise<T> {
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
  }

  async function commitSpan<R>(
    waits: ReadonlyArray<CommitWait | null>,
    links: Link[],
    size: number,
    fn: () => Promise<R>,
  ): Promise<R> {
    // Its own trace: a commit serves many requests, each linked to it and it to each.
    const span = tracer.startSpan(
      COMMIT_SPAN,
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
  }

  return {
    serverSpan(request: ServerRequest): TraceSpan | null {
      // Decided before anything is made: a request that is not traced costs a header lookup
      // (and, at a ratio, a trace id) and nothing else; no span, context or attribute.
      let parent = ROOT_CONTEXT;
      let pinned: string | null = null;
      if (request.headers("traceparent") == null) {
        if (decision.root === "off") return null;
        if (decision.root !== "on") {
          pinned = ids.fresh();
          if (decision.root.shouldSample(ROOT_CONTEXT, pinned).decision !== SamplingDecision.RECORD_AND_SAMPLED)
            return null;
        }
      } else {
        parent = propagator.extract(ROOT_CONTEXT, request.headers, getter);
        const caller = trace.getSpanContext(parent);
        if (
          decision.followsParent &&
          caller !== undefined &&
          isSpanContextValid(caller) &&
          (caller.traceFlags & TraceFlags.SAMPLED) === 0
        )
          return null;
      }
      const attributes: Attributes = { "http.request.method": request.method, "url.scheme": request.scheme };
      const host = request.host();
      if (host) {
        const colon = host.lastIndexOf(":");
        const bracket = host.lastIndexOf("]");
        if (colon > bracket) {
          attributes["server.address"] = host.slice(0, colon);
          const port = Number(host.slice(colon + 1));
          if (Number.isInteger(port)) attributes["server.port"] = port;
        } else attributes["server.address"] = host;
      }
      ids.pin(pinned);
      const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes }, parent);
      ids.pin(null);
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
    child(name, attributes, fn) {
      const parent = active();
      // Work outside a traced request (an untraced one, retention, the writer's background)
      // makes no span and runs as it would untraced.
      if (trace.getSpan(parent) === undefined) return fn();
      return childSpan(name, attributes, parent, fn);
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
    commit(waits, size, fn) {
      const links: Link[] = [];
      for (const w of waits) if (w !== null) links.push({ context: (w as Wait).span.spanContext() });
      // No traced request waits for it: no span for this commit. The committer's timer and
      // its chain of flushes may have been started inside a traced request and carry its
      // context; the write must not become a child of that request (ended long since).
      if (links.length === 0) return trace.getSpan(active()) === undefined ? fn() : contexts.with(ROOT_CONTEXT, fn);
      return commitSpan(waits, links, size, fn);
    },
    async shutdown() {
      // A collector that is down loses these spans; it never stops the shutdown.
      await provider.shutdown().catch(() => {});
      contexts.disable();
    },
  };
}
