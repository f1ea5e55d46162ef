/**
 * Finding events (SPEC §18, docs/search.md): the query's rules, its cursor, and the search.
 *
 * `q` matches an event when every whitespace-separated term (3..MAX_TERM_CHARS characters,
 * 1..8 terms) occurs in the payload's text as a substring, case-insensitively; the store
 * answers it from its own index (SQLite FTS5 trigram, PostgreSQL pg_trgm). Filters are ANDed;
 * pages are newest stored first (feed position descending: commit order), keyset on the
 * position. Another tenant's events are never in a page: the tenant is part of every store
 * query, and a cursor is bound to its tenant.
 */
import { DomainError, type FieldIssue } from "./errors.ts";
import { parseId } from "./ids.ts";
import { isRfc3339 } from "./incidents.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, type Page } from "./pagination.ts";
import type { EventSearchQuery, Store } from "./ports/store.ts";
import type { FoundEvent, Principal } from "./types.ts";

export const MIN_TERM_CHARS = 3;
export const MAX_TERMS = 8;
/** Not in §18: bounds the work one term can ask of the index (docs/search.md). */
export const MAX_TERM_CHARS = 256;
/** §18: the top-level `type` is 1..255 characters, so a longer filter can match nothing. */
const MAX_TYPE_CHARS = 255;
/** `s1` cursors held (received_at, id), the order before positions: refused like any foreign cursor. */
const CURSOR_VERSION = "s2";
const MAX_CURSOR_CHARS = 512;

/** The request as a route or RPC method receives it: public ids, RFC 3339 times, the raw `q`. */
export interface EventSearchRequest {
  serviceId?: string | undefined;
  type?: string | undefined;
  incidentId?: string | undefined;
  receivedAfter?: string | undefined;
  receivedBefore?: string | undefined;
  q?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * `q` split into its terms, or the issue that makes it a 400. Whitespace is Unicode's (`\s`),
 * so a term never holds a space, a tab or a line break.
 */
export function searchTerms(q: string, issues: FieldIssue[]): string[] | undefined {
  const terms = q.split(/\s+/u).filter((t) => t.length > 0);
  if (terms.length === 0) {
    issues.push({ field: "q", message: "must hold at least one term" });
    return undefined;
  }
  if (terms.length > MAX_TERMS) {
    issues.push({ field: "q", message: `must hold at most ${MAX_TERMS} terms` });
    return undefined;
  }
  const short = terms.filter((t) => codePoints(t) < MIN_TERM_CHARS);
  if (short.length > 0) {
    issues.push({ field: "q", message: `every term must be at least ${MIN_TERM_CHARS} characters` });
    return undefined;
  }
  if (terms.some((t) => codePoints(t) > MAX_TERM_CHARS)) {
    issues.push({ field: "q", message: `every term must be at most ${MAX_TERM_CHARS} characters` });
    return undefined;
  }
  return terms;
}

function instant(field: string, value: string | undefined, issues: FieldIssue[]): number | undefined {
  if (value === undefined) return undefined;
  if (!isRfc3339(value)) {
    issues.push({ field, message: "must be an RFC 3339 timestamp, e.g. 2026-11-26T10:00:00Z" });
    return undefined;
  }
  return Date.parse(value);
}

function filterId(field: string, kind: "svc" | "inc", value: string | undefined, issues: FieldIssue[]) {
  if (value === undefined) return undefined;
  const raw = parseId(kind, value);
  if (raw === null) issues.push({ field, message: `must be a ${kind}_ id` });
  return raw ?? undefined;
}

/** Search cursors: base64url of `s2|<tenant id>|<position>` of a page's last row. */
export function encodeSearchCursor(tenantId: string, position: number): string {
  return Buffer.from(`${CURSOR_VERSION}|${tenantId}|${position}`, "latin1").toString("base64url");
}

function decodeSearchCursor(cursor: string, tenantId: string, issues: FieldIssue[]): number | undefined {
  const text =
    cursor.length <= MAX_CURSOR_CHARS && /^[A-Za-z0-9_-]+$/.test(cursor)
      ? Buffer.from(cursor, "base64url").toString("latin1")
      : "";
  const [version, tenant, at, ...rest] = text.split("|");
  const position = Number(at);
  if (version !== CURSOR_VERSION || rest.length > 0 || !at || !/^\d+$/.test(at) || !Number.isSafeInteger(position)) {
    issues.push({ field: "cursor", message: "is not a cursor this API returned" });
    return undefined;
  }
  if (tenant !== tenantId) {
    issues.push({ field: "cursor", message: "belongs to another tenant" });
    return undefined;
  }
  return position;
}

/**
 * The store query for a request, or a DomainError: `search_disabled` for any `q` while
 * search is off (before `q` itself is judged), else 400 `invalid_request` with one detail
 * per bad parameter. The store is asked for one row more than the page.
 */
export function eventSearchQuery(
  tenantId: string,
  request: EventSearchRequest,
  options: { searchEnabled: boolean },
): EventSearchQuery {
  if (request.q !== undefined && !options.searchEnabled) {
    throw new DomainError("search_disabled", "Search is turned off on this deployment (INTAKE_EVENT_SEARCH=false).");
  }
  const issues: FieldIssue[] = [];
  const limit = request.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    issues.push({ field: "limit", message: `must be an integer from 1 to ${MAX_LIMIT}` });
  }
  const serviceId = filterId("service_id", "svc", request.serviceId, issues);
  const incidentId = filterId("incident_id", "inc", request.incidentId, issues);
  const { type } = request;
  if (type !== undefined && (type.length === 0 || codePoints(type) > MAX_TYPE_CHARS)) {
    issues.push({ field: "type", message: `must be 1 to ${MAX_TYPE_CHARS} characters` });
  }
  const receivedAfter = instant("received_after", request.receivedAfter, issues);
  const receivedBefore = instant("received_before", request.receivedBefore, issues);
  const terms = request.q === undefined ? undefined : searchTerms(request.q, issues);
  const before = request.cursor === undefined ? undefined : decodeSearchCursor(request.cursor, tenantId, issues);
  if (issues.length > 0) throw new DomainError("invalid_request", "The request is invalid.", issues);
  return {
    limit: limit + 1,
    ...(serviceId !== undefined && { serviceId }),
    ...(type !== undefined && { type }),
    ...(incidentId !== undefined && { incidentId }),
    ...(receivedAfter !== undefined && { receivedAfter }),
    ...(receivedBefore !== undefined && { receivedBefore }),
    ...(terms !== undefined && { terms }),
    ...(before !== undefined && { before }),
  };
}

/** Cuts the extra row off and turns the last shown row into the next cursor. */
function toSearchPage(rows: FoundEvent[], limit: number, tenantId: string): Page<FoundEvent> {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1] as FoundEvent;
  return { items, nextCursor: encodeSearchCursor(tenantId, last.position) };
}

export interface SearchDeps {
  store: Store;
  /** INTAKE_EVENT_SEARCH. */
  searchEnabled: boolean;
}

export function createEventSearch(deps: SearchDeps) {
  const { store, searchEnabled } = deps;

  /** `GET /v1/events`, `IngestService/SearchEvents`: any scope; the caller's tenant only. */
  async function searchEvents(principal: Principal, request: EventSearchRequest): Promise<Page<FoundEvent>> {
    const query = eventSearchQuery(principal.tenantId, request, { searchEnabled });
    const rows = await store.events.search(principal.tenantId, query);
    return toSearchPage(rows, query.limit - 1, principal.tenantId);
  }

  return { searchEvents };
}

export type EventSearch = ReturnType<typeof createEventSearch>;
