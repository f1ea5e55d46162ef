/**
 * The REST gateway: the Elysia app that routes every request of the main port into the edge's
 * steps (edge.ts), with the /v1 operations mounted from their declarations (operation.ts), the
 * Connect and gRPC-Web routes, the console, the API docs, /metrics and `/`. Every response
 * carries X-Request-Id; every error leaves in the contract's one shape.
 */
import type { ConnectRouter } from "@connectrpc/connect";
import { Elysia } from "elysia";
import type { Limits } from "../domain/limits.ts";
import type { Tracer } from "../domain/ports/tracer.ts";
import type { Logger } from "../logger.ts";
import type { Admission } from "../rpc/admission.ts";
import type { RequestObserver } from "../rpc/observe.ts";
import { POLICY } from "../rpc/policy.ts";
import { apiDocsRoutes } from "./api-docs.ts";
import { apiTokenOperations } from "./api-tokens.ts";
import { auditOperations } from "./audit.ts";
import { consoleRoutes, withConsoleHeaders } from "./console.ts";
import { createCors } from "./cors.ts";
import { attachExchange, Buffered, createEdge, type Edge, exchangeOf, type RestExchange } from "./edge.ts";
import { errorResponse, validationIssues } from "./errors.ts";
import { feedOperations } from "./feed.ts";
import { healthOperations } from "./health.ts";
import { ELYSIA_SETTINGS } from "./http.ts";
import { incidentOperations } from "./incidents.ts";
import { ingestOperations } from "./ingest.ts";
import { nativeRoutes } from "./native-routes.ts";
import type { Operation, OperationDomain } from "./operation.ts";
import { rootRoutes } from "./root.ts";
import { connectRoutes } from "./rpc.ts";
import { searchOperations } from "./search.ts";
import { serviceOperations } from "./services.ts";
import { setupOperations } from "./setup.ts";
import { tenantOperations } from "./tenant.ts";

export interface GatewayDeps {
  domain: OperationDomain;
  admission: Admission;
  /** The composition root's limits: the management body cap and the event cap. */
  limits: Limits;
  logger: Logger;
  /** The HTTP series and the access log (rpc/observe.ts). */
  requests: RequestObserver;
  /** The deployed version the health probe reports. */
  version: string;
  /** Connect and gRPC-Web at /intake.v1.<Service>/<Method> (a router with plain gRPC off). */
  rpc?: ConnectRouter;
  /** The web console at /console, and GET / redirecting there (INTAKE_CONSOLE). */
  console?: boolean;
  /** GET /openapi.json and GET /docs; null when INTAKE_API_DOCS=false. */
  apiDocs?: { version: string } | null;
  /** INTAKE_CORS_ORIGINS (cors.ts); empty or absent: no CORS headers. */
  corsOrigins?: readonly string[];
  /** GET /metrics; null when INTAKE_METRICS=false. */
  metrics?: MetricsEndpoint | null;
  /** Traces (docs/tracing.md); null or absent when no OTLP endpoint is configured. */
  tracer?: Tracer | null;
}

/** The Prometheus adapter's exposition (docs/operations.md). */
export interface MetricsEndpoint {
  readonly contentType: string;
  exposition(): Promise<string>;
}

const bearerSecurity = [{ bearer: [] }];

function metricsRoutes(metrics: MetricsEndpoint) {
  return new Elysia({ ...ELYSIA_SETTINGS, name: "metrics" }).get(
    "/metrics",
    async () => new Response(await metrics.exposition(), { headers: { "content-type": metrics.contentType } }),
    // Operational, not part of the REST API: docs/operations.md describes it.
    { parse: "none", detail: { hide: true } },
  );
}

/** Path patterns → their template and allowed methods, to tell 405 (known path) from 404 (unknown route). */
function methodIndex(routes: ReadonlyArray<{ method: string; path: string }>) {
  const index = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const { method, path } of routes) {
    let entry = index.get(path);
    if (!entry) {
      const source = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[^/]+/g, "[^/]+");
      entry = { pattern: new RegExp(`^${source}$`), methods: new Set() };
      index.set(path, entry);
    }
    entry.methods.add(method.toUpperCase());
  }
  return (pathname: string): { path: string; methods: string[] } | null => {
    for (const [path, { pattern, methods }] of index) {
      if (pattern.test(pathname)) return { path, methods: [...methods].sort() };
    }
    return null;
  };
}

/** The /v1 operations, each declared once (operation.ts), in the order the document lists them. */
export function declareOperations(
  deps: Pick<GatewayDeps, "domain" | "limits" | "logger" | "version">,
  keepOpen?: (request: Request) => void,
): Operation[] {
  const from = { domain: deps.domain, limits: deps.limits, logger: deps.logger, keepOpen };
  return [
    ...healthOperations(deps.version),
    ...tenantOperations(from),
    ...apiTokenOperations(from),
    ...serviceOperations(from),
    ...ingestOperations(from),
    ...setupOperations(from),
    ...feedOperations(from),
    ...auditOperations(from),
    ...incidentOperations(from),
    ...searchOperations(from),
  ];
}

/**
 * The routes a page of a listed origin may call (cors.ts): the operations and Connect methods
 * a bearer token admits. Ingest, setup redemption and health take none, and stay closed.
 */
function corsRoutes(operations: readonly Operation[], rpc: ConnectRouter | undefined): Set<string> {
  const routes = new Set<string>();
  for (const op of operations) if (POLICY[op.rpc].bearer) routes.add(op.path);
  for (const handler of rpc?.handlers ?? []) {
    const policy = (POLICY as Record<string, { bearer: boolean } | undefined>)[handler.requestPath.slice(1)];
    if (policy?.bearer) routes.add(handler.requestPath);
  }
  return routes;
}

/** A management body's `parse`: only buffers the raw bytes (capped); nothing is judged before the caller is known. */
function bodyBuffer(edge: Edge) {
  return (async ({ request }: { request: Request }) => new Buffered(await edge.readBody(request))) as never;
}

/** The Elysia route of an operation: its schemas (validated after `transform`), its document entry, the edge's steps. */
function mount(app: Elysia, edge: Edge, op: Operation): void {
  const { schemas, doc } = op;
  const hooks = {
    parse: op.body === "json" ? bodyBuffer(edge) : "none",
    // Steps 2 to 4 up to the schemas, before Elysia validates anything (401 before 400). The
    // hooks read `ctx.params`, `ctx.query`, `ctx.body` and never pass `ctx` on: Elysia infers from their
    // source which context fields they use, and a `ctx` handed on makes it build a cookie jar.
    transform(ctx: { params: Record<string, string>; query: unknown; body: unknown }) {
      const x = exchangeOf(ctx);
      x.route = op.path;
      const entered = edge.enter(x, op, ctx.params, ctx.body, ctx.query);
      // `return ….then(` on purpose: Elysia reads a hook's source to decide whether to await it.
      if (entered instanceof Promise)
        return entered.then((e) => {
          if (op.body === "json") ctx.body = e.body;
        });
      if (op.body === "json") ctx.body = entered.body;
    },
    ...(schemas.params && { params: schemas.params }),
    ...(schemas.query && { query: schemas.query }),
    ...(schemas.body && { body: schemas.body }),
    ...(schemas.headers && { headers: schemas.headers }),
    response: schemas.response,
    detail: {
      summary: doc.summary,
      ...(doc.description && { description: doc.description }),
      tags: [doc.tag],
      security: POLICY[op.rpc].bearer ? bearerSecurity : [],
      ...(doc.parameters && { parameters: doc.parameters }),
      ...(doc.requestBody !== undefined && { requestBody: doc.requestBody }),
      ...(doc.responses && { responses: doc.responses }),
    },
  };
  const handler = (ctx: { params: Record<string, string>; query: unknown; body: unknown }) => {
    const x = exchangeOf(ctx);
    return edge.call(x, op, x.principal, ctx.params, ctx.query, ctx.body);
  };
  app.route(op.method, op.path, handler as never, hooks as never);
}

export async function createGateway(deps: GatewayDeps) {
  const { logger } = deps;
  /** The main port's listener, once serve.ts hands it over (`listening`). */
  let listener: { timeout(request: Request, seconds: number): void } | null = null;
  const keepOpen = (request: Request) => listener?.timeout(request, 0);
  const operations = declareOperations(deps, keepOpen);
  const cors = createCors(deps.corsOrigins ?? [], corsRoutes(operations, deps.rpc));
  const edge = createEdge({
    admission: deps.admission,
    limits: deps.limits,
    logger,
    requests: deps.requests,
    cors,
    tracer: deps.tracer ?? null,
  });
  // Built on first use, when every route is mounted.
  let allowedMethods: ReturnType<typeof methodIndex> | null = null;

  /** Step 6 for what Elysia caught: a 404 or 405, a schema's 400, or what a step raised. */
  function errorAnswer(x: RestExchange, code: unknown, error: unknown, route: string | undefined): Response {
    if (route) x.route = route;
    switch (code) {
      case "NOT_FOUND": {
        allowedMethods ??= methodIndex(app.routes);
        const known = allowedMethods(new URL(x.request.url).pathname);
        if (known && !known.methods.includes(x.request.method)) {
          // Counted under the template of the path it names (a fixed set), not `unmatched`.
          x.route = known.path;
          if (x.request.method === "OPTIONS") {
            const preflight = edge.preflight(x, known.methods);
            if (preflight) return preflight;
          }
          return errorResponse(
            "method_not_allowed",
            `${x.request.method} is not allowed here.`,
            x.requestId,
            undefined,
            {
              allow: known.methods.join(", "),
            },
          );
        }
        return errorResponse("not_found", "No such route.", x.requestId);
      }
      case "VALIDATION":
        return errorResponse("invalid_request", "The request is invalid.", x.requestId, validationIssues(error));
      case "PARSE":
        return errorResponse("invalid_request", "The body could not be parsed.", x.requestId);
      default:
        return edge.refuse(x, error);
    }
  }

  type Hooked = { request: Request; route?: string; responseValue?: unknown; code?: unknown; error?: unknown };
  const answered = (ctx: Hooked) => {
    const x = exchangeOf(ctx);
    if (x.route === "unmatched" && ctx.route) x.route = ctx.route;
    return ctx.responseValue instanceof Response ? edge.finish(x, ctx.responseValue) : undefined;
  };
  const failed = (ctx: Hooked) => {
    const x = exchangeOf(ctx);
    return edge.finish(x, withConsoleHeaders(errorAnswer(x, ctx.code, ctx.error, ctx.route), x.request));
  };
  // With the access log on, `finish` reads the answer's size (a promise): Elysia awaits a hook
  // it sees is async.
  const logged = deps.requests.accessLog;

  const app = new Elysia({ ...ELYSIA_SETTINGS, name: "intake-gateway" })
    .onRequest((ctx) => {
      attachExchange(ctx, edge.begin(ctx.request));
    })
    .mapResponse({ as: "global" }, logged ? async (ctx) => await answered(ctx) : (ctx) => answered(ctx))
    .onError(logged ? async (ctx) => await failed(ctx) : (ctx) => failed(ctx));

  for (const op of operations) mount(app as unknown as Elysia, edge, op);
  if (deps.rpc) app.use(connectRoutes(deps.rpc, edge, keepOpen));
  if (deps.console) app.use(consoleRoutes());
  app.use(rootRoutes({ apiDocs: Boolean(deps.apiDocs), console: Boolean(deps.console) }));
  if (deps.metrics) app.use(metricsRoutes(deps.metrics));
  // Last: the document is generated from every route mounted before it.
  if (deps.apiDocs) {
    app.use(
      apiDocsRoutes({
        version: deps.apiDocs.version,
        routes: () => app.routes,
        operations,
        metrics: Boolean(deps.metrics),
      }),
    );
  }

  const fetch = (request: Request): Response | Promise<Response> => app.handle(request);
  return {
    /** The Elysia app: its route table (the 405 index, the OpenAPI document, the tests). */
    elysia: app,
    /** Every /v1 operation, as declared. */
    operations,
    /** One request, through Elysia's router. */
    fetch,
    /** Bun.serve `routes` for the operations declared `native`; anything they do not take goes to `fetch`. */
    nativeRoutes: () => nativeRoutes(edge, operations, fetch),
    /** serve.ts: the Bun.serve now listening, whose idle timeout live streams lift (keepOpen). */
    listening(server: { timeout(request: Request, seconds: number): void }): void {
      listener = server;
    },
  };
}

export type Gateway = Awaited<ReturnType<typeof createGateway>>;
