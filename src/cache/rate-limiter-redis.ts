/**
 * The shared rate limiter (docs/rate-limits.md): every decision is one atomic Lua script in
 * Redis (EVALSHA through ioredis' defineCommand), so instances sharing a Redis and a key
 * prefix admit at most `limit` per window between them. While Redis cannot be reached
 * (connection down, a command failing or slower than the command timeout) each instance
 * decides alone with the in-process limiter, and every such decision is counted
 * (`observer.rateLimiterFallback`): degraded to per-instance limits, never open, never shut.
 * It runs on the instance's shared Redis connection (src/redis/connection.ts), which it
 * neither opens nor closes.
 */
import type { Observer, RateLimitPolicy } from "../domain/ports/observer.ts";
import type { RateDecision, RateLimit, RateLimiter } from "../domain/ports/rate-limiter.ts";
import type { Logger } from "../logger.ts";
import type { RedisConnection } from "../redis/connection.ts";
import { createMemoryRateLimiter } from "./rate-limiter-memory.ts";

export interface RedisRateLimiterOptions {
  /** The instance's Redis connections; the limiter uses the command connection. */
  redis: RedisConnection;
  /** INTAKE_REDIS_KEY_PREFIX: instances of one deployment share their windows through it. */
  keyPrefix?: string;
  logger: Logger;
  observer: Observer;
  /** Clock of the in-process fallback (epoch ms). Redis windows run on Redis's own clock. */
  now?: () => number;
  /**
   * Bound on one decision's round trip, shorter than the connection's own command bound:
   * past it the request is decided in process rather than held up by a slow Redis.
   */
  commandTimeoutMs?: number;
}

/**
 * A fixed window anchored at its first request. KEYS[1] the window's counter; ARGV[1] the
 * limit; ARGV[2] the window in ms. Returns {admitted 1|0, count, ms until the window ends}.
 * A refused request is not counted, so the counter never exceeds the limit.
 */
const WINDOW_SCRIPT = `
local limit = tonumber(ARGV[1])
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local admitted = 0
if count < limit then
  count = redis.call('INCR', KEYS[1])
  admitted = 1
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {admitted, count, ttl}
`;

type WindowReply = [number, number, number];

interface WithWindowCommand {
  intakeRateWindow(key: string, limit: number, windowMs: number): Promise<WindowReply>;
}

/** At most one warning per this interval: an outage must not flood the log. */
const WARN_INTERVAL_MS = 10_000;
/**
 * After a decision failed or timed out, the next ones are taken in process for this long
 * before Redis is asked again. A silent partition (packets dropped, the connection still
 * "ready") would otherwise hold every limited request for the whole command timeout; this
 * way at most one request per interval pays it.
 */
const BACK_OFF_MS = 1_000;

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RateLimiter {
  const prefix = options.keyPrefix ?? "intake";
  const { logger, observer } = options;
  const now = options.now ?? Date.now;
  const local = createMemoryRateLimiter({ now });
  let lastWarned = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  let closed = false;
  /** Date.now() before which decisions skip Redis (see BACK_OFF_MS). */
  let skipUntil = 0;

  const commandTimeoutMs = options.commandTimeoutMs ?? 250;
  const connection = options.redis.command;
  connection.defineCommand("intakeRateWindow", { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  const script = connection as unknown as WithWindowCommand;

  const warn = (reason: string) => {
    const at = Date.now();
    if (at - lastWarned < WARN_INTERVAL_MS) {
      suppressed += 1;
      return;
    }
    logger.warn("rate limits: redis unreachable; this instance limits alone", { reason, suppressed });
    lastWarned = at;
    suppressed = 0;
  };
  const onError = (error: unknown) => warn(error instanceof Error ? error.message : "connection error");
  connection.on("error", onError);

  /** The decision's reply, or a rejection once commandTimeoutMs has passed without one. */
  function bounded(reply: Promise<WindowReply>): Promise<WindowReply> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([
      reply,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("command timed out")), commandTimeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  function fallback(policy: RateLimitPolicy, key: string, limit: RateLimit, reason: string): RateDecision {
    observer.rateLimiterFallback(policy);
    if (!closed) warn(reason);
    return local.take(policy, key, limit) as RateDecision;
  }

  function take(policy: RateLimitPolicy, key: string, limit: RateLimit): RateDecision | Promise<RateDecision> {
    if (connection.status !== "ready") return fallback(policy, key, limit, `connection is ${connection.status}`);
    if (skipUntil !== 0 && Date.now() < skipUntil) return fallback(policy, key, limit, "backing off after a failure");
    const windowMs = limit.windowSeconds * 1000;
    // The window length is part of the key: a changed rate_limit starts a fresh window.
    const redisKey = `${prefix}:rl:${policy}:${key}:${limit.windowSeconds}`;
    return bounded(script.intakeRateWindow(redisKey, limit.limit, windowMs)).then(
      ([admitted, count, ttl]) => ({
        policy,
        allowed: admitted === 1,
        limit: limit.limit,
        windowSeconds: limit.windowSeconds,
        remaining: Math.max(0, limit.limit - count),
        resetSeconds: Math.max(1, Math.ceil(ttl / 1000)),
      }),
      (error: unknown) => {
        skipUntil = Date.now() + BACK_OFF_MS;
        return fallback(policy, key, limit, error instanceof Error ? error.message : "command failed");
      },
    );
  }

  return {
    take,
    async close() {
      if (closed) return;
      closed = true;
      connection.off("error", onError);
      await local.close();
    },
  };
}
