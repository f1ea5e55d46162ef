import type { Cache, CacheNamespace, NamespaceOptions } from "../domain/ports/cache.ts";
import { noopObserver, type Observer } from "../domain/ports/observer.ts";

/** What a fill produced, and how long this process may keep it (0: do not keep). */
export interface LocalFill<V> {
  value: V | null;
  ttlMs: number;
}

/**
 * The in-process tier: the whole memory cache, and the L1 of the Redis cache. Exported for
 * redis.ts only; the rest of the code sees the `Cache` port.
 */
export interface LocalNamespace<V> {
  peek(key: string): V | null | undefined;
  /**
   * Runs `produce` at most once at a time per key (concurrent callers share it) and keeps
   * its result, unless `drop(key)` or `clear()` ran while it was in flight: a value read
   * before an invalidation must never be stored after it.
   */
  fill(key: string, produce: () => Promise<LocalFill<V>>): Promise<V | null>;
  /** Forgets the key and disowns any fill in flight for it. */
  drop(key: string): void;
  /** Forgets everything and disowns every fill in flight. */
  clear(): void;
  readonly size: number;
}

interface Entry<V> {
  value: V | null;
  expiresAt: number;
}

interface Flight<V> {
  promise: Promise<V | null>;
  /** Set by drop/clear: the fill may still answer its callers but must not be stored. */
  disowned: boolean;
}

const NAMESPACE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Rejects options that would silently make a namespace useless or unbounded. */
export function checkNamespace(name: string, options: NamespaceOptions): void {
  // The name becomes part of Redis keys (`prefix:namespace:key`): no separator in it.
  if (!NAMESPACE_NAME.test(name)) throw new Error(`cache namespace name must match ${NAMESPACE_NAME}`);
  const { ttlMs, negativeTtlMs, maxEntries } = options;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new Error(`cache namespace ${name}: ttlMs must be >= 1`);
  if (!Number.isSafeInteger(negativeTtlMs) || negativeTtlMs < 0)
    throw new Error(`cache namespace ${name}: negativeTtlMs must be >= 0`);
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
    throw new Error(`cache namespace ${name}: maxEntries must be >= 1`);
}

function sameOptions(a: NamespaceOptions, b: NamespaceOptions): boolean {
  return a.ttlMs === b.ttlMs && a.negativeTtlMs === b.negativeTtlMs && a.maxEntries === b.maxEntries;
}

/**
 * One namespace per name in a cache: asking again with the same options returns the same one
 * (whatever V the caller names), with other options it throws.
 */
export function namespaceOnce<R extends { options: NamespaceOptions; view: CacheNamespace<unknown> }>(
  registry: Map<string, R>,
  name: string,
  options: NamespaceOptions,
  create: () => R,
): R {
  checkNamespace(name, options);
  const existing = registry.get(name);
  if (existing) {
    if (!sameOptions(existing.options, options))
      throw new Error(`cache namespace ${name} already exists with other options`);
    return existing;
  }
  const made = create();
  registry.set(name, made);
  return made;
}

export function createLocalNamespace<V>(maxEntries: number, now: () => number): LocalNamespace<V> {
  // A Map iterates in insertion order, so its first key is the oldest entry: eviction is O(1)
  // and peek stays a single lookup (no LRU bookkeeping on the hot path).
  const entries = new Map<string, Entry<V>>();
  const flights = new Map<string, Flight<V>>();

  const store = (key: string, value: V | null, ttlMs: number) => {
    if (ttlMs <= 0) return;
    // Re-inserting moves the key to the young end, so a refreshed entry is not evicted first.
    entries.delete(key);
    entries.set(key, { value, expiresAt: now() + ttlMs });
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next();
      if (oldest.done) break;
      entries.delete(oldest.value);
    }
  };

  return {
    peek(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },

    fill(key, produce) {
      const current = flights.get(key);
      if (current) return current.promise;
      // Registered before produce starts, so a drop() issued from inside it still disowns it.
      const flight: Flight<V> = { promise: Promise.resolve(null), disowned: false };
      flights.set(key, flight);
      flight.promise = (async () => {
        try {
          const result = await produce();
          if (!flight.disowned) store(key, result.value, result.ttlMs);
          return result.value;
        } finally {
          if (flights.get(key) === flight) flights.delete(key);
        }
      })();
      return flight.promise;
    },

    drop(key) {
      entries.delete(key);
      const flight = flights.get(key);
      if (flight) {
        // Detached too, so the next caller starts a fresh load instead of joining this one.
        flight.disowned = true;
        flights.delete(key);
      }
    },

    clear() {
      entries.clear();
      for (const flight of flights.values()) flight.disowned = true;
      flights.clear();
    },

    get size() {
      return entries.size;
    },
  };
}

export interface MemoryCacheOptions {
  /** Clock in epoch milliseconds; tests inject one to expire entries without sleeping. */
  now?: () => number;
  /** Counts lookups (`intake_cache_lookups_total`); see `lookupCounter`. */
  observer?: Observer;
}

/**
 * How both adapters count lookups (docs/operations.md): a `peek` or `getOrLoad` answered in
 * process is a `hit` (`negative_hit` for a cached "does not exist"); a `peek` that finds
 * nothing is not counted, since its caller goes on to `getOrLoad`; a fill counts once, as
 * `shared_hit` (the Redis tier answered) or `miss` (the store was asked). Callers that join a
 * fill already in flight for the same key are not counted again.
 */
export function lookupCounter(observer: Observer, namespace: string) {
  const count = observer.cacheLookups(namespace);
  return {
    local<V>(value: V | null | undefined): V | null | undefined {
      if (value !== undefined) (value === null ? count.negative_hit : count.hit)();
      return value;
    },
    shared: count.shared_hit,
    miss: count.miss,
  };
}

/** The single-instance cache (REDIS_URL unset): invalidation only has this process to reach. */
export function createMemoryCache(options: MemoryCacheOptions = {}): Cache {
  const now = options.now ?? Date.now;
  const observer = options.observer ?? noopObserver;
  const namespaces = new Map<string, { options: NamespaceOptions; view: CacheNamespace<unknown> }>();

  return {
    kind: "memory",

    namespace<V>(name: string, nsOptions: NamespaceOptions): CacheNamespace<V> {
      return namespaceOnce(namespaces, name, nsOptions, () => createView<V>(name, nsOptions)).view as CacheNamespace<V>;
    },

    close() {
      namespaces.clear();
      return Promise.resolve();
    },
  };

  function createView<V>(
    name: string,
    nsOptions: NamespaceOptions,
  ): { options: NamespaceOptions; view: CacheNamespace<unknown> } {
    const { ttlMs, negativeTtlMs, maxEntries } = nsOptions;
    const local = createLocalNamespace<V>(maxEntries, now);
    const counted = lookupCounter(observer, name);
    const view: CacheNamespace<V> = {
      peek: (key) => counted.local(local.peek(key)),
      getOrLoad(key, load) {
        const hit = counted.local(local.peek(key));
        if (hit !== undefined) return Promise.resolve(hit);
        return local.fill(key, async () => {
          counted.miss();
          const value = await load();
          return { value, ttlMs: value === null ? negativeTtlMs : ttlMs };
        });
      },
      invalidate(key) {
        local.drop(key);
        return Promise.resolve();
      },
    };
    return { options: { ...nsOptions }, view: view as CacheNamespace<unknown> };
  }
}
