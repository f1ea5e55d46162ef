/**
 * Auto-resolve (SPEC §17, docs/incidents.md): an open incident of a monitored service whose
 * `incident_auto_resolve_seconds` have passed since its last alert event is resolved with
 * `resolved_by: {type: "auto"}`, within 10 s of that deadline.
 *
 * Every instance runs this loop; the store's `autoResolveDue` resolves each incident once
 * whatever the number of instances (it runs under the feed_head lock, and reads the open rows
 * after the previous sweep committed). A pass runs every `intervalMs` (default 5 s, half of
 * what the deadline allows, so a pass that waits behind a slow commit still lands in time)
 * and calls the store until it returns less than a batch.
 */
import type { Logger } from "../logger.ts";
import type { IncidentRecord } from "./incident-types.ts";
import type { FeedNotifier } from "./ports/notifier.ts";
import { noopObserver, type Observer } from "./ports/observer.ts";
import type { Store } from "./ports/store.ts";
import type { Clock } from "./types.ts";

export interface AutoResolverOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  observer?: Observer;
  /** Told which tenants' incident changes grew, so their stream readers wake. */
  notifier?: FeedNotifier;
  /** Time between passes (default 5 s). */
  intervalMs?: number;
  /** Incidents resolved per transaction (default 100). */
  batchSize?: number;
}

export function createAutoResolver(options: AutoResolverOptions) {
  const { store, clock, logger } = options;
  const observer = options.observer ?? noopObserver;
  const intervalMs = options.intervalMs ?? 5_000;
  const batchSize = options.batchSize ?? 100;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<unknown> | null = null;

  /** One pass: resolves every incident due at the clock's now; resolves with them. */
  async function pass(): Promise<IncidentRecord[]> {
    const all: IncidentRecord[] = [];
    for (;;) {
      if (stopped) break;
      const resolved = await store.incidents.autoResolveDue(clock.now(), batchSize);
      all.push(...resolved);
      if (resolved.length > 0) {
        for (const _ of resolved) observer.incidentChange("resolved");
        options.notifier?.publish([...new Set(resolved.map((i) => i.tenantId))]);
      }
      if (resolved.length < batchSize) break;
    }
    if (all.length > 0) logger.info("incidents auto-resolved", { incidents: all.length });
    return all;
  }

  function schedule(ms: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = pass()
        .catch((error: unknown) => logger.warn("auto-resolve pass failed; retried at the next interval", { error }))
        .finally(() => {
          running = null;
          schedule(intervalMs);
        });
    }, ms);
    timer.unref?.();
  }

  return {
    pass,
    /** Starts the passes in the background, the first one after `intervalMs`. */
    start(): void {
      schedule(intervalMs);
    },
    /** Stops after the pass in flight. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

export type AutoResolver = ReturnType<typeof createAutoResolver>;
