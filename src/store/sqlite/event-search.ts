/**
 * §18's search on SQLite (docs/search.md). The statement text is built from the filters
 * present (every value a parameter), so there are a handful of constant texts, each prepared
 * once. With terms, the FTS5 trigram index is the outer loop (CROSS JOIN fixes SQLite's join
 * order): the matching rows are looked up by rowid and only they are filtered and sorted.
 * Without, the page walks one of the (…, received_at, id) indexes newest first.
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import type { EventSearchQuery } from "../../domain/ports/store.ts";
import type { FoundEvent } from "../../domain/types.ts";

const COLUMNS =
  "e.id, e.tenant_id AS tenantId, e.service_id AS serviceId, e.received_at AS receivedAt, " +
  "e.idempotency_key AS idempotencyKey, e.payload, e.position, e.type, e.incident_id AS incidentId";

/** An FTS5 query: every term as a quoted string (a substring, with the trigram tokenizer), ANDed. */
export function ftsQuery(terms: readonly string[]): string {
  return terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(" AND ");
}

export function createEventSearch(client: Database) {
  const statements = new Map<string, Statement<FoundEvent, SQLQueryBindings[]>>();

  return (tenantId: string, query: EventSearchQuery): FoundEvent[] => {
    const where: string[] = [];
    const params: SQLQueryBindings[] = [];
    const add = (clause: string, ...values: SQLQueryBindings[]) => {
      where.push(clause);
      params.push(...values);
    };
    const searching = query.terms !== undefined && query.terms.length > 0;
    if (searching) add("events_fts MATCH ?", ftsQuery(query.terms ?? []));
    add("e.tenant_id = ?", tenantId);
    if (query.serviceId !== undefined) add("e.service_id = ?", query.serviceId);
    if (query.type !== undefined) add("e.type = ?", query.type);
    if (query.incidentId !== undefined) add("e.incident_id = ?", query.incidentId);
    if (query.receivedAfter !== undefined) add("e.received_at >= ?", query.receivedAfter);
    if (query.receivedBefore !== undefined) add("e.received_at < ?", query.receivedBefore);
    if (query.before !== undefined) add("(e.received_at, e.id) < (?, ?)", query.before.receivedAt, query.before.id);
    params.push(query.limit);
    const from = searching ? "events_fts CROSS JOIN events e ON e.rowid = events_fts.rowid" : "events e";
    const text = `SELECT ${COLUMNS} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY e.received_at DESC, e.id DESC LIMIT ?`;
    let statement = statements.get(text);
    if (!statement) {
      statement = client.prepare<FoundEvent, SQLQueryBindings[]>(text);
      statements.set(text, statement);
    }
    return statement.all(...params);
  };
}
