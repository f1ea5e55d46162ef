/**
 * §18's search on PostgreSQL (docs/search.md). The statement text is built from the filters
 * present (every value a parameter), so there are a handful of constant texts, each prepared
 * once per connection. With terms, the trigram GIN index answers a MATERIALIZED candidate set
 * first (the planner cannot then trade it for walking a (…, position) index newest first and
 * testing every payload, the plan a LIMIT tempts it into for a rare term); the candidates are
 * then joined to their rows, filtered and sorted. Without terms the page walks the tenant's or
 * the service's (…, position) index newest first, inside the position range the time bounds
 * give (search-query.ts).
 */
import type { EventSearchQuery } from "../../domain/ports/store.ts";
import type { FoundEvent } from "../../domain/types.ts";
import { positionBounds } from "../search-query.ts";
import { type EventRow, eventRecords } from "./event-reads.ts";
import type { PostgresPool } from "./pool.ts";

const COLUMNS =
  "e.id, e.tenant_id, e.service_id, e.received_at, e.idempotency_key, e.payload, e.position, e.type, e.incident_id";

/** An ILIKE pattern matching `term` anywhere: its own `%`, `_` and `\` escaped (backslash is ILIKE's escape). */
export function substringPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function createEventSearch(pool: PostgresPool) {
  return (tenantId: string, query: EventSearchQuery): Promise<FoundEvent[]> =>
    pool.guard(async () => {
      const params: unknown[] = [];
      const param = (value: unknown) => {
        params.push(value);
        return `$${params.length}`;
      };
      const terms = query.terms ?? [];
      const candidates =
        terms.length === 0
          ? ""
          : `with m as materialized (select id from events where ${terms
              .map((t) => `intake_payload_text(payload) ilike ${param(substringPattern(t))}`)
              .join(" and ")}) `;
      const where = [`e.tenant_id = ${param(tenantId)}`];
      if (query.serviceId !== undefined) where.push(`e.service_id = ${param(query.serviceId)}`);
      if (query.type !== undefined) where.push(`e.type = ${param(query.type)}`);
      if (query.incidentId !== undefined) where.push(`e.incident_id = ${param(query.incidentId)}`);
      if (query.receivedAfter !== undefined) where.push(`e.received_at >= ${param(query.receivedAfter)}`);
      if (query.receivedBefore !== undefined) where.push(`e.received_at < ${param(query.receivedBefore)}`);
      where.push(...positionBounds(query, param, "least"));
      const from = terms.length === 0 ? "events e" : "m join events e on e.id = m.id";
      const text =
        `${candidates}select ${COLUMNS} from ${from} where ${where.join(" and ")} ` +
        `order by e.position desc limit ${param(query.limit)}`;
      return eventRecords((await pool.client().unsafe(text, params).values()) as EventRow[]);
    });
}
