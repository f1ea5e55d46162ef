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

/**
 * A read covers at most this many positions per row asked for: `events_position_brin` finds
 * the block ranges of a position window, not the first rows above one, so an unbounded
 * `position > after` would read every row up to the head on each page of a catch-up. Gaps
 * (duplicates' positions, incident changes, retention's deletes) make a short page that still
 * advances `upTo` to the window's end; the exporter reads on while `upTo` is below the head.
 */
const WINDOW_PER_ROW = 4;

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
        const upTo = Math.min(head, after + WINDOW_PER_ROW * limit);
        const [events, changes] = await Promise.all([
          client.unsafe(EVENTS, [after, upTo, limit]).values(),
          client.unsafe(CHANGES, [after, upTo, limit]).values(),
        ]);
        const page = exportPage(after, upTo, limit, eventRecords(events).map(eventItem), changes.map(changeItem));
        return { ...page, head };
      }),
  };
}
