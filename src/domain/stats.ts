/**
 * Service stats (SPEC §22, docs/search.md "Service stats"): ingest outcomes per service per
 * 5-minute bucket, counted in memory by each instance on the request path (a map lookup and an
 * increment, no store call), added to the store's counts on an interval and at drain, and read
 * back for `window=24h` (5-minute buckets) or `7d` (hourly buckets).
 */
import type { Logger } from "../logger.ts";
import { DomainError, notFound } from "./errors.ts";
import { parseId } from "./ids.ts";
import type { IngestOutcome, SignatureFailureReason } from "./ports/observer.ts";
import type { Store } from "./ports/store.ts";
import { STATS_BUCKET_MS, STATS_OUTCOMES, type StatsCount, type StatsOutcome } from "./stats-types.ts";
import type { Clock, Principal } from "./types.ts";

const OUTCOME_INDEX = new Map<StatsOutcome, number>(STATS_OUTCOMES.map((o, i) => [o, i]));
/** How often counts go to the store. Short, so a chart is at most this far behind. */
export const STATS_FLUSH_MS = 5_000;
/**
 * Services counted per bucket per instance. Only ids that name a service (or did when their
 * request came in) are counted, so this bounds memory against nothing a realistic deployment
 * reaches; counts past it are dropped and said in the log.
 */
const MAX_SERVICES_PER_BUCKET = 50_000;
/** Counts a failing store kept waiting are given up past this many buckets (about an hour). */
const MAX_PENDING_BUCKETS = 12;

export const STATS_WINDOWS = {
  "24h": { spanMs: 24 * 3_600_000, bucketMs: STATS_BUCKET_MS },
  "7d": { spanMs: 7 * 24 * 3_600_000, bucketMs: 3_600_000 },
} as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;
/** Buckets older than the longest window (7 days) and a day's margin are deleted by the retention sweep. */
export const STATS_RETENTION_DAYS = 8;

export interface StatsRecorder {
  /**
   * One ingest attempt against `serviceId` (as sent, `svc_…`) ended in `outcome`; a 401 gives
   * its reason. Never throws, never waits. `unknown_service` (and an id that is not one) is
   * not counted: there is no service to count it against.
   */
  record(serviceId: string, outcome: IngestOutcome, reason?: SignatureFailureReason): void;
}

export const noopStatsRecorder: StatsRecorder = { record() {} };

export interface StatsAggregatorDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  flushMs?: number;
}

/** One instance's in-memory counts, per bucket, per raw service id, per outcome index. */
type Bucket = Map<string, number[]>;

export function createStatsAggregator(deps: StatsAggregatorDeps) {
  const { store, clock, logger } = deps;
  const flushMs = deps.flushMs ?? STATS_FLUSH_MS;
  /** Bucket start → counts; the current bucket and any a failed flush kept. */
  let buckets = new Map<number, Bucket>();
  let dropped = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  let flushing: Promise<void> | undefined;

  function record(serviceId: string, outcome: IngestOutcome, reason?: SignatureFailureReason): void {
    const counted: StatsOutcome | undefined =
      outcome === "invalid_signature" ? (reason === "unknown_service" ? undefined : reason) : outcome;
    if (counted === undefined) return;
    const raw = parseId("svc", serviceId);
    if (raw === null) return;
    const now = clock.now();
    const start = now - (now % STATS_BUCKET_MS);
    let bucket = buckets.get(start);
    if (bucket === undefined) {
      bucket = new Map();
      buckets.set(start, bucket);
    }
    let counts = bucket.get(raw);
    if (counts === undefined) {
      if (bucket.size >= MAX_SERVICES_PER_BUCKET) {
        dropped++;
        return;
      }
      counts = new Array<number>(STATS_OUTCOMES.length).fill(0);
      bucket.set(raw, counts);
    }
    const i = OUTCOME_INDEX.get(counted) as number;
    counts[i] = (counts[i] ?? 0) + 1;
  }

  function rows(from: Map<number, Bucket>): StatsCount[] {
    const out: StatsCount[] = [];
    for (const [bucketStart, bucket] of from) {
      for (const [serviceId, counts] of bucket) {
        counts.forEach((count, i) => {
          if (count > 0) out.push({ serviceId, bucketStart, outcome: STATS_OUTCOMES[i] as StatsOutcome, count });
        });
      }
    }
    // Key order: concurrent flushes of two instances lock shared rows in one order.
    return out.sort((a, b) =>
      a.serviceId < b.serviceId
        ? -1
        : a.serviceId > b.serviceId
          ? 1
          : a.bucketStart - b.bucketStart || (OUTCOME_INDEX.get(a.outcome) ?? 0) - (OUTCOME_INDEX.get(b.outcome) ?? 0),
    );
  }

  /** Puts counts that could not be written back in front of what came since. */
  function restore(taken: Map<number, Bucket>): void {
    for (const [start, bucket] of taken) {
      const into = buckets.get(start) ?? new Map<string, number[]>();
      for (const [serviceId, counts] of bucket) {
        const existing = into.get(serviceId);
        if (!existing) {
          into.set(serviceId, counts);
          continue;
        }
        for (let i = 0; i < counts.length; i++) existing[i] = (existing[i] ?? 0) + (counts[i] ?? 0);
      }
      buckets.set(start, into);
    }
    const starts = [...buckets.keys()].sort((a, b) => a - b);
    for (const start of starts.slice(0, Math.max(0, starts.length - MAX_PENDING_BUCKETS))) buckets.delete(start);
  }

  async function flushOnce(): Promise<void> {
    if (dropped > 0) {
      logger.warn("service stats: counts dropped past the per-bucket service bound", { dropped });
      dropped = 0;
    }
    if (buckets.size === 0) return;
    const taken = buckets;
    buckets = new Map();
    try {
      await store.stats.add(rows(taken));
    } catch (error) {
      // Kept for the next flush: stats are bookkeeping, a store hiccup must not lose them.
      restore(taken);
      logger.warn("service stats: flush failed; the counts are kept for the next one", { error });
    }
  }

  /** Writes every count held so far; one flush at a time (a second call waits for the first, then runs). */
  function flush(): Promise<void> {
    const next = (flushing ?? Promise.resolve()).then(flushOnce);
    flushing = next;
    return next;
  }

  return {
    record,
    flush,
    start(): void {
      if (timer) return;
      timer = setInterval(() => void flush(), flushMs);
      timer.unref?.();
    },
    /** Drain: stops the interval and writes what is held (call before the store closes). */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}

export type StatsAggregator = ReturnType<typeof createStatsAggregator>;

export interface StatsBucket {
  /** Epoch ms. */
  start: number;
  /** Only the outcomes counted in this bucket. */
  counts: Partial<Record<StatsOutcome, number>>;
}

export interface ServiceStats {
  window: StatsWindow;
  bucketMs: number;
  /** The first bucket's start and the end of the last (exclusive), epoch ms. */
  from: number;
  to: number;
  /** Every bucket of the window, oldest first, empty ones included (a chart's x axis). */
  buckets: StatsBucket[];
  /** The window's sums per outcome (only outcomes that happened). */
  totals: Partial<Record<StatsOutcome, number>>;
}

export function parseStatsWindow(value: string | undefined): StatsWindow {
  if (value === undefined) return "24h";
  if (value === "24h" || value === "7d") return value;
  throw new DomainError("invalid_request", "The request is invalid.", [
    { field: "window", message: "must be 24h or 7d" },
  ]);
}

export function createServiceStats(deps: { store: Store; clock: Clock }) {
  const { store, clock } = deps;

  /**
   * `GET /v1/services/{id}/stats?window=24h|7d`, `GetServiceStats`: any scope; another
   * tenant's or an unknown service is not found. The window ends with the bucket in progress.
   */
  async function serviceStats(
    principal: Principal,
    serviceId: string,
    window: string | undefined,
  ): Promise<ServiceStats> {
    const chosen = parseStatsWindow(window);
    const rawId = parseId("svc", serviceId);
    if (rawId === null || !(await store.services.get(principal.tenantId, rawId))) throw notFound("service");
    const { spanMs, bucketMs } = STATS_WINDOWS[chosen];
    const now = clock.now();
    const to = now - (now % bucketMs) + bucketMs;
    const from = to - spanMs;
    const rows = await store.stats.read(principal.tenantId, rawId, { from, to, bucketMs });
    const byStart = new Map<number, StatsBucket>();
    const buckets: StatsBucket[] = [];
    for (let start = from; start < to; start += bucketMs) {
      const bucket = { start, counts: {} };
      buckets.push(bucket);
      byStart.set(start, bucket);
    }
    const totals: Partial<Record<StatsOutcome, number>> = {};
    for (const row of rows) {
      const bucket = byStart.get(row.bucketStart);
      if (!bucket) continue;
      bucket.counts[row.outcome] = (bucket.counts[row.outcome] ?? 0) + row.count;
      totals[row.outcome] = (totals[row.outcome] ?? 0) + row.count;
    }
    return { window: chosen, bucketMs, from, to, buckets, totals };
  }

  return { serviceStats };
}

export type ServiceStatsReader = ReturnType<typeof createServiceStats>;
