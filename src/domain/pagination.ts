import { invalid } from "./errors.ts";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const RAW_ID = /^[0-9a-f]{32}$/;

export interface PageRequest {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Validates limit and cursor: the store query asks one row more than the page, to learn whether a next page exists. */
export function pageQuery(request: PageRequest): { limit: number; before?: string } {
  const limit = request.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalid("limit", `must be an integer from 1 to ${MAX_LIMIT}`);
  }
  if (request.cursor === undefined) return { limit };
  return { limit, before: decodeCursor(request.cursor) };
}

/** Cursors are opaque to clients: base64url of the last row's id. */
export function encodeCursor(rawId: string): string {
  return Buffer.from(rawId, "latin1").toString("base64url");
}

function decodeCursor(cursor: string): string {
  const raw = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("latin1") : "";
  if (!RAW_ID.test(raw)) throw invalid("cursor", "is not a cursor this API returned");
  return raw;
}

/** Cuts the extra row off and turns it into the next cursor. */
export function toPage<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor((items[items.length - 1] as T).id) };
}
