/**
 * Feed position cursors (docs/feed.md): opaque to clients, bound to the tenant and to the stream
 * they are of (the feed, the incident changes).
 */
import { createHash } from "node:crypto";
import { invalid } from "./errors.ts";

/**
 * A short digest of the tenant id, so a cursor of one tenant is refused by another (400)
 * without revealing the tenant it belongs to. Not a secret: positions are not either.
 */
export function tenantTag(tenantId: string): string {
  return createHash("sha256").update(`intake-feed:${tenantId}`).digest("hex").slice(0, 16);
}

const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,64}$/;
const CURSOR_BODY = /^([a-z]\d)\.(\d{1,16})\.([0-9a-f]{16})$/;

/**
 * What a position cursor is of: `f1` the feed of events, `i1` the incident change stream
 * (docs/incidents.md). Both are positions of the tenant's one order; the kind keeps a cursor of
 * one stream from being taken by the other (400).
 */
export type CursorKind = "f1" | "i1";

/** A position cursor: opaque to clients, base64url of `<kind>.<position>.<tenant tag>`. */
export function encodeStreamCursor(
  kind: CursorKind,
  tenantId: string,
  position: number,
  tag = tenantTag(tenantId),
): string {
  return Buffer.from(`${kind}.${position}.${tag}`, "latin1").toString("base64url");
}

/** The position of a cursor of this kind this tenant was given; 400 invalid_request for anything else. */
export function decodeStreamCursor(kind: CursorKind, tenantId: string, cursor: string, field = "after"): number {
  const text = CURSOR_TEXT.test(cursor) ? Buffer.from(cursor, "base64url").toString("latin1") : "";
  const match = CURSOR_BODY.exec(text);
  const position = match ? Number(match[2]) : Number.NaN;
  if (!match || match[1] !== kind || !Number.isSafeInteger(position) || match[3] !== tenantTag(tenantId)) {
    const what = kind === "f1" ? "a feed cursor" : "an incident stream cursor";
    throw invalid(field, `is not ${what} this API returned to this tenant`);
  }
  return position;
}

/** The feed cursor: opaque to clients, base64url of `f1.<position>.<tenant tag>`. */
export function encodeFeedCursor(tenantId: string, position: number, tag = tenantTag(tenantId)): string {
  return encodeStreamCursor("f1", tenantId, position, tag);
}

/** The position of a feed cursor this tenant was given; 400 invalid_request for anything else. */
export function decodeFeedCursor(tenantId: string, cursor: string, field = "after"): number {
  return decodeStreamCursor("f1", tenantId, cursor, field);
}
