/**
 * The incident change stream's cursor (SPEC §17, docs/incidents.md): the feed cursor's format
 * with its own prefix, base64url of `i1.<position>.<tenant tag>`, so a feed cursor is not taken
 * for one. The export (docs/export.md) uses it as the `Nats-Msg-Id` of an incident change.
 */
import { tenantTag } from "./feed.ts";

export function encodeIncidentCursor(tenantId: string, position: number, tag = tenantTag(tenantId)): string {
  return Buffer.from(`i1.${position}.${tag}`, "latin1").toString("base64url");
}
