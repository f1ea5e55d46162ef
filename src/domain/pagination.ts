import { invalid } from "./errors.ts";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const RAW_ID = /^[0-9a-f]{32}$/;
/** A list name: what a cursor says it pages through, e.g. `services` or `events:<service id>`. */
const LIST_NAME = /^[a-z][a-z0-9_]*(:[0-9a-f]{32})?$/;
const CURSOR_VERSION = "c1";
/** Lists ordered by feed position (a service's events): `p1|<list>|<tenant id>|<position>`. */
const POSITION_CURSOR_VERSION = "p1";
/** Well above any cursor this API returns (~120 chars); bounds the decode work of a hostile one. */
const MAX_CURSOR_CHARS = 512;

export interface PageRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Which list a cursor belongs to: a cursor of one list (or one tenant) is refused by every
 * other (docs/api.md, "Pagination"). `list` is the list's own stable name; a list nested under
 * a resource names it too (`events:<raw service id>`), so one service's cursor does not page
 * another's events.
 */
export interface CursorScope {
  list: string;
  tenantId: string;
}

/** Validates limit and cursor: the store query asks one row more than the page, to learn whether a next page exists. */
export function pageQuery(request: PageRequest, scope: CursorScope): { limit: number; before?: string } {
  const limit = request.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalid("limit", `must be an integer from 1 to ${MAX_LIMIT}`);
  }
  if (request.cursor === undefined) return { limit };
  return { limit, before: decodeCursor(request.cursor, scope) };
}

/**
 * Cursors are opaque to clients: base64url of `c1|<list>|<tenant id>|<last row's id>`. The
 * version tag lets the encoding change later without misreading an old cursor.
 */
export function encodeCursor(rawId: string, scope: CursorScope): string {
  if (!LIST_NAME.test(scope.list)) throw new Error(`not a list name: ${scope.list}`);
  return Buffer.from(`${CURSOR_VERSION}|${scope.list}|${scope.tenantId}|${rawId}`, "latin1").toString("base64url");
}

function decodeCursor(cursor: string, scope: CursorScope, version = CURSOR_VERSION, key = RAW_ID): string {
  const text =
    cursor.length <= MAX_CURSOR_CHARS && /^[A-Za-z0-9_-]+$/.test(cursor)
      ? Buffer.from(cursor, "base64url").toString("latin1")
      : "";
  const [tag, list, tenantId, last, ...rest] = text.split("|");
  if (tag !== version || rest.length > 0 || !list || !tenantId || !last || !key.test(last)) {
    throw invalid("cursor", "is not a cursor this API returned");
  }
  if (list !== scope.list) throw invalid("cursor", "belongs to another list");
  if (tenantId !== scope.tenantId) throw invalid("cursor", "belongs to another tenant");
  return last;
}

const POSITION = /^[1-9]\d{0,15}$/;

/**
 * `pageQuery` for a list ordered by feed position, newest first (a service's events, docs/api.md
 * "Pagination"): the cursor holds the last row's position. An id cursor (`c1`, the order these
 * lists had before) is refused like any cursor this API did not return.
 */
export function positionPageQuery(request: PageRequest, scope: CursorScope): { limit: number; before?: number } {
  const { limit } = pageQuery({ limit: request.limit }, scope);
  if (request.cursor === undefined) return { limit };
  const before = Number(decodeCursor(request.cursor, scope, POSITION_CURSOR_VERSION, POSITION));
  if (!Number.isSafeInteger(before)) throw invalid("cursor", "is not a cursor this API returned");
  return { limit, before };
}

/** `toPage` for a list ordered by feed position. */
export function toPositionPage<T extends { position: number }>(rows: T[], limit: number, scope: CursorScope): Page<T> {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  const last = (items[items.length - 1] as T).position;
  if (!LIST_NAME.test(scope.list)) throw new Error(`not a list name: ${scope.list}`);
  const text = `${POSITION_CURSOR_VERSION}|${scope.list}|${scope.tenantId}|${last}`;
  return { items, nextCursor: Buffer.from(text, "latin1").toString("base64url") };
}

/** Cuts the extra row off and turns it into the next cursor. */
export function toPage<T extends { id: string }>(rows: T[], limit: number, scope: CursorScope): Page<T> {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor((items[items.length - 1] as T).id, scope) };
}
