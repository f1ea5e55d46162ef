/**
 * A typed cache namespace. Values must be JSON-serializable (a shared cache stores them as
 * JSON). `null` is a negative entry: "looked up, does not exist", kept for `negativeTtlMs`
 * so that garbage keys cannot hammer the store.
 */
export interface CacheNamespace<V> {
  /** In-process lookup only, synchronous: `undefined` when this instance holds nothing. */
  peek(key: string): V | null | undefined;
  /** In-process, then the shared tier (if any), then `load`; the result is cached (null negatively). */
  getOrLoad(key: string, load: () => Promise<V | null>): Promise<V | null>;
  /**
   * Drops the key everywhere: this instance, the shared tier, and (through the
   * invalidation channel) every other instance. Resolves only once all of that is done,
   * so a mutating call can answer after it knowing no instance serves the old value.
   */
  invalidate(key: string): Promise<void>;
}

export interface NamespaceOptions {
  /** Lifetime of a positive entry. */
  ttlMs: number;
  /** Lifetime of a negative (null) entry. */
  negativeTtlMs: number;
  /** In-process entry bound; the oldest are evicted first. */
  maxEntries: number;
}

export interface Cache {
  readonly kind: "memory" | "redis";
  namespace<V>(name: string, options: NamespaceOptions): CacheNamespace<V>;
  close(): Promise<void>;
}
