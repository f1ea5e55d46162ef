/**
 * The explorer's address and its rows' text, free of DOM and API (test/console/event-query.test.ts):
 * the filters a `/console/events?…` address holds, the address of a view, the `datetime-local`
 * values the time filters show, and the payload's first line a compact row carries.
 */

/** §18's filters, as `GET /v1/events` names them. */
export const FILTERS = ["q", "service_id", "type", "incident_id", "received_after", "received_before"] as const;
export type FilterName = (typeof FILTERS)[number];
/** A view of the explorer: its filters and the page's cursor (absent: the newest page). */
export type Filters = Partial<Record<FilterName | "cursor", string>>;

/** The filters in the address; unknown keys and empty values are left out, as the API ignores them. */
export function filtersOf(search: string): Filters {
  const query = new URLSearchParams(search);
  const filters: Filters = {};
  for (const key of [...FILTERS, "cursor"] as const) {
    const value = query.get(key);
    if (value) filters[key] = value;
  }
  return filters;
}

/** The console path of an explorer view (empty filters left out). */
export function explorerPath(filters: Filters): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) if (value) query.set(key, value);
  const text = query.toString();
  return text ? `/events?${text}` : "/events";
}

/** A `datetime-local` value (the viewer's time zone) as the RFC 3339 instant the API takes. */
export function isoOfLocal(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** An RFC 3339 instant as a `datetime-local` value in the viewer's time zone (minutes). */
export function localOfIso(iso: string | undefined): string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

const utf8 = new TextDecoder();
/** The longest first line a row carries, in characters; CSS ellipsizes it to the row's width anyway. */
export const FIRST_LINE_MAX = 200;

/** The payload's first line as received (a one-line JSON body is all of it), cut to a row's length. */
export function firstLine(payload: Uint8Array): string {
  // Four bytes per character at most: no need to decode a 256 KiB body for 200 characters.
  const text = utf8.decode(payload.subarray(0, FIRST_LINE_MAX * 4 + 4));
  const line = text.split(/\r?\n/, 1)[0] ?? "";
  const chars = Array.from(line);
  return chars.length > FIRST_LINE_MAX ? `${chars.slice(0, FIRST_LINE_MAX).join("")}…` : line;
}

const ALERT_ACTIONS = new Set(["trigger", "acknowledge", "resolve"]);

/**
 * What a row shows as an event's type: the API's `type` (§18), else, for an alert event (§17: a
 * JSON body with a top-level `event_action`, which has no `type` of its own), "alert · <action>".
 * A console label only: the API's `type` of an alert event stays null, and the explorer's type
 * filter does not match it. Null for any other event.
 */
export function typeLabel(event: { type?: string; payload: Uint8Array }): string | null {
  if (event.type) return event.type;
  const text = utf8.decode(event.payload);
  // Only a JSON object naming event_action can be one: any other body is not parsed.
  if (!text.includes('"event_action"') || !text.trimStart().startsWith("{")) return null;
  try {
    const body = JSON.parse(text) as { event_action?: unknown };
    const action = body.event_action;
    return typeof action === "string" && ALERT_ACTIONS.has(action) ? `alert · ${action}` : null;
  } catch {
    return null;
  }
}
