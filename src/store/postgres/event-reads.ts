/**
 * The event reads on PostgreSQL (the feed, a service's listing, one event, the feed head) as
 * SQL texts for Bun's client directly, which prepares each text once per connection, and one
 * row mapper: drizzle's select builder and row mapping cost more than the rows on a feed page
 * of 1,000 events (docs/store.md, "Event reads").
 */
import type { EventRecord } from "../../domain/types.ts";

const RECORD =
  "SELECT id, tenant_id, service_id, received_at, idempotency_key, payload, position, type, incident_id FROM events";

export const FEED = `${RECORD} WHERE tenant_id = $1 AND position > $2 ORDER BY position LIMIT $3`;
export const FEED_OF_SERVICE = `${RECORD} WHERE tenant_id = $1 AND service_id = $4 AND position > $2 ORDER BY position LIMIT $3`;
/**
 * The byte budget (docs/feed.md): the subquery walks the page's positions summing the
 * payloads' lengths (octet_length of a TOASTed value reads its header, not its content), and
 * the outer read fetches payloads only up to the last position within $4, or the first one.
 */
function budgeted(filter: string): string {
  return (
    `${RECORD} WHERE tenant_id = $1${filter} AND position > $2 AND position <= (` +
    "SELECT coalesce(max(CASE WHEN upto <= $4 THEN position END), min(position)) FROM (" +
    "SELECT position, sum(octet_length(payload)) OVER (ORDER BY position ROWS UNBOUNDED PRECEDING) AS upto " +
    `FROM events WHERE tenant_id = $1${filter} AND position > $2 ORDER BY position LIMIT $3) AS page) ORDER BY position`
  );
}
export const FEED_WITHIN = budgeted("");
export const FEED_OF_SERVICE_WITHIN = budgeted(" AND service_id = $5");
// A service's listing walks (service_id, position), the feed's filter index, newest first.
export const LIST_FIRST = `${RECORD} WHERE service_id = $1 ORDER BY position DESC LIMIT $2`;
export const LIST_AFTER = `${RECORD} WHERE service_id = $1 AND position < $3 ORDER BY position DESC LIMIT $2`;
export const ONE = `${RECORD} WHERE id = $1 AND tenant_id = $2`;
export const FEED_HEAD = "SELECT max(position) FROM events WHERE tenant_id = $1";

/** One row of `RECORD` as `.values()` returns it. */
export type EventRow = [
  string,
  string,
  string,
  string | number,
  string | null,
  Uint8Array,
  string | number,
  string | null,
  string | null,
];

/**
 * Rows → records. Bun's client returns `bigint` columns as strings, and `bytea` as a Buffer,
 * which is a Uint8Array and is kept as it comes: a plain view over it
 * (`new Uint8Array(b.buffer, …)`) made JSC materialize each payload's ArrayBuffer, a cost
 * the benchmark's feed scenarios (full pages of 1 KiB events) showed.
 */
export function eventRecords(rows: EventRow[]): EventRecord[] {
  const records = new Array<EventRecord>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const [id, tenantId, serviceId, receivedAt, idempotencyKey, payload, position, type, incidentId] = rows[
      i
    ] as EventRow;
    records[i] = {
      id,
      tenantId,
      serviceId,
      receivedAt: Number(receivedAt),
      idempotencyKey,
      payload,
      position: Number(position),
      type,
      incidentId,
    };
  }
  return records;
}
