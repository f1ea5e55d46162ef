/**
 * A feed reader's own marker, for tests that must act while a long poll or a stream is
 * waiting rather than after a guessed sleep: every reader (domain/feed.ts) reads the store
 * before it waits, and waits only when that read came back empty.
 */
import { spyOn } from "bun:test";
import type { Store } from "../../src/domain/ports/store.ts";

/**
 * Call before starting the reader; resolves with the rows of the next feed read of `world`'s
 * store (an App, a test world's app, a domain world) once it has returned (then the spy is
 * removed), or rejects after `timeoutMs`.
 */
export function nextFeedRead(world: { store: Store }, timeoutMs = 5_000): Promise<unknown[]> {
  const events = world.store.events;
  const original = events.feed.bind(events);
  const { promise, resolve, reject } = Promise.withResolvers<unknown[]>();
  const spy = spyOn(events, "feed").mockImplementation(async (...args: Parameters<typeof events.feed>) => {
    const rows = await original(...args);
    spy.mockRestore();
    resolve(rows);
    return rows;
  });
  const timer = setTimeout(() => {
    spy.mockRestore();
    reject(new Error(`no feed read of the store within ${timeoutMs} ms`));
  }, timeoutMs);
  return promise.finally(() => clearTimeout(timer));
}
