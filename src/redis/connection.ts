/**
 * The instance's Redis connections (REDIS_URL set): ONE for commands and ONE subscriber,
 * shared by the cache (src/cache/redis.ts), the rate limiter (src/cache/rate-limiter-redis.ts)
 * and the feed notifier (src/notify/redis.ts). The composition root (src/app.ts) opens them
 * once and closes them once, after the three users are closed. docs/cache.md, "Connections".
 *
 * Commands never wait for a connection: while it is down they fail at once, and each user
 * has its own fallback (the cache loads from the store, the limiter decides in process, the
 * notifier leaves readers to their timed re-reads). The subscriber's channels belong to its
 * listeners; after every reconnect they are subscribed again, and each listener is told
 * when its subscription is live again (or lost), so it can drop what it may have missed.
 */
import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "../logger.ts";

export interface RedisConnectionOptions {
  url: string;
  /** INTAKE_REDIS_KEY_PREFIX: the connections are named `<prefix>:cmd` and `<prefix>:sub`. */
  keyPrefix: string;
  logger: Logger;
  /** Bound on every command, so a slow Redis degrades to each user's fallback instead of stalls. */
  commandTimeoutMs?: number;
  /**
   * One PING per connection per beat: a silently dropped link (no FIN, no RST) leaves both
   * connections "ready" for as long as TCP takes to give up, minutes. A failed PING drops
   * the connection, which makes the subscriber's listeners knowingly deaf and lets ioredis
   * reconnect once the link is back. The cache bounds it by its maxAgeMs (redisHeartbeatMs).
   */
  heartbeatMs?: number;
}

/** A user of the subscriber connection: its channels and what it is told. */
export interface ChannelListener {
  channels: readonly string[];
  /** The listener's channels are subscribed (again): called after every (re)subscription. */
  onSubscribed(): void;
  /** The subscriber connection is gone: messages published from now on are missed. */
  onLost(): void;
  onMessage(channel: string, message: string): void;
}

export interface RedisConnection {
  /** The command connection: GET/SET, scripts, PUBLISH. */
  readonly command: Redis;
  /** The subscriber connection, for its "error" events only: subscribe through `listen`. */
  readonly subscriber: Redis;
  commandReady(): boolean;
  /** Subscribes the listener's channels now (if connected) and after every reconnect; returns its removal. */
  listen(listener: ChannelListener): () => void;
  close(): Promise<void>;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 500;
const DEFAULT_HEARTBEAT_MS = 1_000;
/** How long opening waits for Redis: an unreachable Redis must not stop Intake from starting. */
const CONNECT_BOUND_MS = 2_500;
const WARN_INTERVAL_MS = 10_000;

/**
 * Opens both connections, waiting (bounded) until they are ready. Never throws for an
 * unreachable Redis: the connections keep retrying in the background.
 */
export async function openRedisConnection(options: RedisConnectionOptions): Promise<RedisConnection> {
  const { logger } = options;
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const shared: RedisOptions = {
    // Commands on a connection that is not ready fail at once instead of queueing: a
    // request must never wait on an unreachable Redis.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2_000,
    lazyConnect: true,
    // Reconnect quickly (the cache serves nothing from process while its channel is down),
    // capped at 1 s, with jitter so a fleet does not reconnect in lockstep.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1_000) + Math.floor(Math.random() * 50),
  };
  const command = new Redis(options.url, {
    ...shared,
    connectionName: `${options.keyPrefix}:cmd`,
    // Concurrent commands (rate-limit decisions above all) leave in one write per tick.
    enableAutoPipelining: true,
  });
  // Resubscription is done by hand (see "ready" below) so that a listener hears "subscribed"
  // only once its subscription is active again: earlier would leave a window for missed messages.
  const subscriber = new Redis(options.url, {
    ...shared,
    connectionName: `${options.keyPrefix}:sub`,
    autoResubscribe: false,
  });

  let lastWarned = Number.NEGATIVE_INFINITY;
  const warn = (message: string, error: unknown) => {
    const at = Date.now();
    if (at - lastWarned < WARN_INTERVAL_MS) return;
    lastWarned = at;
    logger.warn(message, { error: error instanceof Error ? error.message : typeof error });
  };
  // Each user listens for errors too (and counts or reports them its own way); this one only
  // keeps an error without any user from being reported as unhandled.
  command.on("error", () => {});
  subscriber.on("error", () => {});

  const listeners = new Set<ChannelListener>();
  const byChannel = new Map<string, ChannelListener>();
  /** Bumped on every (re)connect and close of the subscriber: late replies of an older one are ignored. */
  let epoch = 0;
  let closed = false;

  const subscribe = (targets: ChannelListener[], atEpoch: number) => {
    const channels = targets.flatMap((l) => [...l.channels]);
    if (channels.length === 0) return;
    subscriber.subscribe(...channels).then(
      () => {
        if (atEpoch !== epoch || closed) return;
        for (const listener of targets) if (listeners.has(listener)) listener.onSubscribed();
      },
      (error: unknown) => {
        warn("redis: subscribe failed; reconnecting the subscriber", error);
        // A live connection without the subscription is useless: start over.
        if (!closed && atEpoch === epoch) subscriber.disconnect(true);
      },
    );
  };

  subscriber.on("ready", () => {
    epoch += 1;
    subscribe([...listeners], epoch);
  });
  subscriber.on("close", () => {
    epoch += 1;
    if (closed) return;
    for (const listener of listeners) listener.onLost();
  });
  subscriber.on("message", (channel: string, message: string) => {
    byChannel.get(channel)?.onMessage(channel, message);
  });

  const connectBounded = async (connection: Redis) => {
    connection.connect().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      new Promise<void>((resolve) => connection.once("ready", () => resolve())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CONNECT_BOUND_MS);
      }),
      new Promise<void>((resolve) => connection.once("end", () => resolve())),
      new Promise<void>((resolve) => connection.once("error", () => resolve())),
    ]);
    clearTimeout(timer);
  };
  await Promise.all([connectBounded(command), connectBounded(subscriber)]);

  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const beat = (connection: Redis, which: string) => {
    if (closed || connection.status !== "ready") return;
    connection.ping().catch((error: unknown) => {
      if (closed || connection.status !== "ready") return;
      warn(`redis: ${which} connection missed its heartbeat; reconnecting`, error);
      connection.disconnect(true);
    });
  };
  const heartbeat = setInterval(() => {
    beat(command, "command");
    beat(subscriber, "subscriber");
  }, heartbeatMs);
  heartbeat.unref?.();

  const quit = async (connection: Redis) => {
    if (connection.status !== "ready") {
      connection.disconnect();
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      connection.quit().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, commandTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    connection.disconnect();
  };

  return {
    command,
    subscriber,
    commandReady: () => command.status === "ready",
    listen(listener) {
      for (const channel of listener.channels) {
        if (byChannel.has(channel)) throw new Error(`redis: channel ${channel} already has a listener`);
      }
      listeners.add(listener);
      for (const channel of listener.channels) byChannel.set(channel, listener);
      if (subscriber.status === "ready") subscribe([listener], epoch);
      return () => {
        if (!listeners.delete(listener)) return;
        for (const channel of listener.channels) byChannel.delete(channel);
        if (!closed && subscriber.status === "ready" && listener.channels.length > 0)
          subscriber.unsubscribe(...listener.channels).catch(() => {});
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      await Promise.all([quit(command), quit(subscriber)]);
    },
  };
}
