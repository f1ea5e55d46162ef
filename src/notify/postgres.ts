/**
 * Feed wake-ups across instances over PostgreSQL LISTEN/NOTIFY (PostgreSQL without REDIS_URL).
 * Its own small client: LISTEN holds a dedicated connection. Best effort like the Redis one:
 * readers re-read the store on a timer too (docs/feed.md).
 */
import { randomUUID } from "node:crypto";
import { SQL as BunSQL } from "bun";
import type { FeedNotifier } from "../domain/ports/notifier.ts";
import type { Logger } from "../logger.ts";
import { createLocalWakeups, parseWakeMessage } from "./local.ts";

const CHANNEL = "intake_feed";
const WARN_INTERVAL_MS = 10_000;

export async function createPostgresNotifier(options: { url: string; logger: Logger }): Promise<FeedNotifier> {
  const { logger } = options;
  const self = randomUUID();
  const local = createLocalWakeups();
  const client = new BunSQL(options.url, { max: 2, connection: { application_name: "intake-feed-notifier" } });
  let lastWarn = 0;
  const warn = (what: string, error: unknown) => {
    const now = Date.now();
    if (now - lastWarn < WARN_INTERVAL_MS) return;
    lastWarn = now;
    logger.warn("feed notifier: LISTEN/NOTIFY unavailable; readers fall back to their timed re-reads", {
      what,
      error: error instanceof Error ? error.message : String(error),
    });
  };
  let subscription: Awaited<ReturnType<BunSQL["listen"]>> | null = null;
  try {
    subscription = await client.listen(
      CHANNEL,
      (text) => {
        const message = parseWakeMessage(text);
        if (message && message.from !== self) local.fire(message.tenants);
      },
      // Initially and after every reconnect: what was sent meanwhile is lost, so wake all.
      () => local.fireAll(),
    );
  } catch (error) {
    warn("listen", error);
  }

  return {
    kind: "postgres",
    publish(tenantIds) {
      local.fire(tenantIds);
      // A NOTIFY payload is at most 8000 bytes: 150 tenant ids (37 bytes each as JSON) fit.
      for (let i = 0; i < tenantIds.length; i += 150) {
        const tenants = tenantIds.slice(i, i + 150);
        client.notify(CHANNEL, JSON.stringify({ from: self, tenants })).catch((error: unknown) => {
          warn("notify", error);
        });
      }
    },
    subscribe: (tenantId, wake) => local.subscribe(tenantId, wake),
    async close() {
      await subscription?.unlisten().catch(() => undefined);
      await client.close().catch(() => undefined);
    },
  };
}
