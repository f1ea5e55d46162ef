/**
 * In-process feed wake-ups: the whole notifier of a single instance, and the local half of
 * the cross-instance ones (redis.ts, postgres.ts), which call `fire` for what others publish.
 */
import type { FeedNotifier } from "../domain/ports/notifier.ts";

export interface LocalWakeups {
  fire(tenantIds: readonly string[]): void;
  subscribe(tenantId: string, wake: () => void): () => void;
  /** Woken by every fire, whatever the tenants. */
  subscribeAll(wake: () => void): () => void;
  /** Wakes every reader: after a reconnect, notifications may have been missed. */
  fireAll(): void;
}

export function createLocalWakeups(): LocalWakeups {
  const readers = new Map<string, Set<() => void>>();
  const everyTenant = new Set<() => void>();
  function call(wakes: Iterable<() => void>): void {
    for (const wake of [...wakes]) wake();
  }
  return {
    // On the next turn of the event loop: the commit's senders get their 202 first, and the
    // readers' store reads do not delay those answers.
    fire(tenantIds) {
      setImmediate(() => {
        if (tenantIds.length > 0) call(everyTenant);
        for (const tenantId of tenantIds) {
          const wakes = readers.get(tenantId);
          if (wakes) call(wakes);
        }
      });
    },
    fireAll() {
      call(everyTenant);
      for (const wakes of [...readers.values()]) call(wakes);
    },
    subscribeAll(wake) {
      everyTenant.add(wake);
      return () => everyTenant.delete(wake);
    },
    subscribe(tenantId, wake) {
      let wakes = readers.get(tenantId);
      if (!wakes) {
        wakes = new Set();
        readers.set(tenantId, wakes);
      }
      wakes.add(wake);
      return () => {
        const current = readers.get(tenantId);
        if (!current) return;
        current.delete(wake);
        if (current.size === 0) readers.delete(tenantId);
      };
    },
  };
}

export function createLocalNotifier(): FeedNotifier {
  const local = createLocalWakeups();
  return {
    kind: "local",
    publish: (tenantIds) => local.fire(tenantIds),
    subscribe: (tenantId, wake) => local.subscribe(tenantId, wake),
    subscribeAll: (wake) => local.subscribeAll(wake),
    close: async () => {},
  };
}

/** What travels between instances: who sent it (so it can skip its own) and the tenants. */
export interface WakeMessage {
  from: string;
  tenants: string[];
}

export function parseWakeMessage(text: string): WakeMessage | null {
  try {
    const value = JSON.parse(text) as Partial<WakeMessage>;
    if (typeof value.from !== "string" || !Array.isArray(value.tenants)) return null;
    return { from: value.from, tenants: value.tenants.filter((t): t is string => typeof t === "string") };
  } catch {
    return null;
  }
}
