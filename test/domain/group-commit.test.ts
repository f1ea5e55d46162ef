import { expect, test } from "bun:test";
import { createGroupCommitter } from "../../src/domain/group-commit.ts";

/** A flush whose every call is recorded and which settles only when the test says so. */
function manualFlush() {
  const calls: Array<{ items: number[]; settle: (error?: unknown) => void }> = [];
  const flush = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      calls.push({
        items,
        settle: (error) => (error === undefined ? resolve(items.map((i) => i * 10)) : reject(error)),
      });
    });
  return { calls, flush };
}

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

test("concurrent submissions share one flush, each gets its own positional result", async () => {
  const batches: number[][] = [];
  const gc = createGroupCommitter<number, number>({
    maxBatch: 256,
    maxDelayMs: 1,
    flush: async (items) => {
      batches.push(items);
      return items.map((i) => i * 2);
    },
  });
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => gc.submit(i)));
  expect(results).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
  expect(batches).toHaveLength(1);
  expect(batches[0]).toHaveLength(50);
});

test("a lone submission is flushed after maxDelayMs, without waiting for company", async () => {
  const { calls, flush } = manualFlush();
  const gc = createGroupCommitter({ maxBatch: 256, maxDelayMs: 5, flush });
  const result = gc.submit(7);
  expect(calls).toHaveLength(0);
  await tick(20);
  expect(calls.map((c) => c.items)).toEqual([[7]]);
  calls[0]?.settle();
  expect(await result).toBe(70);
});

test("a batch reaching maxBatch is flushed at once, not after the delay", async () => {
  const { calls, flush } = manualFlush();
  const gc = createGroupCommitter({ maxBatch: 3, maxDelayMs: 60_000, flush });
  const results = [gc.submit(1), gc.submit(2), gc.submit(3)];
  expect(calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
  calls[0]?.settle();
  expect(await Promise.all(results)).toEqual([10, 20, 30]);
});

test("one flush in flight at a time: the next batch accumulates and goes when the first settles", async () => {
  const { calls, flush } = manualFlush();
  const gc = createGroupCommitter({ maxBatch: 2, maxDelayMs: 1, flush });
  const first = [gc.submit(1), gc.submit(2)];
  const second = [gc.submit(3), gc.submit(4), gc.submit(5)];
  await tick(10);
  expect(calls).toHaveLength(1);
  expect(gc.pending).toBe(3);
  calls[0]?.settle();
  expect(await Promise.all(first)).toEqual([10, 20]);
  await tick();
  // Still one at a time, and never more than maxBatch per flush.
  expect(calls.map((c) => c.items)).toEqual([
    [1, 2],
    [3, 4],
  ]);
  calls[1]?.settle();
  await tick();
  expect(calls.map((c) => c.items)).toEqual([[1, 2], [3, 4], [5]]);
  calls[2]?.settle();
  expect(await Promise.all(second)).toEqual([30, 40, 50]);
});

test("a failed flush rejects exactly the submissions of its batch; the next batch still commits", async () => {
  const { calls, flush } = manualFlush();
  const gc = createGroupCommitter({ maxBatch: 2, maxDelayMs: 1, flush });
  const failing = [gc.submit(1), gc.submit(2)].map((p) =>
    p.then(
      () => "ok",
      (e: Error) => e.message,
    ),
  );
  const later = gc.submit(3);
  calls[0]?.settle(new Error("disk on fire"));
  expect(await Promise.all(failing)).toEqual(["disk on fire", "disk on fire"]);
  await tick(10);
  calls[1]?.settle();
  expect(await later).toBe(30);
});

test("a flush answering the wrong number of results rejects its batch instead of misattributing", async () => {
  const gc = createGroupCommitter<number, number>({ maxBatch: 10, maxDelayMs: 1, flush: async () => [1] });
  const results = await Promise.allSettled([gc.submit(1), gc.submit(2)]);
  expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
});

test("drain commits what is queued and waits for it (shutdown)", async () => {
  const flushed: number[][] = [];
  const gc = createGroupCommitter<number, number>({
    maxBatch: 256,
    maxDelayMs: 60_000,
    flush: async (items) => {
      flushed.push(items);
      return items;
    },
  });
  const pending = [gc.submit(1), gc.submit(2)];
  await gc.drain();
  expect(flushed).toEqual([[1, 2]]);
  expect(await Promise.all(pending)).toEqual([1, 2]);
});
