/**
 * Two-tier cache shared by several Intake instances: L1 in process (memory.ts's local
 * namespace), L2 in Redis (redis-tier.ts), invalidation broadcast over Redis pub/sub and
 * acknowledged by every subscribed instance before `invalidate` resolves
 * (redis-invalidation.ts). It runs on the instance's shared Redis connections
 * (src/redis/connection.ts), which it neither opens nor closes. See docs/cache.md.
 */
import type { Cache, CacheNamespace, NamespaceOptions } from "../domain/ports/cache.ts";
import { noopObserver, type Observer } from "../domain/ports/observer.ts";
import type { Logger } from "../logger.ts";
import type { RedisConnection } from "../redis/connection.ts";
import { createLocalNamespace, type LocalNamespace, lookupCounter, namespaceOnce } from "./memory.ts";
import { openInvalidationChannel } from "./redis-invalidation.ts";
import { createSharedTier, TOMBSTONE } from "./redis-tier.ts";

export interface RedisCacheOptions {
  /** The instance's Redis connections (src/redis/connection.ts); the cache does not close them. */
  redis: RedisConnection;
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
   * an `invalidate` that cannot confirm resolves only once this much time has passed. The
   * connections' heartbeat must be shorter: `redisHeartbeatMs(maxAgeMs)`.
   */
  maxAgeMs?: number;
}

export const DEFAULT_MAX_AGE_MS = 2_000;

/**
 * The heartbeat (src/redis/connection.ts) a cache of this maxAgeMs needs: a silently dropped
 * link is noticed within a beat plus a command timeout, well inside maxAgeMs.
 */
export function redisHeartbeatMs(maxAgeMs = DEFAULT_MAX_AGE_MS): number {
  return Math.max(100, Math.min(1_000, Math.floor(maxAgeMs / 2)));
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

/** At most one warning per message per this interval: an outage must not flood the log. */
const WARN_INTERVAL_MS = 10_000;
/** How long creating the cache waits for its first subscription. */
const SUBSCRIBE_BOUND_MS = 2_500;

interface Registered {
  options: NamespaceOptions;
  local: LocalNamespace<unknown>;
  view: CacheNamespace<unknown>;
}

/** Only the error's class and message: never a key, a value or a command's arguments. */
function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { error: error.name, reason: error.message };
  return { error: typeof error };
}

export async function createRedisCache(options: RedisCacheOptions): Promise<RedisCache> {
  const { redis, logger } = options;
  const prefix = options.keyPrefix ?? "intake";
  const l1TtlMs = options.l1TtlMs ?? 5_000;
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const now = options.now ?? Date.now;

  const namespaces = new Map<string, Registered>();
  const stats = { redisErrors: 0, l1Resets: 0 };
  const lastWarned = new Map<string, { at: number; suppressed: number }>();
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

  const onCommandError = (error: unknown) => failed("connection", error);
  const onSubscriberError = (error: unknown) => failed("subscriber connection", error);
  redis.command.on("error", onCommandError);
  redis.subscriber.on("error", onSubscriberError);

  const clearL1 = () => {
    for (const { local } of namespaces.values()) local.clear();
  };

  const channel = openInvalidationChannel({
    redis,
    prefix,
    ackTimeoutMs: options.ackTimeoutMs ?? 1_000,
    tombstoneTtlMs: options.tombstoneTtlMs ?? 10_000,
    drop: (ns, key) => namespaces.get(ns)?.local.drop(key),
    onSubscribed() {
      // Invalidations sent while the channel was down were missed: everything held in
      // process may be stale, so drop it all (in-flight fills included).
      stats.l1Resets += 1;
      clearL1();
      if (stats.l1Resets > 1) logger.info("cache: invalidation channel back; in-process entries dropped");
    },
    onLost(wasListening) {
      if (wasListening && !closed)
        warn("cache: invalidation channel lost; serving without the in-process tier until it is back", { maxAgeMs });
      // Deaf: an invalidation sent now would not reach us, and its sender (which no longer
      // counts us as a receiver) would answer at once. So nothing is served from this process
      // until the channel is back (see `peek`), and what it held is useless: drop it.
      clearL1();
    },
    failed,
    warn,
  });
  const tier = createSharedTier(redis, failed, () => closed);

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
      channel.listening() ? Math.max(0, Math.min(localTtl(value), deadline - now())) : 0;

    const fillFromShared = async (key: string, load: () => Promise<V | null>) => {
      const redisKey = `${prefix}:${name}:${key}`;
      const asked = now();
      const shared = await tier.get(redisKey, name);
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
        const outcome = await tier.fill(redisKey, json, remaining, name);
        // A tombstone that appeared during our load: an invalidation overtook us, so what we
        // loaded may predate it. Hand it to our callers, but do not keep it.
        if (outcome === -1 && raw !== TOMBSTONE) keep = false;
      }
      return { value, ttlMs: keep ? keepFor(value, deadline) : 0 };
    };

    const view: CacheNamespace<V> = {
      // Deaf (channel down), nothing is served from process: see the "close" handler.
      peek: (key) => (channel.listening() ? counted.local(local.peek(key)) : undefined),
      getOrLoad(key, load) {
        const hit = channel.listening() ? counted.local(local.peek(key)) : undefined;
        if (hit !== undefined) return Promise.resolve(hit);
        return local.fill(key, () => fillFromShared(key, load));
      },
      async invalidate(key) {
        // Called after the store committed, so from here on every load reads the new state.
        const committed = Date.now();
        local.drop(key);
        if (await channel.broadcast(name, key, true)) return;
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

  // An unreachable Redis must not stop Intake from starting: the cache works without it and
  // the connections keep retrying in the background.
  if (redis.subscriber.status === "ready") {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      channel.firstSubscription,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SUBSCRIBE_BOUND_MS);
      }),
    ]);
    clearTimeout(timer);
  }
  if (!redis.commandReady() || !channel.listening())
    warn("cache: redis not reachable at start; running on the in-process tier");

  return {
    kind: "redis",

    namespace<V>(name: string, nsOptions: NamespaceOptions): CacheNamespace<V> {
      return namespaceOnce(namespaces, name, nsOptions, () => createNamespace<V>(name, nsOptions))
        .view as CacheNamespace<V>;
    },

    stats: () => ({ ...stats, ackTimeouts: channel.ackTimeouts() }),

    sharedTierUp: () => redis.commandReady() && channel.listening(),

    async close() {
      if (closed) return;
      closed = true;
      channel.close();
      redis.command.off("error", onCommandError);
      redis.subscriber.off("error", onSubscriberError);
    },
  };
}
