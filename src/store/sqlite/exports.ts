/**
 * The export's state and read on SQLite (docs/export.md). One server owns a SQLite store (its
 * lock file, docs/operations.md), so the lease is held by that process; it is kept anyway so
 * the exporter runs the same code on both stores. Times are the process clock's epoch ms.
 */
import type { Statement } from "bun:sqlite";
import type { ExportRepo } from "../../domain/ports/store.ts";
import type { EventRecord } from "../../domain/types.ts";
import { changeItem, EXPORT_CHANGES_SELECT, eventItem, exportPage } from "../export-rows.ts";
import type { SqliteContext } from "./context.ts";

const EVENTS =
  "SELECT id, tenant_id AS tenantId, service_id AS serviceId, received_at AS receivedAt, " +
  "idempotency_key AS idempotencyKey, payload, position, type, incident_id AS incidentId FROM events " +
  // An event's rowid is its position (migration 0013): a range of the table itself, no index.
  "WHERE rowid > ?1 AND rowid <= ?2 ORDER BY rowid LIMIT ?3";
const CHANGES = `${EXPORT_CHANGES_SELECT} WHERE position > ?1 AND position <= ?2 ORDER BY position LIMIT ?3`;
const HEAD = "SELECT head FROM feed_head WHERE id = 1";
const CLAIM =
  "INSERT INTO export_state (name, holder, lease_expires_at, position) VALUES (?1, ?2, ?3 + ?4, 0) " +
  "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_expires_at = excluded.lease_expires_at " +
  "WHERE export_state.holder = excluded.holder OR export_state.lease_expires_at <= ?3 RETURNING position";
const ADVANCE =
  "UPDATE export_state SET position = ?3, lease_expires_at = ?4 WHERE name = ?1 AND holder = ?2 RETURNING 1";
const RELEASE = "UPDATE export_state SET lease_expires_at = 0 WHERE name = ?1 AND holder = ?2";

export function createExportRepo(ctx: SqliteContext, now: () => number = Date.now): ExportRepo {
  const statements = new Map<string, Statement>();
  const prepared = (text: string): Statement => {
    ctx.refuseIfClosed();
    let statement = statements.get(text);
    if (!statement) {
      statement = ctx.client.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  return {
    claim: (name, holder, ttlMs) =>
      ctx.run(() => {
        const row = prepared(CLAIM).values(name, holder, now(), ttlMs)[0];
        return row ? Number(row[0]) : null;
      }),
    advance: (name, holder, position, ttlMs) =>
      ctx.run(() => prepared(ADVANCE).values(name, holder, position, now() + ttlMs).length > 0),
    release: (name, holder) =>
      ctx.run(() => {
        prepared(RELEASE).run(name, holder);
      }),
    read: (after, limit) =>
      ctx.run(() => {
        const head = Number(prepared(HEAD).values()[0]?.[0] ?? 0);
        if (head <= after) return exportPage(after, head, limit, [], []);
        const events = (prepared(EVENTS).all(after, head, limit) as EventRecord[]).map(eventItem);
        const changes = prepared(CHANGES).values(after, head, limit).map(changeItem);
        return exportPage(after, head, limit, events, changes);
      }),
  };
}
