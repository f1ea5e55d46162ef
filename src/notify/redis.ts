/**
 * Feed wake-ups across instances over Redis pub/sub (REDIS_URL set). Best effort by design:
 * readers re-read the store on a timer too, so a message lost while Redis is away delays a
 * delivery and never loses one (docs/feed.md).
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { FeedNotifier } from "../domain/ports/notifier.ts";
import type { Logger } from "../logger.ts";
import { createLocalWakeups, parseWakeMessage } from "./local.ts";

const WARN_INTERVAL_MS = 10_000;

export function createRedisNotifier(options: { url: string; keyPrefix: string; logger: Logger }): FeedNotifier {
  const { logger } = options;
  const channel = `${options.keyPrefix}:feed`;
  const self = randomUUID();
  const local = createLocalWakeups();
  let lastWarn = 0;
  const warn = (what: string, error: unknown) => {
    const now = Date.now();
    if (now - lastWarn < WARN_INTERVAL_MS) return;
    lastWarn = now;
    logger.warn("feed notifier: redis unavailable; readers fall back to their timed re-reads", {
      what,
      error: error instanceof Error ? error.message : String(error),
    });
  };
  const redisOptions = { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false };
  const publisher = new Redis(options.url, redisOptions);
  const subscriber = new Redis(options.url, { ...redisOptions, enableOfflineQueue: true });
  publisher.on("error", (error: unknown) => warn("publisher", error));
  subscriber.on("error", (error: unknown) => warn("subscriber", error));
  subscriber.on("message", (_channel: string, text: string) => {
    const message = parseWakeMessage(text);
    if (message && message.from !== self) local.fire(message.tenants);
  });
  // Re-subscribed after every reconnect: whatever was published meanwhile is lost, so wake all.
  subscriber.on("ready", () => {
    subscriber.subscribe(channel).then(
      () => local.fireAll(),
      (error: unknown) => warn("subscribe", error),
    );
  });

  return {
    kind: "redis",
    publish(tenantIds) {
      local.fire(tenantIds);
      publisher.publish(channel, JSON.stringify({ from: self, tenants: tenantIds })).catch((error: unknown) => {
        warn("publish", error);
      });
    },
    subscribe: (tenantId, wake) => local.subscribe(tenantId, wake),
    async close() {
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}
