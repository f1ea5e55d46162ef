/**
 * The one SQLite retention delete (docs/feed.md, "Retention"), shared like event-insert.ts:
 * store.ts runs it in-thread for `:memory:`, the writer worker (event-writer-worker.ts) on its
 * own connection for a file database. There, its commit's fsync, and any wait for the write
 * lock, block the worker instead of the event loop that reads and verifies requests, and it
 * takes its turn between the group commits instead of contending with them for the lock.
 */
import type { Database, Statement } from "bun:sqlite";
import { idFloor } from "../../domain/ids.ts";

/** Deletes up to `batch` events received before `cutoff` (ms), oldest first; returns how many. */
export type ExpireEvents = (cutoff: number, batch: number) => number;

export function createEventExpiry(db: Database): ExpireEvents {
  // The id's time part bounds the scan to the expired prefix of the primary key.
  const remove: Statement<unknown, [string, number, number]> = db.prepare(
    "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id < ?1 AND received_at < ?2 ORDER BY id LIMIT ?3)",
  );
  const transaction = db.transaction(
    (cutoff: number, batch: number) => remove.run(idFloor(cutoff), cutoff, batch).changes,
  );
  // IMMEDIATE, like every write of the store: the write lock is taken before the read, so the
  // delete waits for a concurrent writer instead of failing on a lock upgrade.
  return (cutoff, batch) => transaction.immediate(cutoff, batch);
}
