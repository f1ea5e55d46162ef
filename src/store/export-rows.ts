/**
 * The export's read (SPEC §21, docs/export.md), the same on both dialects: every tenant's
 * events and incident changes past one feed position, merged into one page in position order.
 *
 * Both tables take their positions from the one feed_head counter, under its lock held to
 * commit (docs/feed.md), so the committed head bounds what can still appear: every position
 * at or below it belongs to a committed row or to nothing. The head is read FIRST, and both
 * reads stop at it; a change committed between the two reads can therefore never be taken
 * while an event below it, committed at the same moment, is missed.
 */
import type { IncidentChangeRecord } from "../domain/incident-types.ts";
import type { ExportItem, ExportPage } from "../domain/ports/store.ts";
import type { EventRecord } from "../domain/types.ts";
import { changeRecord } from "./incident-rows.ts";

/** The event columns in EventRecord's order (as event-reads.ts selects them). */
export const EXPORT_EVENTS_SELECT =
  "SELECT id, tenant_id, service_id, received_at, idempotency_key, payload, position, type, incident_id FROM events";

/** `position, change, incident, tenant_id` rows. */
export const EXPORT_CHANGES_SELECT = "SELECT position, change, incident, tenant_id FROM incident_changes";

export function changeItem(row: unknown[]): ExportItem {
  const change: IncidentChangeRecord = changeRecord(row);
  return { kind: "change", position: change.position, tenantId: row[3] as string, change };
}

export function eventItem(event: EventRecord): ExportItem {
  return { kind: "event", position: event.position, event };
}

/**
 * One page from the two reads, each of at most `limit` rows in (after, head]. A read that
 * came back full covers only up to its last row, so the page stops at the lower of those.
 */
export function exportPage(
  after: number,
  head: number,
  limit: number,
  events: ExportItem[],
  changes: ExportItem[],
): ExportPage {
  if (head <= after) return { items: [], upTo: after, head: Math.max(head, after) };
  let upTo = head;
  if (events.length >= limit) upTo = Math.min(upTo, (events[events.length - 1] as ExportItem).position);
  if (changes.length >= limit) upTo = Math.min(upTo, (changes[changes.length - 1] as ExportItem).position);
  const items: ExportItem[] = [];
  let e = 0;
  let c = 0;
  while (items.length < limit) {
    const nextEvent = events[e];
    const nextChange = changes[c];
    const next =
      nextEvent && (!nextChange || nextEvent.position < nextChange.position) ? nextEvent : (nextChange ?? null);
    if (next === null || next.position > upTo) break;
    items.push(next);
    if (next === nextEvent) e++;
    else c++;
  }
  if (items.length === limit) upTo = (items[items.length - 1] as ExportItem).position;
  return { items, upTo, head };
}
