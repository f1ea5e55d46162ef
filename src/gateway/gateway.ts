/**
 * The /v1 REST gateway: Elysia routes translating onto the rpc implementations in-process.
 * Every response carries X-Request-Id; every error leaves in the contract's one shape.
 */
import { ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { Elysia } from "elysia";
import { createRequestIdGenerator } from "../domain/ids.ts";
import type { Limits } from "../domain/limits.ts";
import type { Observer } from "../domain/ports/observer.ts";
import type { RateDecision } from "../domain/ports/rate-limiter.ts";
import type { Logger } from "../logger.ts";
import type { Admission } from "../rpc/admission.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { logFetch, type RequestObserver, serviceIdInPath } from "../rpc/observe.ts";
import {
  RATE_LIMIT_HEADER,
  RATE_LIMIT_POLICY_HEADER,
  RETRY_AFTER_HEADER,
  setRateLimitHeaders,
} from "../rpc/rate-limit.ts";
import { apiDocsRoutes } from "./api-docs.ts";
import { apiTokenReads, apiTokenRoutes } from "./api-tokens.ts";
import { auditRoutes } from "./audit.ts";
import { consoleRoutes, withConsoleHeaders } from "./console.ts";
import { errorResponse, responseForError, validationIssues } from "./errors.ts";
import { feedRoutes } from "./feed.ts";
import { healthBody, healthRoutes } from "./health.ts";
import { ELYSIA_SETTINGS, REQUEST_ID_HEADER } from "./http.ts";
import { INGEST_ROUTE, ingestAnswer, ingestRoutes } from "./ingest.ts";
import { createIngestLane } from "./ingest-lane.ts";
import { createKit } from "./kit.ts";
import { createReadLane } from "./read-lane.ts";
import { rootRoutes } from "./root.ts";
import { connectRoutes } from "./rpc.ts";
import { serviceReads, serviceRoutes } from "./services.ts";
import { setupRoutes } from "./setup.ts";
import { tenantRead, tenantRoutes } from "./tenant.ts";

export interface GatewayDeps {
  impls: RpcImpls;
  admission: Admission;
  /** The composition root's limits: the management body cap (kit) and the event cap (ingest). */
  limits: Limits;
  logger: Logger;
  /** Connect and gRPC-Web at /intake.v1.<Service>/<Method> (a router with plain gRPC off). */
  rpc?: ConnectRouter;
  /** The web console at /console, and GET / redirecting there (INTAKE_CONSOLE). */
  console?: boolean;
  /** GET /openapi.json and GET /docs; null when INTAKE_API_DOCS=false. */
  apiDocs?: { version: string } | null;
  /** GET /metrics; null when INTAKE_METRICS=false. */
  metrics?: MetricsEndpoint | null;
}

/** The Prometheus adapter (docs/operations.md): the observer the gateway counts requests with, and its exposition. */
export interface MetricsEndpoint {
  readonly observer: Observer;
  readonly contentType: string;
  exposition(): Promise<string>;
}

/**
 * The route template a request matched, hung on the request by the gateway's hooks (Elysia
 * knows it per compiled route) for the metrics and the access log: never the raw path.
 */
const ROUTE = Symbol("intake.route");
type RouteTagged = { [ROUTE]?: string };

function tagRoute(request: Request, route: string | undefined): void {
  if (route) (request as RouteTagged)[ROUTE] = route;
}

function routeOf(request: Request): string {
  return (request as RouteTagged)[ROUTE] ?? "unmatched";
}

/**
 * When the gateway started on a request (performance.now()), hung on it by onRequest while it
 * is not yet counted. The HTTP series are recorded in the gateway's own hooks, not by a wrapper
 * around its fetch: a wrapping async function cost ~0.5 µs of an in-process ~12 µs GET
 * (bench/README.md, metrics cost).
 */
const STARTED = Symbol("intake.started");
type Timed = { [STARTED]?: number };

/** Counts a request once: the success path (mapResponse) and the error path (onError) both call it. */
function countRequest(observer: Observer, request: Request, status: number): void {
  const started = (request as Timed)[STARTED];
  if (started === undefined) return;
  (request as Timed)[STARTED] = undefined;
  observer.httpRequest(routeOf(request), request.method, status, (performance.now() - started) / 1000);
}

/** The service a management route names in its path (`/v1/services/:id...`), for the access log. */
function serviceInRoute(route: string, request: Request): string | null {
  return route.startsWith("/v1/services/:id") ? serviceIdInPath(new URL(request.url).pathname, 3) : null;
}

/** The gateway's fetch, with each request's access-log line when INTAKE_ACCESS_LOG is on (rpc/observe.ts). */
export function loggedGateway(
  gateway: Gateway,
  seen: RequestObserver,
): (request: Request) => Response | Promise<Response> {
  return logFetch(gateway.handle, seen, routeOf, serviceInRoute);
}

/**
 * The lanes' Bun.serve native routes (the read lane's reads, the ingest lane's POST), each with
 * its access-log line like the gateway's fetch; what a lane leaves there goes on to the gateway
 * (logged once, by the same wrapper).
 */
export function loggedNativeRoutes(gateway: Gateway, seen: RequestObserver) {
  const logged = (handle: (request: Request) => Response | Promise<Response>) =>
    logFetch(handle, seen, routeOf, serviceInRoute);
  const reads = gateway.lane.nativeRoutes(gateway.handle);
  for (const methods of Object.values(reads)) methods.GET = logged(methods.GET);
  const ingest = gateway.ingestLane.nativeRoutes(gateway.handle);
  for (const methods of Object.values(ingest)) methods.POST = logged(methods.POST);
  return { ...reads, ...ingest };
}

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

function withRateLimit(response: Response, rate: RateDecision): void {
  try {
    setRateLimitHeaders(response.headers, rate);
  } catch {
    // immutable headers (e.g. Response.redirect): none of the gateway's own responses
  }
}

function copyRateLimitHeaders(from: Headers, to: Headers): void {
  for (const name of [RATE_LIMIT_POLICY_HEADER, RATE_LIMIT_HEADER, RETRY_AFTER_HEADER]) {
    const value = from.get(name);
    if (value !== null) to.set(name, value);
  }
}

/** The status Elysia will answer a non-Response value with. */
function statusOf(set: { status?: unknown }): number {
  return typeof set.status === "number" ? set.status : 200;
}

function requestIdOf(set: { headers: Record<string, unknown> }): string {
  return String(set.headers[REQUEST_ID_HEADER] ?? "req_unknown");
}

export async function createGateway(deps: GatewayDeps) {
  const { impls, admission, limits, logger } = deps;
  const kit = createKit(admission, limits);
  const newRequestId = createRequestIdGenerator();
  // INTAKE_METRICS=false: no clock read, nothing counted.
  const counted = deps.metrics?.observer ?? null;
  // Built on first use, so routes mounted after this function (RPC, ingest) count too.
  let allowedMethods: ReturnType<typeof methodIndex> | null = null;

  /** The contract's error answer for what Elysia caught (a route's throw, a 404/405, a bad body). */
  function errorAnswer(
    code: unknown,
    error: unknown,
    set: { headers: Record<string, unknown> },
    request: Request,
    route: string,
  ): Response {
    const requestId = requestIdOf(set);
    tagRoute(request, route);
    switch (code) {
      case "NOT_FOUND": {
        allowedMethods ??= methodIndex(app.routes);
        const known = allowedMethods(new URL(request.url).pathname);
        if (known && !known.methods.includes(request.method)) {
          // Counted under the template of the path it names (a fixed set), not `unmatched`.
          tagRoute(request, known.path);
          return errorResponse("method_not_allowed", `${request.method} is not allowed here.`, requestId, undefined, {
            allow: known.methods.join(", "),
          });
        }
        return errorResponse("not_found", "No such route.", requestId);
      }
      case "VALIDATION":
        return errorResponse("invalid_request", "The request is invalid.", requestId, validationIssues(error));
      case "PARSE":
        return errorResponse("invalid_request", "The body could not be parsed.", requestId);
      default:
        return refusal(error, requestId, request);
    }
  }

  /** The RateLimit fields of the decision the request was taken under, if its route is limited. */
  function withRateOf(response: Response, request: Request): void {
    const rate = kit.rateOf(request);
    if (rate) withRateLimit(response, rate);
  }

  /** The answer to an error a route raised (the lanes' too), with the RateLimit fields of a limited route. */
  function refusal(error: unknown, requestId: string, request: Request): Response {
    const response = responseForError(error, requestId, logger);
    // A refusal raised by admission carries its fields in the error's metadata; an error
    // after the decision (ingest's 409, a 404, a 400) takes them from the request's record.
    if (error instanceof ConnectError) copyRateLimitHeaders(error.metadata, response.headers);
    withRateOf(response, request);
    return response;
  }

  const reads = { tenant: tenantRead(impls), services: serviceReads(impls), apiTokens: apiTokenReads(impls) };
  const ingestAnswered = ingestAnswer(impls, kit, limits);

  const app = new Elysia({ ...ELYSIA_SETTINGS, name: "intake-gateway" })
    .onRequest(({ set, request }) => {
      if (counted) (request as Timed)[STARTED] = performance.now();
      // Always generated here, never taken from the caller.
      set.headers[REQUEST_ID_HEADER] = newRequestId();
    })
    .mapResponse({ as: "global" }, ({ responseValue, set, request, route }) => {
      tagRoute(request, route);
      if (counted)
        countRequest(counted, request, responseValue instanceof Response ? responseValue.status : statusOf(set));
      // A limited route's answer carries its RateLimit fields (docs/rate-limits.md).
      if (responseValue instanceof Response) withRateOf(responseValue, request);
      // Elysia rebuilds a returned Response (a Headers copy, then a new Response over the old
      // one's body stream) whenever set.headers is not empty. Moving the request id into the
      // Response's own headers skips that rebuild: it was the largest cost of GET /v1/health
      // (bench/README.md). Anything else in set.headers: Elysia merges as before.
      if (!(responseValue instanceof Response)) return undefined;
      const requestId = set.headers[REQUEST_ID_HEADER];
      if (typeof requestId !== "string" || Object.keys(set.headers).length !== 1) return undefined;
      try {
        responseValue.headers.set(REQUEST_ID_HEADER, requestId);
      } catch {
        return undefined; // immutable headers (e.g. Response.redirect): let Elysia merge
      }
      delete set.headers[REQUEST_ID_HEADER];
      return responseValue;
    })
    .onError(({ code, error, set, request, route }) => {
      const response = withConsoleHeaders(errorAnswer(code, error, set, request, route), request);
      if (counted) countRequest(counted, request, response.status);
      return response;
    })
    .use(healthRoutes(await healthBody(impls)))
    .use(tenantRoutes(impls, kit, reads.tenant))
    .use(apiTokenRoutes(impls, kit, reads.apiTokens))
    .use(serviceRoutes(impls, kit, reads.services))
    .use(ingestRoutes(impls, kit, limits, ingestAnswered))
    .use(setupRoutes(impls, kit))
    .use(feedRoutes(impls, kit))
    .use(auditRoutes(impls, kit));

  if (deps.rpc) app.use(connectRoutes(deps.rpc));
  if (deps.console) app.use(consoleRoutes());
  app.use(rootRoutes({ apiDocs: Boolean(deps.apiDocs), console: Boolean(deps.console) }));
  if (deps.metrics) app.use(metricsRoutes(deps.metrics));
  // Last: the document is generated from every route mounted before it.
  if (deps.apiDocs) app.use(apiDocsRoutes({ version: deps.apiDocs.version, routes: () => app.routes }));

  const laneRoutes = [reads.tenant, reads.services.list, reads.services.get, reads.apiTokens.list, reads.apiTokens.get];
  const lane = createReadLane(laneRoutes, {
    kit,
    newRequestId,
    refusal,
    tag: tagRoute,
    series: counted && ((route) => counted.httpSeries(route, "GET")),
  });
  const ingestLane = createIngestLane({
    answer: ingestAnswered,
    newRequestId,
    refusal,
    withRate: withRateOf,
    tag: tagRoute,
    series: counted && ((route) => counted.httpSeries(route, "POST")),
  });
  // The lanes answer the paths they claim: no other route may sit under them.
  for (const route of app.routes) {
    const own = laneRoutes.some((read) => read.path === route.path);
    if (!own && route.method === "GET" && lane.claims(route.path)) {
      throw new Error(`GET ${route.path} would be answered by the read lane`);
    }
    if (route.path !== INGEST_ROUTE && route.method === "POST" && ingestLane.claims(route.path)) {
      throw new Error(`POST ${route.path} would be answered by the ingest lane`);
    }
  }

  return {
    /** The Elysia app: its route table (the OpenAPI document, the tests) and every request the lane leaves. */
    elysia: app,
    lane,
    ingestLane,
    /** One request: a lane's when it takes it, else Elysia's. */
    handle: (request: Request): Response | Promise<Response> =>
      lane.take(request) ?? ingestLane.take(request) ?? app.handle(request),
  };
}

export type Gateway = Awaited<ReturnType<typeof createGateway>>;
