/**
 * Group commit: concurrent submissions share one durable write. A commit's cost is dominated
 * by its fsync, not by its row count, so N events in one transaction cost about what one does.
 *
 * - A batch is flushed when it reaches `maxBatch`, or `maxDelayMs` after its first item
 *   arrived, whichever comes first: a lone event waits at most that long.
 * - One flush is in flight at a time; what arrives meanwhile forms the next batch, which is
 *   flushed as soon as the current one settles (it has already waited a whole commit).
 * - Each submission settles with its own positional result; a rejected flush rejects exactly
 *   the submissions of that batch.
 */
import type { CommitWait, Tracer } from "./ports/tracer.ts";

export interface GroupCommitOptions<T, R> {
  maxBatch: number;
  maxDelayMs: number;
  /** Writes the batch durably; resolves with one result per item, in order. */
  flush(items: T[]): Promise<R[]>;
  /**
   * Traces (docs/tracing.md): each submission's wait is a span of its request, each flush a
   * span of its own, linked both ways. Null or absent: nothing traced.
   */
  tracer?: Tracer | null;
}

export interface GroupCommitter<T, R> {
  /** Resolves once the item's batch is durable. */
  submit(item: T): Promise<R>;
  /** Flushes whatever is queued and waits until nothing is in flight (for shutdown). */
  drain(): Promise<void>;
  /** Queued, not yet flushing (for tests and metrics). */
  readonly pending: number;
}

interface Waiter<T, R> {
  item: T;
  wait: CommitWait | null;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export function createGroupCommitter<T, R>(options: GroupCommitOptions<T, R>): GroupCommitter<T, R> {
  const { maxBatch, maxDelayMs } = options;
  const tracer = options.tracer ?? null;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new Error("group commit: maxBatch must be >= 1");
  let queue: Array<Waiter<T, R>> = [];
  let inFlight: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  function clearTimer(): void {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }

  async function run(batch: Array<Waiter<T, R>>): Promise<void> {
    let results: R[];
    try {
      const items = batch.map((w) => w.item);
      results = await (tracer
        ? tracer.commit(
            batch.map((w) => w.wait),
            items.length,
            () => options.flush(items),
          )
        : options.flush(items));
      if (results.length !== batch.length) {
        throw new Error(`group commit: flush returned ${results.length} results for ${batch.length} items`);
      }
    } catch (error) {
      for (const waiter of batch) {
        if (waiter.wait !== null) tracer?.endCommitWait(waiter.wait, error);
        waiter.reject(error);
      }
      return;
    }
    batch.forEach((waiter, i) => {
      if (waiter.wait !== null) tracer?.endCommitWait(waiter.wait);
      waiter.resolve(results[i] as R);
    });
  }

  function flushNow(): void {
    clearTimer();
    if (inFlight !== null || queue.length === 0) return;
    const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
    queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
    inFlight = run(batch).finally(() => {
      inFlight = null;
      // Whatever queued up during the commit has waited long enough: go at once.
      if (queue.length > 0) flushNow();
    });
  }

  function submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      queue.push({ item, wait: tracer ? tracer.commitWait() : null, resolve, reject });
      if (inFlight !== null) return; // the running flush picks this batch up when it settles
      if (queue.length >= maxBatch) flushNow();
      else if (timer === null) {
        timer = setTimeout(flushNow, maxDelayMs);
      }
    });
  }

  async function drain(): Promise<void> {
    while (inFlight !== null || queue.length > 0) {
      if (inFlight === null) flushNow();
      await inFlight;
    }
  }

  return {
    submit,
    drain,
    get pending() {
      return queue.length;
    },
  };
}
