/**
 * An operation of the /v1 REST surface, declared once (docs/architecture.md, "The edge"):
 * its method and path template, the RPC method whose access policy admits it (and whose name
 * is its operationId), its schemas and documentation, the error codes its handler adds, whether
 * a rate limit applies, and its handler. From this one declaration the gateway derives the
 * Elysia route and its schemas (gateway.ts), the Bun native route of a hot read or of ingest
 * (`native`), the OpenAPI operation (api-docs.ts), the metrics route template (the path) and
 * the auth suite's route list (test/gateway/auth-suite.ts reads `gateway.operations`).
 */
import type { Static, TSchema } from "elysia";
import type { Audit } from "../domain/audit.ts";
import type { ErrorCode } from "../domain/errors.ts";
import type { Feed } from "../domain/feed.ts";
import type { IncidentHandling } from "../domain/incident-handling.ts";
import type { Ingest } from "../domain/ingest.ts";
import type { Limits } from "../domain/limits.ts";
import type { Maybe } from "../domain/maybe.ts";
import type { Onboarding } from "../domain/onboarding.ts";
import type { EventSearch } from "../domain/search.ts";
import type { Services } from "../domain/services.ts";
import type { ServiceStatsReader } from "../domain/stats.ts";
import type { Tenants } from "../domain/tenant.ts";
import type { Tokens } from "../domain/tokens.ts";
import type { Principal } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { type MethodName, POLICY } from "../rpc/policy.ts";
import type { RestExchange } from "./edge.ts";

export type ErrorCodes = Partial<Record<number, ErrorCode[]>>;

/** The query a natively served read decodes itself: none, a page, or a token page (native-routes.ts `plainQuery`). */
export type QueryForm = "none" | "page" | "tokenPage";

/** What a handler is given: the exchange, the admitted caller, and the decoded input. */
export interface Call<P = Record<string, string>, Q = unknown, B = unknown> {
  readonly x: RestExchange;
  readonly request: Request;
  /** The caller admission verified; null only on an operation whose policy takes no bearer token. */
  readonly principal: Principal | null;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
}

/** The domain the REST operations call: the same objects the rpc implementations call. */
export interface OperationDomain {
  tokens: Tokens;
  onboarding: Onboarding;
  services: Services;
  tenants: Tenants;
  ingest: Ingest;
  feed: Feed;
  audit: Audit;
  incidents: IncidentHandling;
  search: EventSearch;
  serviceStats: ServiceStatsReader;
}

export interface OperationDeps {
  domain: OperationDomain;
  limits: Limits;
  logger: Logger;
  /**
   * Lifts the main port's idle timeout for one request: a live stream is ended by its own end
   * conditions (docs/feed.md), not by a quiet spell (serve.ts; absent where nothing listens).
   */
  keepOpen?: ((request: Request) => void) | undefined;
}

/**
 * The document's tags, in the order /docs shows them: an operation names one of these (the
 * linters refuse a tag the document does not declare; here the type checker does first).
 */
export const TAGS = [
  { name: "API tokens", description: "Bearer credentials of the caller's tenant" },
  { name: "Services", description: "Senders of events and their signing secrets" },
  { name: "Ingest", description: "Signed events from senders, and what was stored" },
  { name: "Tenant", description: "The caller's tenant" },
  { name: "Incidents", description: "Alerts grouped per service: open, acknowledged, resolved" },
  { name: "Feed", description: "The tenant's events in order: pages, long polls, a live stream" },
  { name: "Audit log", description: "One event per successful change, newest first" },
  { name: "Setup", description: "A new tenant from a one-time setup code (the console's setup page)" },
  { name: "Health", description: "Liveness probe" },
  { name: "Observability", description: "Prometheus metrics (outside /v1; docs/operations.md)" },
] as const;

export type TagName = (typeof TAGS)[number]["name"];

interface Doc {
  summary: string;
  /** What a caller needs beyond the summary: the rules, the check order, what a status means. */
  description: string;
  tag: TagName;
  /** OpenAPI extras the schemas cannot say (a header parameter, a raw request body, a bodiless 204). */
  parameters?: unknown[];
  requestBody?: unknown;
  /** A response the schemas cannot say (a bodiless 204; a stream's media type): it replaces the generated one. */
  responses?: Record<number, { description: string; content?: Record<string, unknown> }>;
  /** The success status a reader sees first when there are two (ingest: 202; the 200 duplicate is `2XX`). */
  shownFirst?: number;
}

export interface Operation {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Elysia's template (`/v1/services/:id`): the route, and the metrics' `route` label. */
  readonly path: string;
  /** Admission's policy (rpc/policy.ts) and the operationId. */
  readonly rpc: MethodName;
  /** Codes the handler can answer beyond those its policy, body, limit and the store imply. */
  readonly errors: ErrorCodes;
  /** False for an operation no rate limit applies to (health, setup). */
  readonly limited: boolean;
  /**
   * `json`: a management body, read (capped) and judged only after admission (413 → 415 → 400);
   * `raw`: the handler reads the body itself (ingest: the signature covers the exact bytes).
   */
  readonly body: "json" | "raw" | null;
  readonly schemas: {
    params?: TSchema;
    query?: TSchema;
    body?: TSchema;
    headers?: TSchema;
    response: Record<number, TSchema>;
  };
  readonly doc: Doc;
  /** Also served as a Bun native route, decoding this query form itself (the hot reads, ingest). */
  readonly native?: QueryForm;
  /** After admission, before the body is judged: an unknown target is a 404 whatever the body holds. */
  exists?(call: Call): Maybe<unknown>;
  handle(call: Call): Maybe<Response>;
}

type Schemas = Operation["schemas"];
type StaticOr<S, D> = S extends TSchema ? Static<S> : D;

/** An operation with its handler typed by its own schemas. */
export function operation<const S extends Schemas>(
  declared: Omit<Operation, "schemas" | "handle" | "exists" | "limited" | "body" | "errors"> & {
    schemas: S;
    errors?: ErrorCodes;
    limited?: boolean;
    body?: "json" | "raw";
    exists?(call: Call<StaticOr<S["params"], Record<string, string>>>): Maybe<unknown>;
    handle(
      call: Call<
        StaticOr<S["params"], Record<string, string>>,
        StaticOr<S["query"], unknown>,
        StaticOr<S["body"], unknown>
      >,
    ): Maybe<Response>;
  },
): Operation {
  return {
    ...declared,
    errors: declared.errors ?? {},
    limited: declared.limited ?? true,
    body: declared.body ?? null,
  } as Operation;
}

/** The caller of an operation whose policy takes a bearer token (admission set it). */
export function caller(call: Call<unknown, unknown, unknown>): Principal {
  if (!call.principal) throw new Error("a bearer operation ran without a principal");
  return call.principal;
}

/** `CreateApiToken` for `intake.v1.ApiTokenService/CreateApiToken`. */
export function operationIdOf(op: Operation): string {
  return op.rpc.slice(op.rpc.lastIndexOf("/") + 1);
}

/** "METHOD /path" as the OpenAPI document writes paths (`{id}`). */
export function operationKey(op: Pick<Operation, "method" | "path">): string {
  return `${op.method} ${op.path.replace(/:([^/]+)/g, "{$1}")}`;
}

/** Every code the operation can answer, by HTTP status, sorted. */
export function errorCodesOf(op: Operation): ErrorCodes {
  const out = new Map<number, Set<ErrorCode>>();
  const add = (status: number, ...codes: ErrorCode[]) => {
    const set = out.get(status) ?? new Set<ErrorCode>();
    for (const code of codes) set.add(code);
    out.set(status, set);
  };
  const policy = POLICY[op.rpc];
  if (policy.bearer) {
    add(401, "missing_credentials", "invalid_credentials");
    if (policy.mutating) add(403, "token_scope_insufficient");
    if (policy.ownerOnly) add(403, "owner_required");
    if (policy.adminOnly) add(403, "admin_required");
  }
  if (op.body === "json") {
    add(400, "invalid_request");
    add(413, "payload_too_large");
    add(415, "unsupported_media_type");
  }
  for (const [status, codes] of Object.entries(op.errors)) add(Number(status), ...(codes ?? []));
  if (op.limited) add(429, "rate_limited");
  add(500, "internal_error");
  // Health answers from memory: it never waits on the store.
  if (op.rpc !== "intake.v1.HealthService/GetHealth") add(503, "unavailable");
  return Object.fromEntries([...out.entries()].sort(([a], [b]) => a - b).map(([s, c]) => [s, [...c].sort()]));
}
