/**
 * §18's search on SQLite (docs/search.md). The statement text is built from the filters
 * present (every value a parameter), so there are a handful of constant texts, each prepared
 * once. With terms, the FTS5 trigram index is the outer loop (CROSS JOIN fixes SQLite's join
 * order), in rowid (= position) order newest first: the matching rows are looked up by rowid
 * and filtered until the page is full.
 * Without, the page walks one of the (…, position) indexes newest first (leadingIndex), inside
 * the position range the time bounds give (search-query.ts).
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import type { EventSearchQuery } from "../../domain/ports/store.ts";
import type { FoundEvent } from "../../domain/types.ts";
import { positionBounds } from "../search-query.ts";

const COLUMNS =
  "e.id, e.tenant_id AS tenantId, e.service_id AS serviceId, e.received_at AS receivedAt, " +
  "e.idempotency_key AS idempotencyKey, e.payload, e.position, e.type, e.incident_id AS incidentId";

/** An FTS5 query: every term as a quoted string (a substring, with the trigram tokenizer), ANDed. */
export function ftsQuery(terms: readonly string[]): string {
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(" AND ");
}

/**
 * The index a page without terms walks: an incident's few events, else the service's (and
 * type's) (…, position) index, else the tenant's. Named (INDEXED BY) because without statistics
 * (Intake runs no ANALYZE) SQLite's planner may take the tenant's index over a service's and
 * scan rows of other services.
 */
function leadingIndex(query: EventSearchQuery): string {
  if (query.incidentId !== undefined) return "events_incident_id_idx";
  if (query.serviceId !== undefined && query.type !== undefined) return "events_service_type_position_idx";
  if (query.serviceId !== undefined) return "events_service_position_idx";
  return "events_tenant_position_idx";
}

export function createEventSearch(client: Database) {
  const statements = new Map<string, Statement<FoundEvent, SQLQueryBindings[]>>();

  return (tenantId: string, query: EventSearchQuery): FoundEvent[] => {
    const where: string[] = [];
    const params: SQLQueryBindings[] = [];
    const param = (value: unknown) => {
      params.push(value as SQLQueryBindings);
      return `?${params.length}`;
    };
    const searching = query.terms !== undefined && query.terms.length > 0;
    if (searching) where.push(`events_fts MATCH ${param(ftsQuery(query.terms ?? []))}`);
    where.push(`e.tenant_id = ${param(tenantId)}`);
    if (query.serviceId !== undefined) where.push(`e.service_id = ${param(query.serviceId)}`);
    if (query.type !== undefined) where.push(`e.type = ${param(query.type)}`);
    if (query.incidentId !== undefined) where.push(`e.incident_id = ${param(query.incidentId)}`);
    if (query.receivedAfter !== undefined) where.push(`e.received_at >= ${param(query.receivedAfter)}`);
    if (query.receivedBefore !== undefined) where.push(`e.received_at < ${param(query.receivedBefore)}`);
    // With `q`, FTS5 takes the bounds as its own rowid range (rowid = position).
    where.push(...positionBounds(query, param, "min", searching ? "events_fts.rowid" : "e.position"));
    const from = searching
      ? "events_fts CROSS JOIN events e ON e.rowid = events_fts.rowid"
      : `events e INDEXED BY ${leadingIndex(query)}`;
    // rowid = position (migration 0013): FTS5 hands its matches over newest first itself, so a
    // page stops after `limit` rows that pass the filters instead of sorting every match.
    const order = searching ? "events_fts.rowid DESC" : "e.position DESC";
    const text = `SELECT ${COLUMNS} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ${param(query.limit)}`;
    let statement = statements.get(text);
    if (!statement) {
      statement = client.prepare<FoundEvent, SQLQueryBindings[]>(text);
      statements.set(text, statement);
    }
    return statement.all(...params);
  };
}
