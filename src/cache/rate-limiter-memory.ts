/**
 * The in-process rate limiter (docs/rate-limits.md): one fixed window per key, anchored at
 * the key's first request. A decision is a map lookup and a few number operations, taken
 * synchronously. Used alone without REDIS_URL, and by the Redis limiter as its fallback.
 */
import type { RateLimitPolicy } from "../domain/ports/observer.ts";
import type { RateDecision, RateLimit, RateLimiter } from "../domain/ports/rate-limiter.ts";

interface Window {
  count: number;
  /** Epoch ms at which this window ends. */
  endsAt: number;
  windowMs: number;
}

export interface MemoryRateLimiterOptions {
  now?: () => number;
  /**
   * Bound on the keys held per policy. Expired windows are swept first; only when every held
   * window is live does the oldest go (its key starts a fresh window: a leak in the caller's
   * favour, only past this many active tokens or services on one instance).
   */
  maxKeys?: number;
}

const MIN_SWEEP_AT = 1_024;

export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 200_000;
  const policies = new Map<RateLimitPolicy, { windows: Map<string, Window>; sweepAt: number }>();

  function tableOf(policy: RateLimitPolicy) {
    let table = policies.get(policy);
    if (table === undefined) {
      table = { windows: new Map(), sweepAt: MIN_SWEEP_AT };
      policies.set(policy, table);
    }
    return table;
  }

  /** Drops expired windows; amortized: the next sweep waits until the map has doubled. */
  function makeRoom(table: { windows: Map<string, Window>; sweepAt: number }, at: number): void {
    const { windows } = table;
    if (windows.size < table.sweepAt && windows.size < maxKeys) return;
    for (const [key, window] of windows) if (at >= window.endsAt) windows.delete(key);
    while (windows.size >= maxKeys) {
      const oldest = windows.keys().next();
      if (oldest.done) break;
      windows.delete(oldest.value);
    }
    table.sweepAt = Math.max(MIN_SWEEP_AT, windows.size * 2);
  }

  return {
    take(policy: RateLimitPolicy, key: string, limit: RateLimit): RateDecision {
      const at = now();
      const table = tableOf(policy);
      const windowMs = limit.windowSeconds * 1000;
      let window = table.windows.get(key);
      // A changed window length (a PATCHed rate_limit) starts afresh, as it does in Redis.
      if (window === undefined || at >= window.endsAt || window.windowMs !== windowMs) {
        if (window === undefined) makeRoom(table, at);
        window = { count: 0, endsAt: at + windowMs, windowMs };
        table.windows.set(key, window);
      }
      const allowed = window.count < limit.limit;
      if (allowed) window.count += 1;
      return {
        policy,
        allowed,
        limit: limit.limit,
        windowSeconds: limit.windowSeconds,
        remaining: Math.max(0, limit.limit - window.count),
        resetSeconds: Math.max(1, Math.ceil((window.endsAt - at) / 1000)),
      };
    },
    async close() {
      policies.clear();
    },
  };
}
