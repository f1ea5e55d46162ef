/**
 * A feed reader's own marker, for tests that must act while a long poll or a stream is
 * waiting rather than after a guessed sleep: every reader (domain/feed.ts) reads the store
 * before it waits, and waits only when that read came back empty.
 */
import { spyOn } from "bun:test";
import type { App } from "../../src/app.ts";

/**
 * Call before starting the reader; resolves with the rows of the next feed read of the store
 * once it has returned (then the spy is removed), or rejects after `timeoutMs`.
 */
export function nextFeedRead(app: App, timeoutMs = 5_000): Promise<unknown[]> {
  const events = app.store.events;
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
