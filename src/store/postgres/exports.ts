/**
 * The export's state and read on PostgreSQL (docs/export.md). The lease is timed by the
 * database's clock, so instances whose clocks disagree still agree on when it expires.
 */
import type { ExportRepo } from "../../domain/ports/store.ts";
import { changeItem, EXPORT_CHANGES_SELECT, EXPORT_EVENTS_SELECT, eventItem, exportPage } from "../export-rows.ts";
import { eventRecords } from "./event-reads.ts";
import type { PostgresPool } from "./pool.ts";

const NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
const EVENTS = `${EXPORT_EVENTS_SELECT} WHERE position > $1 AND position <= $2 ORDER BY position LIMIT $3`;
const CHANGES = `${EXPORT_CHANGES_SELECT} WHERE position > $1 AND position <= $2 ORDER BY position LIMIT $3`;
const HEAD = "SELECT head FROM feed_head WHERE id = 1";
const CLAIM =
  "insert into export_state as s (name, holder, lease_expires_at, position) " +
  `values ($1, $2, ${NOW_MS} + $3::bigint, 0) ` +
  "on conflict (name) do update set holder = excluded.holder, lease_expires_at = excluded.lease_expires_at " +
  `where s.holder = excluded.holder or s.lease_expires_at <= ${NOW_MS} returning position`;
const ADVANCE =
  `update export_state set position = $3, lease_expires_at = ${NOW_MS} + $4::bigint ` +
  "where name = $1 and holder = $2 returning 1";
const RELEASE = "update export_state set lease_expires_at = 0 where name = $1 and holder = $2";

export function createExportRepo(pool: PostgresPool): ExportRepo {
  const { guard } = pool;
  return {
    claim: (name, holder, ttlMs) =>
      guard(async () => {
        const [row] = await pool.client().unsafe(CLAIM, [name, holder, ttlMs]).values();
        return row ? Number(row[0]) : null;
      }),
    advance: (name, holder, position, ttlMs) =>
      guard(async () => (await pool.client().unsafe(ADVANCE, [name, holder, position, ttlMs]).values()).length > 0),
    release: (name, holder) =>
      guard(async () => {
        await pool.client().unsafe(RELEASE, [name, holder]);
      }),
    read: (after, limit) =>
      guard(async () => {
        const client = pool.client();
        const [headRow] = await client.unsafe(HEAD).values();
        const head = Number(headRow?.[0] ?? 0);
        if (head <= after) return exportPage(after, head, limit, [], []);
        const [events, changes] = await Promise.all([
          client.unsafe(EVENTS, [after, head, limit]).values(),
          client.unsafe(CHANGES, [after, head, limit]).values(),
        ]);
        return exportPage(after, head, limit, eventRecords(events).map(eventItem), changes.map(changeItem));
      }),
  };
}
