import { createHash, randomUUID } from "node:crypto";
import { Redis, type RedisOptions } from "ioredis";
import type { Cache, CacheNamespace, NamespaceOptions } from "../domain/ports/cache.ts";
import { noopObserver, type Observer } from "../domain/ports/observer.ts";
import type { Logger } from "../logger.ts";
import { createLocalNamespace, type LocalNamespace, lookupCounter, namespaceOnce } from "./memory.ts";

export interface RedisCacheOptions {
  url: string;
  /** Prefix of every key and channel, so several deployments can share one Redis. */
  keyPrefix?: string;
  /**
   * Cap on an entry's life in this process. It bounds how long an instance that missed an
   * invalidation (subscriber connection down) can serve the old value.
   */
  l1TtlMs?: number;
  logger: Logger;
  /** Clock of the in-process tier (epoch ms); tests inject one. Redis TTLs are Redis's own. */
  now?: () => number;
  /** Bound on every Redis command, so a slow Redis degrades to loads instead of stalls. */
  commandTimeoutMs?: number;
  /** How long `invalidate` waits for the other instances to confirm they dropped the key. */
  ackTimeoutMs?: number;
  /** Life of the marker `invalidate` leaves in Redis; must exceed any plausible `load`. */
  tombstoneTtlMs?: number;
  /** Counts lookups (`intake_cache_lookups_total`), as memory.ts `lookupCounter` describes. */
  observer?: Observer;
  /**
   * No entry is served longer than this after its `load` started (the store read), in either
   * tier: the age travels into Redis as the key's expiry and back out of it. It bounds how
   * long any instance can serve a value after its invalidation, whatever the network does;
   * an `invalidate` that cannot confirm resolves only once this much time has passed.
   */
  maxAgeMs?: number;
}

export interface RedisCacheStats {
  /** Redis commands or connections that failed; each was answered by the fallback. */
  redisErrors: number;
  /** Times the subscriber (re)subscribed and therefore cleared the whole in-process tier. */
  l1Resets: number;
  /** Invalidations that resolved without every subscribed instance's confirmation. */
  ackTimeouts: number;
}

export interface RedisCache extends Cache {
  readonly kind: "redis";
  stats(): RedisCacheStats;
  /** Both connections are up: the shared tier is serving, not only the in-process one. */
  sharedTierUp(): boolean;
}

/**
 * Written over a key by `invalidate`. Cached values are JSON, and no JSON text starts with
 * "!", so it can never be mistaken for a value.
 */
const TOMBSTONE = "!invalidated";

/**
 * A fill that refuses to overwrite anything, above all a tombstone: an instance whose load
 * read the store before a mutation must not put the old value back after the mutation's
 * invalidate. Returns 1 stored, 0 a value was already there, -1 a tombstone was there.
 */
/**
 * The value and its remaining life (PTTL) in one atomic step: the remaining life is what keeps
 * a value read from Redis from living longer in this process than it may anywhere.
 */
const READ_SCRIPT = `
local value = redis.call('GET', KEYS[1])
if not value then return nil end
return {value, redis.call('PTTL', KEYS[1])}
`;

const READ_SHA = createHash("sha1").update(READ_SCRIPT).digest("hex");

const FILL_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current == ARGV[3] then return -1 end
if current then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** At most one warning per message per this interval: an outage must not flood the log. */
const WARN_INTERVAL_MS = 10_000;
/** Invalidations that could not reach Redis, replayed on reconnect; bounded like any buffer. */
const MAX_UNSENT = 10_000;

interface InvalidationMessage {
  /** Message id, echoed back in acknowledgements. */
  id: string;
  /** Sending instance; acknowledgements go to its own channel. */
  from: string;
  ns: string;
  key: string;
}

interface AckWaiter {
  acks: number;
  expected: number | undefined;
  done(): void;
}

interface Registered {
  options: NamespaceOptions;
  local: LocalNamespace<unknown>;
  view: CacheNamespace<unknown>;
}

function parseMessage(raw: string): InvalidationMessage | undefined {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const { id, from, ns, key } = parsed as Record<string, unknown>;
    if (typeof id !== "string" || typeof from !== "string" || typeof ns !== "string" || typeof key !== "string")
      return undefined;
    return { id, from, ns, key };
  } catch {
    return undefined;
  }
}

/** Only the error's class and message: never a key, a value or a command's arguments. */
function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.name, reason: error.message };
  return { error: typeof error };
}

/**
 * Two-tier cache shared by several Intake instances: L1 in process (reused from memory.ts),
 * L2 in Redis, invalidation broadcast over Redis pub/sub and acknowledged by every
 * subscribed instance before `invalidate` resolves. See docs/cache.md.
 */
export async function createRedisCache(options: RedisCacheOptions): Promise<RedisCache> {
  const prefix = options.keyPrefix ?? "intake";
  const l1TtlMs = options.l1TtlMs ?? 5_000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 500;
  const ackTimeoutMs = options.ackTimeoutMs ?? 1_000;
  const tombstoneTtlMs = options.tombstoneTtlMs ?? 10_000;
  const maxAgeMs = options.maxAgeMs ?? 2_000;
  const now = options.now ?? Date.now;
  const { logger } = options;

  const instanceId = randomUUID();
  const invalidateChannel = `${prefix}:invalidate`;
  const ackChannel = `${prefix}:ack:${instanceId}`;

  const namespaces = new Map<string, Registered>();
  const waiters = new Map<string, AckWaiter>();
  /** Keyed by Redis key, so repeated failures for one key keep one entry. */
  const unsent = new Map<string, { ns: string; key: string }>();
  const stats: RedisCacheStats = { redisErrors: 0, l1Resets: 0, ackTimeouts: 0 };
  const lastWarned = new Map<string, { at: number; suppressed: number }>();
  let subscribed = false;
  let subscriberEpoch = 0;
  let closed = false;

  const warn = (message: string, fields: Record<string, unknown> = {}) => {
    const seen = lastWarned.get(message);
    const at = now();
    if (seen && at - seen.at < WARN_INTERVAL_MS) {
      seen.suppressed += 1;
      return;
    }
    lastWarned.set(message, { at, suppressed: 0 });
    logger.warn(message, { ...fields, suppressed: seen?.suppressed ?? 0 });
  };

  const failed = (operation: string, error: unknown, namespace?: string) => {
    stats.redisErrors += 1;
    warn(`cache: redis ${operation} failed; serving without the shared tier`, {
      ...(namespace === undefined ? {} : { namespace }),
      ...errorFields(error),
    });
  };

  const connectionOptions: RedisOptions = {
    // Commands on a connection that is not ready fail at once instead of queueing: a
    // request must never wait on an unreachable Redis, it falls back to the store.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2_000,
    lazyConnect: true,
    // Reconnect quickly (an instance without its subscriber serves from L1 unconfirmed),
    // capped at 1 s, with jitter so a fleet does not reconnect in lockstep.
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1_000) + Math.floor(Math.random() * 50),
  };
  const command = new Redis(options.url, { ...connectionOptions, connectionName: `${prefix}:cache` });
  // Resubscription is done by hand (see "ready" below) so L1 is cleared only once the
  // subscription is active again: clearing earlier would leave a window for missed messages.
  const subscriber = new Redis(options.url, {
    ...connectionOptions,
    connectionName: `${prefix}:cache-sub`,
    autoResubscribe: false,
  });

  const commandReady = () => command.status === "ready";

  command.on("error", (error: unknown) => failed("connection", error));
  subscriber.on("error", (error: unknown) => failed("subscriber connection", error));

  const resetL1 = () => {
    stats.l1Resets += 1;
    for (const { local } of namespaces.values()) local.clear();
  };

  const onAck = (id: string) => {
    const waiter = waiters.get(id);
    if (!waiter) return;
    waiter.acks += 1;
    if (waiter.expected !== undefined && waiter.acks >= waiter.expected) waiter.done();
  };

  subscriber.on("close", () => {
    if (subscribed && !closed)
      warn("cache: invalidation channel lost; serving without the in-process tier until it is back", { maxAgeMs });
    subscribed = false;
    subscriberEpoch += 1;
    // Deaf: an invalidation sent now would not reach us, and its sender (which no longer
    // counts us as a receiver) would answer at once. So nothing is served from this process
    // until the channel is back (see `peek`), and what it held is useless: drop it.
    for (const { local } of namespaces.values()) local.clear();
  });

  let firstSubscription: () => void = () => {};
  const subscribedOnce = new Promise<void>((resolve) => {
    firstSubscription = resolve;
  });

  subscriber.on("ready", () => {
    const epoch = ++subscriberEpoch;
    subscriber.subscribe(invalidateChannel, ackChannel).then(
      () => {
        if (epoch !== subscriberEpoch || closed) return;
        subscribed = true;
        // Invalidations sent while this connection was down were missed: everything held
        // in process may be stale, so drop it all (in-flight fills included).
        resetL1();
        if (stats.l1Resets > 1) logger.info("cache: invalidation channel back; in-process entries dropped");
        firstSubscription();
      },
      (error: unknown) => {
        failed("subscribe", error);
        // A live connection without the subscription is useless: start over.
        if (!closed && epoch === subscriberEpoch) subscriber.disconnect(true);
      },
    );
  });

  subscriber.on("message", (channel: string, raw: string) => {
    if (channel === ackChannel) {
      onAck(raw);
      return;
    }
    if (channel !== invalidateChannel) return;
    const message = parseMessage(raw);
    if (!message) {
      warn("cache: ignored a malformed invalidation message");
      return;
    }
    if (message.from === instanceId) {
      // The sender dropped its own L1 before publishing.
      onAck(message.id);
      return;
    }
    namespaces.get(message.ns)?.local.drop(message.key);
    if (!commandReady()) return;
    command.publish(`${prefix}:ack:${message.from}`, message.id).catch((error: unknown) => failed("ack", error));
  });

  const remember = (redisKey: string, ns: string, key: string) => {
    unsent.delete(redisKey);
    unsent.set(redisKey, { ns, key });
    if (unsent.size > MAX_UNSENT) {
      const oldest = unsent.keys().next();
      if (!oldest.done) unsent.delete(oldest.value);
      warn("cache: too many invalidations waiting for redis; the oldest was dropped");
    }
  };

  /**
   * Tombstone + publish, then (when we can hear them) wait for every receiver's ack. True
   * only when every instance Redis delivered the message to confirmed it dropped the key.
   */
  const broadcast = async (ns: string, key: string, waitForAcks: boolean): Promise<boolean> => {
    const redisKey = `${prefix}:${ns}:${key}`;
    if (closed) return true;
    if (!commandReady()) {
      remember(redisKey, ns, key);
      failed("invalidate", new Error(`connection is ${command.status}`), ns);
      return false;
    }
    const id = randomUUID();
    const message: InvalidationMessage = { id, from: instanceId, ns, key };
    let acked: Promise<boolean> | undefined;
    let waiter: AckWaiter | undefined;
    // Acknowledgements come back on our subscriber; without it there is nothing to wait for.
    if (waitForAcks && subscribed) {
      acked = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(id);
          resolve(false);
        }, ackTimeoutMs);
        const registered: AckWaiter = {
          acks: 0,
          expected: undefined,
          done() {
            clearTimeout(timer);
            waiters.delete(id);
            resolve(true);
          },
        };
        waiter = registered;
        // Registered before publishing: an ack can overtake the PUBLISH reply.
        waiters.set(id, registered);
      });
    }
    try {
      const results = await command
        .pipeline()
        .set(redisKey, TOMBSTONE, "PX", tombstoneTtlMs)
        .publish(invalidateChannel, JSON.stringify(message))
        .exec();
      const setError = results?.[0]?.[0];
      const publishError = results?.[1]?.[0];
      if (!results || setError || publishError) throw setError ?? publishError ?? new Error("pipeline discarded");
      const receivers = results[1]?.[1];
      // Without our own subscription the acknowledgements cannot reach us: unconfirmed.
      if (!waiter || !acked) return !waitForAcks;
      waiter.expected = typeof receivers === "number" ? receivers : 0;
      if (waiter.acks >= waiter.expected) waiter.done();
      if (await acked) return true;
      stats.ackTimeouts += 1;
      warn("cache: invalidation not confirmed by every instance in time", {
        namespace: ns,
        expected: waiter.expected,
        confirmed: waiter.acks,
      });
      return false;
    } catch (error) {
      waiter?.done();
      remember(redisKey, ns, key);
      failed("invalidate", error, ns);
      return false;
    }
  };

  command.on("ready", () => {
    if (unsent.size === 0) return;
    // Put the tombstones down that could not be written while Redis was unreachable, so a
    // value cached in L2 before the outage does not outlive its invalidation by a whole TTL.
    const pending = [...unsent.values()];
    unsent.clear();
    for (const { ns, key } of pending) void broadcast(ns, key, false);
  });

  /** The raw value and its remaining life in ms; null: no key; undefined: Redis failed. */
  const l2Get = async (redisKey: string, ns: string): Promise<{ raw: string; pttl: number } | null | undefined> => {
    if (closed) return undefined;
    if (!commandReady()) {
      failed("get", new Error(`connection is ${command.status}`), ns);
      return undefined;
    }
    try {
      const reply = (await command.evalsha(READ_SHA, 1, redisKey).catch((error: unknown) => {
        // NOSCRIPT after a Redis restart or failover: load it again by sending it whole.
        if (error instanceof Error && error.message.startsWith("NOSCRIPT"))
          return command.eval(READ_SCRIPT, 1, redisKey);
        throw error;
      })) as [string, number] | null;
      if (reply === null) return null;
      return { raw: reply[0], pttl: reply[1] };
    } catch (error) {
      failed("get", error, ns);
      return undefined;
    }
  };

  /** 1 stored, 0 something already there, -1 tombstone there, undefined Redis failed. */
  const l2Fill = async (redisKey: string, json: string, ttlMs: number, ns: string): Promise<number | undefined> => {
    if (!commandReady()) return undefined;
    try {
      const outcome = await command.eval(FILL_SCRIPT, 1, redisKey, json, String(ttlMs), TOMBSTONE);
      return typeof outcome === "number" ? outcome : undefined;
    } catch (error) {
      failed("fill", error, ns);
      return undefined;
    }
  };

  const createNamespace = <V>(name: string, nsOptions: NamespaceOptions): Registered => {
    const { ttlMs, negativeTtlMs, maxEntries } = nsOptions;
    const local = createLocalNamespace<V>(maxEntries, now);
    const sharedTtl = (value: V | null) => (value === null ? negativeTtlMs : ttlMs);
    const localTtl = (value: V | null) => Math.min(sharedTtl(value), l1TtlMs);
    const counted = lookupCounter(options.observer ?? noopObserver, name);

    /**
     * How long this process may keep a value that must be gone by `deadline` (epoch ms on
     * `now`): 0 while the invalidation channel is down, since we would not hear one.
     */
    const keepFor = (value: V | null, deadline: number) =>
      subscribed ? Math.max(0, Math.min(localTtl(value), deadline - now())) : 0;

    const fillFromShared = async (key: string, load: () => Promise<V | null>) => {
      const redisKey = `${prefix}:${name}:${key}`;
      const asked = now();
      const shared = await l2Get(redisKey, name);
      const raw = shared?.raw;
      if (shared && raw !== TOMBSTONE) {
        try {
          const value = JSON.parse(shared.raw) as V | null;
          counted.shared();
          // Redis counted the key's remaining life at some instant after `asked`: ending it at
          // asked + pttl here never outlives the copy in Redis, so refilling from the shared
          // tier cannot stretch an entry's age past maxAgeMs.
          return { value, ttlMs: keepFor(value, asked + shared.pttl) };
        } catch (error) {
          failed("decode", error, name);
        }
      }
      counted.miss();
      const loadStarted = now();
      const deadline = loadStarted + maxAgeMs;
      const loaded = await load();
      const json = JSON.stringify(loaded ?? null);
      // Every instance hands out the JSON form, whether it loaded the value or read it from
      // Redis, so a value that does not survive JSON shows up on the first call.
      const value = JSON.parse(json) as V | null;
      let keep = true;
      const remaining = Math.min(sharedTtl(value), deadline - now());
      if (shared !== undefined && remaining > 0) {
        const outcome = await l2Fill(redisKey, json, remaining, name);
        // A tombstone that appeared during our load: an invalidation overtook us, so what we
        // loaded may predate it. Hand it to our callers, but do not keep it.
        if (outcome === -1 && raw !== TOMBSTONE) keep = false;
      }
      return { value, ttlMs: keep ? keepFor(value, deadline) : 0 };
    };

    const view: CacheNamespace<V> = {
      // Deaf (channel down), nothing is served from process: see the "close" handler.
      peek: (key) => (subscribed ? counted.local(local.peek(key)) : undefined),
      getOrLoad(key, load) {
        const hit = subscribed ? counted.local(local.peek(key)) : undefined;
        if (hit !== undefined) return Promise.resolve(hit);
        return local.fill(key, () => fillFromShared(key, load));
      },
      async invalidate(key) {
        // Called after the store committed, so from here on every load reads the new state.
        const committed = Date.now();
        local.drop(key);
        if (await broadcast(name, key, true)) return;
        // Some instance may not have heard us. None serves an entry older than maxAgeMs, and
        // any entry it holds was loaded before the commit: once maxAgeMs has passed since the
        // commit, every instance refuses the old value. Answering earlier would be a lie
        // (docs/cache.md, "When an invalidation cannot be confirmed").
        const wait = committed + maxAgeMs - Date.now();
        if (wait > 0 && !closed) await Bun.sleep(wait);
      },
    };
    return {
      options: { ...nsOptions },
      local: local as LocalNamespace<unknown>,
      view: view as CacheNamespace<unknown>,
    };
  };

  const connectBounded = async (connection: Redis, ready: Promise<unknown>) => {
    // An unreachable Redis must not stop Intake from starting: the cache works without it
    // and the connections keep retrying in the background.
    connection.connect().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      ready,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 2_500);
      }),
      new Promise<void>((resolve) => connection.once("end", resolve)),
      new Promise<void>((resolve) => connection.once("error", () => resolve())),
    ]);
    clearTimeout(timer);
  };
  await Promise.all([
    connectBounded(command, new Promise((resolve) => command.once("ready", resolve))),
    connectBounded(subscriber, subscribedOnce),
  ]);
  if (!commandReady() || !subscribed) warn("cache: redis not reachable at start; running on the in-process tier");

  // A silently dropped link (no FIN, no RST) leaves both connections "ready" for as long as
  // TCP takes to give up, minutes: the subscriber would go on believing it hears every
  // invalidation, and every command would wait out its timeout. One PING per heartbeat on
  // each connection notices within heartbeatMs + commandTimeoutMs; the connection is then
  // dropped, which makes this instance knowingly deaf (nothing served from process) and lets
  // ioredis reconnect once the link is back. docs/cache.md.
  const heartbeatMs = Math.max(100, Math.min(1_000, Math.floor(maxAgeMs / 2)));
  const beat = (connection: Redis, which: string) => {
    if (closed || connection.status !== "ready") return;
    connection.ping().catch((error: unknown) => {
      if (closed || connection.status !== "ready") return;
      failed(`${which} heartbeat`, error);
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
    kind: "redis",

    namespace<V>(name: string, nsOptions: NamespaceOptions): CacheNamespace<V> {
      return namespaceOnce(namespaces, name, nsOptions, () => createNamespace<V>(name, nsOptions))
        .view as CacheNamespace<V>;
    },

    stats: () => ({ ...stats }),

    sharedTierUp: () => commandReady() && subscribed,

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      for (const waiter of [...waiters.values()]) waiter.done();
      await Promise.all([quit(command), quit(subscriber)]);
    },
  };
}
