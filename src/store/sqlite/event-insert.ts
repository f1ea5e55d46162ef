/**
 * The one SQLite event insert: a plain function over a bun:sqlite Database. store.ts runs it
 * in-thread for `:memory:`, the worker (event-writer-worker.ts) runs it on its own connection
 * for a file database; so the test worlds, which run on `:memory:`, exercise the statements
 * production runs. Raw bun:sqlite rather than drizzle, because the worker has no drizzle
 * instance and needs none for these statements.
 */
import type { Database, Statement } from "bun:sqlite";
import type { AlertEventInput } from "../../domain/incident-types.ts";
import type { InsertEventResult, NewEvent } from "../../domain/ports/store.ts";
import { createAlertApply } from "./incidents.ts";

export type InsertEvents = (batch: ReadonlyArray<NewEvent>) => InsertEventResult[];

/**
 * Prepares the statements (the tables must exist: call after migrate()) and returns the batch
 * insert: one IMMEDIATE transaction, one fsync (synchronous=FULL) for the whole group; a throw
 * rolls all of it back. The alert effects of the inserted alert events (§17) are applied in
 * that same transaction (docs/incidents.md): no incident change without its event, none twice.
 */
export function createEventInsert(db: Database): InsertEvents {
  // The unique index decides duplicates: no row back means the key was already used.
  const insert: Statement<
    { id: string },
    [string, string, number, string | null, Uint8Array, string, number, string | null]
  > = db.prepare(
    // rowid = position (migration 0013): the export and FTS5 read rowid order as position order.
    "INSERT INTO events (rowid, id, service_id, received_at, idempotency_key, payload, tenant_id, position, type) " +
      "VALUES (?7, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (service_id, idempotency_key) DO NOTHING RETURNING id",
  );
  // First write of every batch: reserves its positions under the write lock (docs/feed.md).
  const bump: Statement<{ head: number }, [number]> = db.prepare(
    "INSERT INTO feed_head (id, head) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET head = head + excluded.head RETURNING head",
  );
  const byKey: Statement<{ id: string; received_at: number }, [string, string]> = db.prepare(
    "SELECT id, received_at FROM events WHERE service_id = ?1 AND idempotency_key = ?2",
  );
  const applyAlerts = createAlertApply(db);
  const transaction = db.transaction((batch: ReadonlyArray<NewEvent>) => {
    const bumped = bump.get(batch.length);
    if (!bumped) throw new Error("insertBatch: feed_head returned no row");
    const first = bumped.head - batch.length + 1;
    const alerts: AlertEventInput[] = [];
    const alertAt: number[] = [];
    const results = batch.map((event, i): InsertEventResult => {
      const position = first + i;
      const { id, serviceId, receivedAt, idempotencyKey, payload, tenantId, type, alert } = event;
      if (insert.get(id, serviceId, receivedAt, idempotencyKey, payload, tenantId, position, type ?? null)) {
        if (alert) {
          alerts.push({ eventId: id, tenantId, serviceId, receivedAt, alert });
          alertAt.push(i);
        }
        return { kind: "inserted" };
      }
      const prior = idempotencyKey === null ? null : byKey.get(serviceId, idempotencyKey);
      if (!prior) throw new Error("insertBatch: an event was neither inserted nor a duplicate");
      return { kind: "duplicate", id: prior.id, receivedAt: prior.received_at };
    });
    if (alerts.length > 0) {
      applyAlerts(alerts).forEach((incident, j) => {
        results[alertAt[j] as number] = { kind: "inserted", incident };
      });
    }
    return results;
  });
  // IMMEDIATE: take the write lock up front, like every write transaction of the store.
  return (batch) => (batch.length === 0 ? [] : transaction.immediate(batch));
}
