/**
 * Retention (docs/feed.md, "Retention"): rows older than a table's horizon are deleted in the
 * background, in small batches, each its own short transaction, with a pause between batches
 * so that ingest never waits behind a sweep for longer than one batch's delete, and the sweep
 * takes at most a fixed share of the store's time.
 *
 * Generic over tables: each one is a store method `deleteOlderThan(cutoff, batch)`.
 */
import type { Logger } from "../logger.ts";
import type { Clock } from "./types.ts";

export interface RetentionTable {
  /** For the log line. */
  name: string;
  /** Rows older than this many days go. */
  days: number;
  deleteOlderThan(cutoff: number, batch: number): Promise<number>;
}

export interface RetentionOptions {
  tables: RetentionTable[];
  clock: Clock;
  logger: Logger;
  /** Rows per delete (default 500: a few milliseconds of lock on either store). */
  batchSize?: number;
  /** Least pause between two batches of one sweep (default 20 ms): ingest gets the lock in between. */
  pauseMs?: number;
  /**
   * Most of the time a sweep may spend deleting (default 0.2): after a batch that took `t`, the
   * pause is at least `t × (1 − share) / share`, so a store where a batch is slow (SQLite, whose
   * one write lock ingest's commits also need) is swept at a pace it can afford.
   */
  busyShare?: number;
  /** Time between sweeps (default 60 s). */
  intervalMs?: number;
}

const DAY_MS = 86_400_000;

export function createRetentionSweeper(options: RetentionOptions) {
  const { tables, clock, logger } = options;
  const batchSize = options.batchSize ?? 500;
  const pauseMs = options.pauseMs ?? 20;
  const busyShare = options.busyShare ?? 0.2;
  const intervalMs = options.intervalMs ?? 60_000;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<void> | null = null;
  let wakeSleep: (() => void) | null = null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wakeSleep = null;
        resolve();
      }
      wakeSleep = done;
    });

  /** One full sweep of every table; resolves with the rows deleted per table. */
  async function sweep(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const table of tables) {
      const cutoff = clock.now() - table.days * DAY_MS;
      let total = 0;
      for (;;) {
        if (stopped) break;
        // Wall time, not the domain clock: this paces the store, it decides nothing.
        const started = performance.now();
        const n = await table.deleteOlderThan(cutoff, batchSize);
        const took = performance.now() - started;
        total += n;
        if (n < batchSize) break;
        await sleep(Math.max(pauseMs, (took * (1 - busyShare)) / busyShare));
      }
      deleted[table.name] = total;
      if (total > 0) logger.info("retention sweep", { table: table.name, deleted: total });
    }
    return deleted;
  }

  function schedule(ms: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = sweep()
        .then(
          () => undefined,
          (error: unknown) => logger.warn("retention sweep failed; retried at the next interval", { error }),
        )
        .finally(() => {
          running = null;
          schedule(intervalMs);
        });
    }, ms);
    timer.unref?.();
  }

  return {
    sweep,
    /** Starts sweeping in the background: a first sweep soon after start, then every interval. */
    start(firstDelayMs = 1_000): void {
      if (tables.length > 0) schedule(firstDelayMs);
    },
    /** Stops after the batch in flight. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      wakeSleep?.();
      await running;
    },
  };
}

export type RetentionSweeper = ReturnType<typeof createRetentionSweeper>;
