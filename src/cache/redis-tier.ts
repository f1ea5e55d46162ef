/**
 * The Redis cache's shared tier (L2): reading a value with its remaining life, and filling a
 * key without ever overwriting what is there, a tombstone above all. docs/cache.md.
 */
import { createHash } from "node:crypto";
import type { RedisConnection } from "../redis/connection.ts";

/**
 * Written over a key by an invalidation (redis-invalidation.ts). Cached values are JSON, and
 * no JSON text starts with "!", so it can never be mistaken for a value.
 */
export const TOMBSTONE = "!invalidated";

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

/**
 * A fill that refuses to overwrite anything, above all a tombstone: an instance whose load
 * read the store before a mutation must not put the old value back after the mutation's
 * invalidate. Returns 1 stored, 0 a value was already there, -1 a tombstone was there.
 */
const FILL_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current == ARGV[3] then return -1 end
if current then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

export interface SharedTier {
  /** The raw value and its remaining life in ms; null: no key; undefined: Redis failed. */
  get(redisKey: string, ns: string): Promise<{ raw: string; pttl: number } | null | undefined>;
  /** 1 stored, 0 something already there, -1 tombstone there, undefined Redis failed. */
  fill(redisKey: string, json: string, ttlMs: number, ns: string): Promise<number | undefined>;
}

export function createSharedTier(
  redis: RedisConnection,
  failed: (operation: string, error: unknown, namespace?: string) => void,
  isClosed: () => boolean,
): SharedTier {
  const { command } = redis;
  return {
    async get(redisKey, ns) {
      if (isClosed()) return undefined;
      if (!redis.commandReady()) {
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
    },

    async fill(redisKey, json, ttlMs, ns) {
      if (!redis.commandReady()) return undefined;
      try {
        const outcome = await command.eval(FILL_SCRIPT, 1, redisKey, json, String(ttlMs), TOMBSTONE);
        return typeof outcome === "number" ? outcome : undefined;
      } catch (error) {
        failed("fill", error, ns);
        return undefined;
      }
    },
  };
}
