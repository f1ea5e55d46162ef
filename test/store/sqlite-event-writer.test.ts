import { describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import type { NewEvent } from "../../src/domain/ports/store.ts";
import { mapError } from "../../src/store/sqlite/connection.ts";
import { createEventWriter } from "../../src/store/sqlite/event-writer.ts";

function fixture(name: string): string {
  return new URL(`./fixtures/${name}.ts`, import.meta.url).href;
}

function event(): NewEvent {
  return {
    id: crypto.randomUUID(),
    tenantId: "t",
    serviceId: "s",
    receivedAt: 1,
    idempotencyKey: null,
    payload: new Uint8Array([1]),
  };
}

/** The writer with a substitute worker; every wait bounded well under the test's timeout. */
function writerWith(name: string) {
  return createEventWriter({
    path: "/nonexistent/unused.sqlite",
    mapError,
    workerUrl: fixture(name),
    timeoutMs: 300,
    closeTimeoutMs: 300,
  });
}

/** The settled outcome, without bun test's `rejects` matcher (see event-writer.ts). */
async function outcome(promise: Promise<unknown>): Promise<{ ok: boolean; value: unknown }> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, value: error }),
  );
}

describe("sqlite event writer (worker) failures", () => {
  test("a worker that throws rejects its in-flight batch, and the next batch gets a fresh worker", async () => {
    const writer = writerWith("writer-crashes");
    const first = await outcome(writer.insertBatch([event()]));
    expect(first.ok).toBe(false);
    expect(first.value).toBeInstanceOf(Error);
    expect(first.value).not.toBeInstanceOf(DomainError);
    // A fresh worker (the fixture crashes again), not a hang on the dead one.
    const second = await outcome(writer.insertBatch([event()]));
    expect(second.ok).toBe(false);
    await writer.close();
  });

  test("a worker that exits mid-batch rejects every request in flight on it, a retention delete included", async () => {
    const writer = writerWith("writer-exits");
    const results = await Promise.all([
      outcome(writer.insertBatch([event()])),
      outcome(writer.deleteOlderThan(1, 500)),
      outcome(writer.insertBatch([event()])),
    ]);
    expect(results.map((r) => r.ok)).toEqual([false, false, false]);
    // Alone, on the fresh worker the next request starts: the sweep's batch is not left hanging.
    const alone = await outcome(writer.deleteOlderThan(1, 500));
    expect(alone.ok).toBe(false);
    expect((alone.value as Error).message).toContain("exited");
    await writer.close();
  });

  test("a worker that never answers times out as unavailable", async () => {
    const writer = writerWith("writer-silent");
    const started = performance.now();
    const result = await outcome(writer.insertBatch([event()]));
    expect(result.ok).toBe(false);
    expect(result.value).toMatchObject({ code: "unavailable" });
    expect(performance.now() - started).toBeLessThan(2_000);
    await writer.close();
  });

  test("an unreachable-database error from the worker is DomainError unavailable, with SQLite's error as cause", async () => {
    const writer = writerWith("writer-ioerr");
    const result = await outcome(writer.insertBatch([event()]));
    expect(result.value).toBeInstanceOf(DomainError);
    expect(result.value).toMatchObject({ code: "unavailable" });
    expect((result.value as Error).cause).toMatchObject({ name: "SQLiteError", code: "SQLITE_IOERR_WRITE" });
    await writer.close();
  });

  test("close waits for the batch in flight (bounded), then later batches reject at once", async () => {
    const writer = writerWith("writer-silent");
    const pending = outcome(writer.insertBatch([event()]));
    await writer.close();
    expect((await pending).ok).toBe(false);
    expect((await outcome(writer.insertBatch([event()]))).ok).toBe(false);
  });

  test("an empty batch never starts a worker", async () => {
    const writer = writerWith("writer-crashes");
    expect(await writer.insertBatch([])).toEqual([]);
    await writer.close();
  });
});
