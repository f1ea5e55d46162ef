/**
 * The event reads on SQLite (the feed, a service's listing, one event, the feed head) as
 * prepared bun:sqlite statements whose columns are aliased to EventRecord's field names, so
 * that `all()` builds the records natively: no drizzle row mapping, no JS pass over the rows.
 * On a full feed page, drizzle's mapping and the BLOB column's view were a visible share of
 * the CPU in the benchmark's feed scenarios (docs/store.md, "Event reads").
 */
import type { Database } from "bun:sqlite";
import type { FeedQuery, PositionPageQuery } from "../../domain/ports/store.ts";
import type { EventRecord } from "../../domain/types.ts";

const RECORD =
  "SELECT id, tenant_id AS tenantId, service_id AS serviceId, received_at AS receivedAt, " +
  "idempotency_key AS idempotencyKey, payload, position, type, incident_id AS incidentId FROM events";

export function createEventReads(client: Database) {
  // bun:sqlite hands a BLOB back as a plain Uint8Array: the exact bytes, as EventRecord wants.
  const feed = client.prepare<EventRecord, [string, number, number]>(
    `${RECORD} WHERE tenant_id = ?1 AND position > ?2 ORDER BY position LIMIT ?3`,
  );
  const feedOfService = client.prepare<EventRecord, [string, number, number, string]>(
    `${RECORD} WHERE tenant_id = ?1 AND service_id = ?4 AND position > ?2 ORDER BY position LIMIT ?3`,
  );
  // A service's listing walks (service_id, position), the feed's filter index, newest first.
  const listFirst = client.prepare<EventRecord, [string, number]>(
    `${RECORD} WHERE service_id = ?1 ORDER BY position DESC LIMIT ?2`,
  );
  const listAfter = client.prepare<EventRecord, [string, number, number]>(
    `${RECORD} WHERE service_id = ?1 AND position < ?3 ORDER BY position DESC LIMIT ?2`,
  );
  const one = client.prepare<EventRecord, [string, string]>(`${RECORD} WHERE id = ?1 AND tenant_id = ?2`);
  const head = client.prepare<{ head: number | null }, [string]>(
    "SELECT max(position) AS head FROM events WHERE tenant_id = ?1",
  );

  return {
    feed: (tenantId: string, query: FeedQuery): EventRecord[] => {
      const { after, limit, maxBytes, serviceId } = query;
      if (maxBytes === undefined) {
        return serviceId === undefined
          ? feed.all(tenantId, after, limit)
          : feedOfService.all(tenantId, after, limit, serviceId);
      }
      // The byte budget (docs/feed.md): rows are taken one at a time and the read stops at the
      // first that would pass it (the first row always goes), so at most one event more than
      // the page is ever read. As cheap as all() on bench scenario 8's pages.
      const rows: EventRecord[] = [];
      let bytes = 0;
      for (const row of serviceId === undefined
        ? feed.iterate(tenantId, after, limit)
        : feedOfService.iterate(tenantId, after, limit, serviceId)) {
        bytes += row.payload.length;
        if (bytes > maxBytes && rows.length > 0) break;
        rows.push(row);
      }
      return rows;
    },
    list: (serviceId: string, query: PositionPageQuery): EventRecord[] =>
      query.before === undefined
        ? listFirst.all(serviceId, query.limit)
        : listAfter.all(serviceId, query.limit, query.before),
    get: (tenantId: string, id: string): EventRecord | null => one.get(id, tenantId),
    feedHead: (tenantId: string): number => head.get(tenantId)?.head ?? 0,
  };
}

export type EventReads = ReturnType<typeof createEventReads>;
