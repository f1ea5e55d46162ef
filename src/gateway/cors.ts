/**
 * CORS (SPEC §20, docs/api.md "CORS"): pages of the origins in INTAKE_CORS_ORIGINS may call
 * the routes a bearer token admits (the REST operations and the Connect methods whose policy
 * takes one: the feed streams included) and read the fields a client needs. Ingest, the
 * setup redemption and anything else stay closed to other origins: no CORS header at all.
 * Step 7 of the edge decorates an answer (`decorate`); a preflight is answered where the
 * router found the path but no OPTIONS route (gateway.ts, `preflight`).
 */
export const CORS_ALLOWED_HEADERS = [
  "authorization",
  "content-type",
  "idempotency-key",
  "last-event-id",
  // Connect and gRPC-Web (connect-es sends these).
  "connect-protocol-version",
  "connect-timeout-ms",
  "x-grpc-web",
  "x-user-agent",
  "grpc-timeout",
].join(", ");

export const CORS_EXPOSED_HEADERS = "X-Request-Id, RateLimit, RateLimit-Policy, Retry-After";

/** On the RPC routes also what a gRPC-Web client reads of a trailers-only answer (connect-es' CORS guide). */
const RPC_EXPOSED_HEADERS = `${CORS_EXPOSED_HEADERS}, Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin`;

/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = "600";

export interface Cors {
  /** Step 7: the CORS fields of an answer on `route` to a request from `origin`. */
  decorate(route: string, origin: string | null, headers: Headers): void;
  /** A preflight's answer for a path of `route` allowing `methods`, or null (not a CORS route, or an unlisted origin). */
  preflight(route: string, methods: readonly string[], request: Request): Response | null;
}

/** null when no origin is listed: the edge then adds nothing (INTAKE_CORS_ORIGINS unset). */
export function createCors(origins: readonly string[], routes: ReadonlySet<string>): Cors | null {
  if (origins.length === 0) return null;
  const listed = new Set(origins);
  return {
    decorate(route, origin, headers) {
      if (!routes.has(route)) return;
      // Whatever the origin: a cache must not hand one origin's answer to another.
      headers.append("vary", "Origin");
      if (origin === null || !listed.has(origin)) return;
      headers.set("access-control-allow-origin", origin);
      headers.set(
        "access-control-expose-headers",
        route.startsWith("/v1/") ? CORS_EXPOSED_HEADERS : RPC_EXPOSED_HEADERS,
      );
    },
    preflight(route, methods, request) {
      const origin = request.headers.get("origin");
      const asked = request.headers.get("access-control-request-method");
      if (origin === null || asked === null || !routes.has(route) || !listed.has(origin)) return null;
      const allowed = methods.includes("GET") && !methods.includes("HEAD") ? [...methods, "HEAD"] : [...methods];
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-methods": allowed.join(", "),
          "access-control-allow-headers": CORS_ALLOWED_HEADERS,
          "access-control-max-age": PREFLIGHT_MAX_AGE_SECONDS,
        },
      });
    },
  };
}
