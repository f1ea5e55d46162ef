/**
 * Feed wake-ups across instances over Redis pub/sub (REDIS_URL set), on the instance's shared
 * Redis connections (src/redis/connection.ts), which it neither opens nor closes. Best effort
 * by design: readers re-read the store on a timer too, so a message lost while Redis is away
 * delays a delivery and never loses one (docs/feed.md).
 */
import { randomUUID } from "node:crypto";
import type { FeedNotifier } from "../domain/ports/notifier.ts";
import type { Logger } from "../logger.ts";
import type { RedisConnection } from "../redis/connection.ts";
import { createLocalWakeups, parseWakeMessage } from "./local.ts";

const WARN_INTERVAL_MS = 10_000;

export function createRedisNotifier(options: {
  redis: RedisConnection;
  keyPrefix: string;
  logger: Logger;
}): FeedNotifier {
  const { logger, redis } = options;
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
  const unlisten = redis.listen({
    channels: [channel],
    // Subscribed again after a reconnect: whatever was published meanwhile is lost, so wake all.
    onSubscribed: () => local.fireAll(),
    onLost: () => {},
    onMessage(_channel, text) {
      const message = parseWakeMessage(text);
      if (message && message.from !== self) local.fire(message.tenants);
    },
  });

  return {
    kind: "redis",
    publish(tenantIds) {
      local.fire(tenantIds);
      if (!redis.commandReady()) {
        warn("publish", new Error(`connection is ${redis.command.status}`));
        return;
      }
      redis.command.publish(channel, JSON.stringify({ from: self, tenants: tenantIds })).catch((error: unknown) => {
        warn("publish", error);
      });
    },
    subscribe: (tenantId, wake) => local.subscribe(tenantId, wake),
    subscribeAll: (wake) => local.subscribeAll(wake),
    async close() {
      unlisten();
    },
  };
}
