/**
 * The read lane (docs/architecture.md, "The read lane"): the REST gateway's hot bearer reads —
 * the tenant, the service and token lists and records — answered beside Elysia's per-request
 * pipeline. Served, that pipeline (its context object, the composed async handler with an
 * `await` per hook, the hooks around it) cost an authenticated GET about as much as everything
 * Intake itself does for it (bench/README.md, "The read lane").
 *
 * A read is declared once, as a `ReadRoute`, and mounted twice: as an Elysia route (the OpenAPI
 * document, and every request the lane does not take) and here. Both call the same `answer`
 * after the same admission, so what a read answers cannot differ between them.
 *
 * The lane takes a request only when it can decode it exactly as Elysia would: GET, a path it
 * knows (no trailing slash), an id that is a plain path segment, and a query made only of the
 * route's own keys, each once, in their plain forms (`limit=1`…`100`, a base64url `cursor`,
 * `include_revoked=true|false`). Anything else — HEAD, a percent-encoded id, an unknown or
 * repeated key, `limit=05` — goes to Elysia untouched: the lane has admitted, counted and logged
 * nothing of it. A request the lane takes it answers whole, errors included, through the gateway's
 * own pieces: the kit's admission, the gateway's error answer, its metrics and route tag.
 */
import type { Maybe } from "../domain/maybe.ts";
import type { HttpRecorder } from "../domain/ports/observer.ts";
import type { CallContext } from "../rpc/context.ts";
import type { MethodName } from "../rpc/policy.ts";
import { limitField, policyField } from "../rpc/rate-limit.ts";
import { JSON_TYPE, jsonText, PLAIN_SEGMENT, pathAndQuery, REQUEST_ID_HEADER } from "./http.ts";
import type { Kit } from "./kit.ts";

/** What a read takes from its path and query, as Elysia hands it to the route (defaults applied). */
export interface ReadInput {
  /** The `:id` segment of a record route. */
  id?: string;
  limit?: number;
  cursor?: string;
  include_revoked?: boolean;
}

/** The query a read accepts: none, a page (`limit`, `cursor`), or a token page (also `include_revoked`). */
export type QueryForm = "none" | "page" | "tokenPage";

export interface ReadRoute {
  /** Elysia's pattern: a static path, or one ending in a single `:id` segment. */
  readonly path: string;
  /** The rpc method whose access rule and rate limit admission applies. */
  readonly method: MethodName;
  readonly query: QueryForm;
  /** The 200 answer's JSON text; throws (or rejects with) the error the gateway answers. */
  answer(call: CallContext, input: ReadInput): Maybe<string>;
}

export interface ReadLaneDeps {
  kit: Kit;
  /** A fresh `req_…` id. */
  newRequestId(): string;
  /** The gateway's answer to an error raised after admission began (its rate fields included). */
  refusal(error: unknown, requestId: string, request: Request): Response;
  /** Hangs the route template on the request, as the gateway's hooks do (the access log reads it). */
  tag(request: Request, route: string): void;
  /** A route's HTTP series of the metrics (null: INTAKE_METRICS=false, no clock read). */
  series: ((route: string) => HttpRecorder) | null;
}

type Answer = Response | Promise<Response>;

const LIMIT = /^(?:[1-9][0-9]?|100)$/;
const NO_INPUT: ReadInput = Object.freeze({});

/**
 * The query string (without `?`) as Elysia would decode it for `form`, or null when it holds
 * anything the lane leaves to Elysia. Defaults as the schemas give them (schemas.ts).
 */
export function plainQuery(search: string, form: QueryForm): ReadInput | null {
  // A route without a query schema ignores its query, in Elysia too.
  if (form === "none") return NO_INPUT;
  const input: ReadInput = form === "tokenPage" ? { limit: 20, include_revoked: false } : { limit: 20 };
  if (search === "") return input;
  const seen = new Set<string>();
  for (const pair of search.split("&")) {
    const eq = pair.indexOf("=");
    const key = eq === -1 ? pair : pair.slice(0, eq);
    const value = eq === -1 ? "" : pair.slice(eq + 1);
    if (seen.has(key)) return null;
    seen.add(key);
    if (key === "limit" && LIMIT.test(value)) input.limit = Number(value);
    else if (key === "cursor" && PLAIN_SEGMENT.test(value)) input.cursor = value;
    else if (key === "include_revoked" && form === "tokenPage" && (value === "true" || value === "false"))
      input.include_revoked = value === "true";
    else return null;
  }
  return input;
}

/**
 * The lane: a request it takes → its answer (a Response, or a promise of one when the token or
 * the record is not cached); a request it leaves to Elysia → null.
 */
export function createReadLane(routes: readonly ReadRoute[], deps: ReadLaneDeps) {
  const { kit } = deps;
  /** A route, and its HTTP series resolved once (null: INTAKE_METRICS=false). */
  interface Lane {
    route: ReadRoute;
    record: HttpRecorder | null;
  }
  const lanes: Lane[] = routes.map((route) => ({ route, record: deps.series?.(route.path) ?? null }));
  const exact = new Map<string, Lane>();
  const byPrefix = new Map<string, Lane>();
  for (const lane of lanes) {
    const { path } = lane.route;
    if (path.endsWith("/:id")) byPrefix.set(path.slice(0, -"/:id".length), lane);
    else if (!path.includes(":")) exact.set(path, lane);
    else throw new Error(`the read lane takes static paths and paths ending in /:id: ${path}`);
  }

  function match(path: string): { lane: Lane; id: string | undefined } | null {
    const lane = exact.get(path);
    if (lane) return { lane, id: undefined };
    const slash = path.lastIndexOf("/");
    const parent = byPrefix.get(path.slice(0, slash));
    const id = path.slice(slash + 1);
    return parent && PLAIN_SEGMENT.test(id) ? { lane: parent, id } : null;
  }

  function answered(request: Request, lane: Lane, status: number, started: number): void {
    deps.tag(request, lane.route.path);
    lane.record?.(status, (performance.now() - started) / 1000);
  }

  function success(text: string, requestId: string, request: Request, lane: Lane, started: number): Response {
    const rate = kit.rateOf(request);
    // Literal names (REQUEST_ID_HEADER, RATE_LIMIT_*_HEADER): one object literal per answer,
    // no spread; with limits on, the fields were most of what the lane added (bench/README.md).
    const response = new Response(text, {
      headers: rate
        ? {
            "content-type": JSON_TYPE,
            "x-request-id": requestId,
            "ratelimit-policy": policyField(rate),
            ratelimit: limitField(rate),
          }
        : { "content-type": JSON_TYPE, "x-request-id": requestId },
    });
    answered(request, lane, 200, started);
    return response;
  }

  function refused(error: unknown, requestId: string, request: Request, lane: Lane, started: number): Response {
    const response = deps.refusal(error, requestId, request);
    response.headers.set(REQUEST_ID_HEADER, requestId);
    answered(request, lane, response.status, started);
    return response;
  }

  /** Answers a request the lane has taken, whole. */
  function serve(lane: Lane, id: string | undefined, input: ReadInput, request: Request): Answer {
    const { route } = lane;
    const started = lane.record ? performance.now() : 0;
    const requestId = deps.newRequestId();
    let text: Maybe<string>;
    try {
      const admitted = kit.admit(request, id === undefined ? {} : { id }, requestId, route.method);
      const withId = id === undefined ? input : { ...input, id };
      text =
        admitted instanceof Promise
          ? admitted.then((call) => route.answer(call, withId))
          : route.answer(admitted, withId);
    } catch (error) {
      return refused(error, requestId, request, lane, started);
    }
    if (!(text instanceof Promise)) return success(text, requestId, request, lane, started);
    return text.then(
      (t) => success(t, requestId, request, lane, started),
      (error: unknown) => refused(error, requestId, request, lane, started),
    );
  }

  /** The request's answer, or null: Elysia's to answer. */
  function take(request: Request): Answer | null {
    if (request.method !== "GET") return null;
    const [path, query] = pathAndQuery(request.url);
    const found = match(path);
    if (!found) return null;
    const input = plainQuery(query, found.lane.route.query);
    return input ? serve(found.lane, found.id, input, request) : null;
  }

  /**
   * The same as Bun.serve native routes (serve.ts): Bun's router has matched the path and the
   * id, so a read without a query form never reads the URL. What the lane leaves goes to
   * `fallback` (the gateway's fetch, where the lane leaves it again and Elysia answers).
   */
  function nativeRoutes(fallback: (request: Request) => Answer) {
    const table: Record<string, { GET: (request: Request & { params?: Record<string, string> }) => Answer }> = {};
    for (const lane of lanes) {
      const { route } = lane;
      const named = route.path.endsWith("/:id");
      table[route.path] = {
        GET(request) {
          const id = named ? request.params?.id : undefined;
          if (named && (id === undefined || !PLAIN_SEGMENT.test(id))) return fallback(request);
          let input: ReadInput | null = NO_INPUT;
          if (route.query !== "none") {
            const url = request.url;
            const q = url.indexOf("?");
            input = plainQuery(q === -1 ? "" : url.slice(q + 1), route.query);
          }
          return input ? serve(lane, id, input, request) : fallback(request);
        },
      };
    }
    return table;
  }

  return {
    take,
    nativeRoutes,
    /** Whether the lane would take a GET of this literal path (the gateway checks no other route is shadowed). */
    claims: (path: string) => match(path) !== null,
  };
}

export type ReadLane = ReturnType<typeof createReadLane>;

/** A read's 200 on the Elysia route (the lane builds its own, with the request id in it). */
export function okJson(text: string): Response {
  return jsonText(200, text);
}
