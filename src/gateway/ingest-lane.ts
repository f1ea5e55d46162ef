/**
 * The ingest lane (docs/architecture.md, "The lanes"): `POST /v1/ingest/{service_id}` answered
 * beside Elysia's per-request pipeline, as the read lane (read-lane.ts) answers the hot reads.
 * Side by side under the same load, before and after, the lane is worth 1–2% of a signed
 * ingest's throughput (bench/README.md, "The ingest lane").
 *
 * The route's answer is one function (`ingestAnswer`, ingest.ts) that the Elysia route calls
 * too, so what the two answer cannot differ. The lane takes a request only when Elysia would
 * hand that function the same id: a POST to `/v1/ingest/<id>` where the id is a plain path
 * segment (letters, digits, `_`, `-`: nothing percent-decoding would change). Anything else goes
 * to Elysia untouched: the lane has read nothing of it. A request the lane takes it answers
 * whole, errors included, through the gateway's own pieces (its refusal, route tag and metrics).
 */
import type { HttpRecorder } from "../domain/ports/observer.ts";
import { PLAIN_SEGMENT, pathAndQuery, REQUEST_ID_HEADER } from "./http.ts";
import { INGEST_ROUTE, type IngestAnswer } from "./ingest.ts";

export interface IngestLaneDeps {
  answer: IngestAnswer;
  /** A fresh `req_…` id. */
  newRequestId(): string;
  /** The gateway's answer to an error the route raised (its RateLimit fields included). */
  refusal(error: unknown, requestId: string, request: Request): Response;
  /** The RateLimit fields of a success, as the gateway's hooks add them. */
  withRate(response: Response, request: Request): void;
  /** Hangs the route template on the request, as the gateway's hooks do (the access log reads it). */
  tag(request: Request, route: string): void;
  /** The route's HTTP series of the metrics (null: INTAKE_METRICS=false, no clock read). */
  series: ((route: string) => HttpRecorder) | null;
}

type Answer = Response | Promise<Response>;

const PREFIX = "/v1/ingest/";

/** The service id of a path the lane takes (`/v1/ingest/<plain segment>`), else null. */
function idIn(path: string): string | null {
  if (!path.startsWith(PREFIX)) return null;
  const id = path.slice(PREFIX.length);
  return PLAIN_SEGMENT.test(id) ? id : null;
}

export function createIngestLane(deps: IngestLaneDeps) {
  const { answer } = deps;
  const count = deps.series?.(INGEST_ROUTE) ?? null;

  function done(response: Response, requestId: string, request: Request, started: number): Response {
    response.headers.set(REQUEST_ID_HEADER, requestId);
    deps.tag(request, INGEST_ROUTE);
    count?.(response.status, (performance.now() - started) / 1000);
    return response;
  }

  async function serve(request: Request, serviceId: string): Promise<Response> {
    const started = count ? performance.now() : 0;
    const requestId = deps.newRequestId();
    let response: Response;
    try {
      response = await answer(request, serviceId);
      deps.withRate(response, request);
    } catch (error) {
      response = deps.refusal(error, requestId, request);
    }
    return done(response, requestId, request, started);
  }

  /** The request's answer, or null: Elysia's to answer. */
  function take(request: Request): Answer | null {
    if (request.method !== "POST") return null;
    const id = idIn(pathAndQuery(request.url)[0]);
    return id === null ? null : serve(request, id);
  }

  /**
   * The same as a Bun.serve native route (serve.ts): Bun's router has matched the path and the
   * id. What the lane leaves goes to `fallback` (the gateway's fetch, where Elysia answers it).
   */
  function nativeRoutes(fallback: (request: Request) => Answer) {
    return {
      [INGEST_ROUTE]: {
        POST(request: Request & { params?: Record<string, string> }): Answer {
          const id = request.params?.service_id;
          return id !== undefined && PLAIN_SEGMENT.test(id) ? serve(request, id) : fallback(request);
        },
      },
    };
  }

  return {
    take,
    nativeRoutes,
    /** Whether the lane would take a POST of this literal path (the gateway checks no other route is shadowed). */
    claims: (path: string) => idIn(path) !== null,
  };
}

export type IngestLane = ReturnType<typeof createIngestLane>;
