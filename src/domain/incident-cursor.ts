/**
 * The incident change stream's cursor (SPEC §17, docs/incidents.md): the feed cursor's format
 * with its own kind, base64url of `i1.<position>.<tenant tag>` (domain/feed.ts
 * `encodeStreamCursor`), so a feed cursor is not taken for one, nor one for a feed cursor. The
 * export (docs/export.md) uses it as the `Nats-Msg-Id` of an incident change.
 */
import { decodeStreamCursor, encodeStreamCursor, tenantTag } from "./feed-cursor.ts";

export function encodeIncidentCursor(tenantId: string, position: number, tag = tenantTag(tenantId)): string {
  return encodeStreamCursor("i1", tenantId, position, tag);
}

/** The position of an incident stream cursor this tenant was given; 400 invalid_request for anything else. */
export function decodeIncidentCursor(tenantId: string, cursor: string, field = "after"): number {
  return decodeStreamCursor("i1", tenantId, cursor, field);
}
