/**
 * The feed's live machinery under every live reader (docs/feed.md, "Live readers"): a tenant's
 * shared reads and wake-ups (TenantTail), the waiter a stream or long poll sleeps on, the
 * reader caps, and the drain.
 */
import { DomainError } from "./errors.ts";
import type { FeedNotifier } from "./ports/notifier.ts";
import type { Observer } from "./ports/observer.ts";
import type { Store } from "./ports/store.ts";
import { RateLimitedError } from "./rate-limits.ts";
import type { EventRecord, Principal } from "./types.ts";

/** What a stream reads from the store at once, and the reads a tenant's readers share. */
export const FEED_BATCH_BYTES = 1024 * 1024;
/** Events a stream reads from the store at once: with the byte budget, all a slow reader can make Intake hold. */
export const STREAM_PAGE = 100;
/** Re-read without a wake-up at least this often: a lost notification delays, never loses. */
const RESCAN_INTERVAL_MS = 2_000;
/** Shared reads a tenant keeps for its readers that are a little behind (each within FEED_BATCH_BYTES). */
const KEPT_BATCHES = 4;

// --- Waiting ----------------------------------------------------------------------------

/** What wakes a waiter: the tenant's shared wake-ups (TenantTail.subscribe). */
interface WakeSource {
  subscribe(wake: () => void): () => void;
}

export interface Waiter {
  /** Resolves true when woken (now or since the last wait), false on timeout or abort. */
  wait(ms: number, signals: ReadonlyArray<AbortSignal | undefined>): Promise<boolean>;
  close(): void;
}

export function createWaiter(source: WakeSource, extraWake: Set<() => void>): Waiter {
  let pending = false;
  let release: ((woken: boolean) => void) | null = null;
  const wake = () => {
    if (release) release(true);
    else pending = true;
  };
  const unsubscribe = source.subscribe(wake);
  extraWake.add(wake);
  return {
    wait(ms, signals) {
      if (pending) {
        pending = false;
        return Promise.resolve(true);
      }
      if (signals.some((s) => s?.aborted)) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const done = (woken: boolean) => {
          clearTimeout(timer);
          for (const s of signals) s?.removeEventListener("abort", onAbort);
          release = null;
          resolve(woken);
        };
        const onAbort = () => done(false);
        const timer = setTimeout(() => done(false), Math.max(0, ms));
        for (const s of signals) s?.addEventListener("abort", onAbort, { once: true });
        release = done;
      });
    },
    close() {
      unsubscribe();
      extraWake.delete(wake);
      release?.(false);
    },
  };
}

// --- Shared reads -------------------------------------------------------------------------

/** Events read past a position: `to` is where the reader has everything of its filter up to. */
export interface Step {
  rows: EventRecord[];
  to: number;
  /** More may be there already: read again without waiting. */
  more: boolean;
}

/** One unfiltered read of the tenant's tail, shared by every reader that is caught up. */
interface Batch {
  from: number;
  to: number;
  rows: EventRecord[];
  more: boolean;
}

export const DETACHED = Symbol("detached");

/**
 * A tenant's live readers share one notifier subscription, one rescan timer and one store read
 * per wake-up (docs/feed.md, "Live readers"): `head` is the position the tenant's shared reads
 * reached, and a reader whose own position is at or past it takes its events from the shared
 * batch (filtering by its service in memory) instead of reading the store. A reader behind it
 * (catching up, or too slow for the last few batches) reads for itself until it reaches it.
 */
export class TenantTail {
  readers = 0;
  private readonly wakes = new Set<() => void>();
  private readonly unsubscribe: () => void;
  private readonly timer: ReturnType<typeof setInterval>;
  private head: number | null = null;
  private starting: Promise<void> | null;
  private dirty = true;
  private batches: Batch[] = [];
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly tenantId: string,
    private readonly store: Store,
    notifier: FeedNotifier,
    private readonly maxEventBytes: number,
  ) {
    this.unsubscribe = notifier.subscribe(tenantId, () => this.wake());
    // Re-read without a wake-up now and then: a lost notification delays, never loses.
    this.timer = setInterval(() => this.wake(), RESCAN_INTERVAL_MS);
    this.starting = store.events.feedHead(tenantId).then(
      (head) => {
        this.head ??= head;
        this.starting = null;
      },
      () => {
        this.starting = null; // the readers read for themselves until a shared read succeeds
      },
    );
  }

  subscribe(wake: () => void): () => void {
    this.wakes.add(wake);
    return () => this.wakes.delete(wake);
  }

  wake(): void {
    this.dirty = true;
    for (const wake of [...this.wakes]) wake();
  }

  /** Where the shared reads are: a reader that reads for itself may stop there (see `ownStep`). */
  get position(): number | null {
    return this.head;
  }

  /**
   * What is past `scan` for a caught-up reader: a step from a shared batch, null when nothing
   * new is known (wait for a wake-up), DETACHED when the reader is behind the shared reads.
   */
  async take(scan: number, serviceId: string | undefined): Promise<Step | null | typeof DETACHED> {
    if (this.starting) await this.starting;
    for (;;) {
      for (const batch of this.batches) {
        if (batch.from <= scan && scan < batch.to) {
          const rows = batch.rows.filter(
            (row) => row.position > scan && (serviceId === undefined || row.serviceId === serviceId),
          );
          const newest = this.batches[this.batches.length - 1] as Batch;
          return { rows, to: batch.to, more: batch !== newest || batch.more };
        }
      }
      if (this.head === null || scan < this.head) return DETACHED;
      if (this.inflight) {
        await this.inflight;
        continue;
      }
      if (!this.dirty) return null;
      this.dirty = false;
      const from = this.head;
      this.inflight = this.readBatch(from).finally(() => {
        this.inflight = null;
      });
      await this.inflight;
    }
  }

  private async readBatch(from: number): Promise<void> {
    let rows: EventRecord[];
    try {
      rows = await this.store.events.feed(this.tenantId, {
        after: from,
        limit: STREAM_PAGE,
        maxBytes: FEED_BATCH_BYTES,
      });
    } catch (error) {
      this.dirty = true; // the next reader tries again
      throw error;
    }
    const last = rows[rows.length - 1];
    if (!last) return;
    const more = isFull(rows, STREAM_PAGE, FEED_BATCH_BYTES, this.maxEventBytes);
    if (more) this.dirty = true;
    this.batches.push({ from, to: last.position, rows, more });
    if (this.batches.length > KEPT_BATCHES) this.batches.shift();
    this.head = Math.max(this.head ?? from, last.position);
  }

  close(): void {
    this.unsubscribe();
    clearInterval(this.timer);
    this.wakes.clear();
    this.batches = [];
  }
}

/**
 * Whether a read may have stopped short of what is there: `limit` rows, or enough bytes that
 * the next event might not have fit. Only a hint for reading again at once: positions never
 * rely on it.
 */
function isFull(rows: EventRecord[], limit: number, maxBytes: number, maxEventBytes: number): boolean {
  if (rows.length >= limit) return true;
  let bytes = 0;
  for (const row of rows) bytes += row.payload.length;
  return bytes + maxEventBytes > maxBytes;
}

// --- Tails and reader caps ------------------------------------------------------------------

/** A feed's tenant tails: one per tenant with live readers, closed when its last reader leaves. */
export function createTails(store: Store, notifier: FeedNotifier, maxEventBytes: number) {
  const tails = new Map<string, TenantTail>();

  function tailOf(tenantId: string): TenantTail {
    let tail = tails.get(tenantId);
    if (!tail) {
      tail = new TenantTail(tenantId, store, notifier, maxEventBytes);
      tails.set(tenantId, tail);
    }
    tail.readers++;
    return tail;
  }

  function leave(tenantId: string, tail: TenantTail): void {
    if (--tail.readers > 0) return;
    tail.close();
    if (tails.get(tenantId) === tail) tails.delete(tenantId);
  }

  return { tailOf, leave };
}

/** A feed's live-reader caps (docs/feed.md, "Live readers"), per token and per tenant, on this instance. */
export function createReaderCaps(
  observer: Observer,
  readersPerToken: number,
  readersPerTenant: number,
): (principal: Principal) => () => void {
  const liveByToken = new Map<string, number>();
  const liveByTenant = new Map<string, number>();

  /**
   * Takes a live-reader slot of the token and of the tenant, or refuses with 429 rate_limited
   * and the RateLimit fields of the cap that is full. The release is idempotent.
   */
  function admitReader(principal: Principal): () => void {
    const byToken = liveByToken.get(principal.tokenId) ?? 0;
    const byTenant = liveByTenant.get(principal.tenantId) ?? 0;
    const full = byToken >= readersPerToken ? "token" : byTenant >= readersPerTenant ? "tenant" : null;
    if (full) {
      observer.rateLimited("feed");
      const limit = full === "token" ? readersPerToken : readersPerTenant;
      throw new RateLimitedError(
        { policy: "feed", allowed: false, limit, windowSeconds: 1, remaining: 0, resetSeconds: 1 },
        `The ${full} already has ${limit} feed streams and long polls open; close one or retry later.`,
      );
    }
    liveByToken.set(principal.tokenId, byToken + 1);
    liveByTenant.set(principal.tenantId, byTenant + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const [counts, key] of [
        [liveByToken, principal.tokenId],
        [liveByTenant, principal.tenantId],
      ] as const) {
        const left = (counts.get(key) ?? 1) - 1;
        if (left > 0) counts.set(key, left);
        else counts.delete(key);
      }
    };
  }

  return admitReader;
}

// --- The drain ---------------------------------------------------------------------------

/**
 * How long a drain lets each live stream send what is committed and end by itself (docs/operations.md,
 * "Stopping"): one still open then (its reader stalled, or too slow) is ended through its end path.
 */
export const FEED_DRAIN_GRACE_MS = 5_000;

/** Why a live read ends on a drain. */
export const shuttingDown = () =>
  new DomainError("unavailable", "The server is shutting down; resume from the last cursor.");

/**
 * A feed's server drain: `draining` is aborted and every waiter (`everyone`) woken, so waiting
 * long polls answer now and streams send what is committed and end. A stream still open after
 * the grace (one whose reader stopped reading is parked on a full socket, where nothing pulls
 * it to its end) has the end it enlisted called: it ends like a revoked one, through `onEnd`,
 * and its transport resets the connection unless the ending is flushed within
 * STALLED_END_GRACE_MS (src/rpc/grpc-server.ts).
 */
export function createDrain(graceMs: number) {
  const draining = new AbortController();
  const everyone = new Set<() => void>();
  const open = new Set<() => void>();

  /** Lists a stream's end; the returned unlist is a no-op while draining, see below. */
  function enlist(endForDrain: () => void): () => void {
    open.add(endForDrain);
    // While draining a stream stays listed after its generator finished: its ending may still
    // be queued behind a full socket, and only its end path (onEnd) has the transport reset that.
    return () => {
      if (!draining.signal.aborted) open.delete(endForDrain);
    };
  }

  function drain(): void {
    if (draining.signal.aborted) return;
    draining.abort();
    for (const wake of [...everyone]) wake();
    const cut = setTimeout(() => {
      for (const endForDrain of [...open]) endForDrain();
      open.clear();
    }, graceMs);
    cut.unref?.();
  }

  return { draining, everyone, enlist, drain };
}
