/**
 * The Redis cache's invalidation channel: an invalidation puts a tombstone over the key and
 * is broadcast over pub/sub to every instance, each of which drops the key from its process
 * and acknowledges on the sender's own channel. docs/cache.md.
 */
import { randomUUID } from "node:crypto";
import type { RedisConnection } from "../redis/connection.ts";
import { TOMBSTONE } from "./redis-tier.ts";

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

export interface InvalidationDeps {
  redis: RedisConnection;
  prefix: string;
  ackTimeoutMs: number;
  /** Life of the tombstone; must exceed any plausible `load`. */
  tombstoneTtlMs: number;
  /** Another instance invalidated this key: drop it from the process. */
  drop(ns: string, key: string): void;
  /** The channel is live (again): whatever the process holds may have missed invalidations. */
  onSubscribed(): void;
  /** The channel is gone (`wasListening`: it had been live): nothing may be served from the process until it is back. */
  onLost(wasListening: boolean): void;
  failed(operation: string, error: unknown, namespace?: string): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface InvalidationChannel {
  /** This instance hears invalidations (and acknowledgements) now. */
  listening(): boolean;
  /** Resolves on the first subscription (never, while Redis cannot be reached). */
  readonly firstSubscription: Promise<void>;
  /**
   * Tombstone + publish, then (when we can hear them) wait for every receiver's ack. True
   * only when every instance Redis delivered the message to confirmed it dropped the key.
   */
  broadcast(ns: string, key: string, waitForAcks: boolean): Promise<boolean>;
  /** Invalidations that resolved without every subscribed instance's confirmation. */
  ackTimeouts(): number;
  close(): void;
}

export function openInvalidationChannel(deps: InvalidationDeps): InvalidationChannel {
  const { redis, prefix, failed, warn } = deps;
  const { command } = redis;
  const instanceId = randomUUID();
  const invalidateChannel = `${prefix}:invalidate`;
  const ackChannel = `${prefix}:ack:${instanceId}`;
  const waiters = new Map<string, AckWaiter>();
  /** Keyed by Redis key, so repeated failures for one key keep one entry. */
  const unsent = new Map<string, { ns: string; key: string }>();
  let subscribed = false;
  let closed = false;
  let ackTimeouts = 0;

  let resolveFirst: () => void = () => {};
  const firstSubscription = new Promise<void>((resolve) => {
    resolveFirst = resolve;
  });

  const onAck = (id: string) => {
    const waiter = waiters.get(id);
    if (!waiter) return;
    waiter.acks += 1;
    if (waiter.expected !== undefined && waiter.acks >= waiter.expected) waiter.done();
  };

  const onMessage = (channel: string, raw: string) => {
    if (channel === ackChannel) {
      onAck(raw);
      return;
    }
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
    deps.drop(message.ns, message.key);
    if (!redis.commandReady()) return;
    command.publish(`${prefix}:ack:${message.from}`, message.id).catch((error: unknown) => failed("ack", error));
  };

  const unlisten = redis.listen({
    channels: [invalidateChannel, ackChannel],
    onSubscribed() {
      subscribed = true;
      deps.onSubscribed();
      resolveFirst();
    },
    onLost() {
      const wasListening = subscribed;
      subscribed = false;
      deps.onLost(wasListening);
    },
    onMessage,
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

  const waitFor = (id: string): { waiter: AckWaiter; acked: Promise<boolean> } => {
    let waiter: AckWaiter | undefined;
    const acked = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(id);
        resolve(false);
      }, deps.ackTimeoutMs);
      waiter = {
        acks: 0,
        expected: undefined,
        done() {
          clearTimeout(timer);
          waiters.delete(id);
          resolve(true);
        },
      };
      // Registered before publishing: an ack can overtake the PUBLISH reply.
      waiters.set(id, waiter);
    });
    return { waiter: waiter as AckWaiter, acked };
  };

  const broadcast = async (ns: string, key: string, waitForAcks: boolean): Promise<boolean> => {
    const redisKey = `${prefix}:${ns}:${key}`;
    if (closed) return true;
    if (!redis.commandReady()) {
      remember(redisKey, ns, key);
      failed("invalidate", new Error(`connection is ${command.status}`), ns);
      return false;
    }
    const id = randomUUID();
    const message: InvalidationMessage = { id, from: instanceId, ns, key };
    // Acknowledgements come back on our subscription; without it there is nothing to wait for.
    const pending = waitForAcks && subscribed ? waitFor(id) : undefined;
    try {
      const results = await command
        .pipeline()
        .set(redisKey, TOMBSTONE, "PX", deps.tombstoneTtlMs)
        .publish(invalidateChannel, JSON.stringify(message))
        .exec();
      const setError = results?.[0]?.[0];
      const publishError = results?.[1]?.[0];
      if (!results || setError || publishError) throw setError ?? publishError ?? new Error("pipeline discarded");
      const receivers = results[1]?.[1];
      // Without our own subscription the acknowledgements cannot reach us: unconfirmed.
      if (!pending) return !waitForAcks;
      const { waiter, acked } = pending;
      waiter.expected = typeof receivers === "number" ? receivers : 0;
      if (waiter.acks >= waiter.expected) waiter.done();
      if (await acked) return true;
      ackTimeouts += 1;
      warn("cache: invalidation not confirmed by every instance in time", {
        namespace: ns,
        expected: waiter.expected,
        confirmed: waiter.acks,
      });
      return false;
    } catch (error) {
      pending?.waiter.done();
      remember(redisKey, ns, key);
      failed("invalidate", error, ns);
      return false;
    }
  };

  const replayUnsent = () => {
    if (unsent.size === 0 || closed) return;
    // Put the tombstones down that could not be written while Redis was unreachable, so a
    // value cached in L2 before the outage does not outlive its invalidation by a whole TTL.
    const pending = [...unsent.values()];
    unsent.clear();
    for (const { ns, key } of pending) void broadcast(ns, key, false);
  };
  command.on("ready", replayUnsent);

  return {
    listening: () => subscribed,
    firstSubscription,
    broadcast,
    ackTimeouts: () => ackTimeouts,
    close() {
      if (closed) return;
      closed = true;
      command.off("ready", replayUnsent);
      unlisten();
      for (const waiter of [...waiters.values()]) waiter.done();
    },
  };
}
