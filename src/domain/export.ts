/**
 * The export of the feed onto a stream engine (SPEC §21, docs/export.md): every committed event
 * and incident change, of every tenant, published in feed order, each acknowledged before the
 * stored position moves past it.
 *
 * - **One instance exports**: a lease in the store (`exports.claim`), renewed while it runs;
 *   another instance claims it once it expires, so a dead holder is replaced within
 *   `leaseTtlMs` plus one `standbyMs`. A clean stop lets it go at once.
 * - **Position**: the feed position up to which the stream acknowledged everything. It moves
 *   only past acknowledged messages and only while the lease is held (fenced by the store).
 *   What was published but not yet recorded is published again after a restart or takeover:
 *   the stream stores each id once within its duplicate window.
 * - **Order**: publishes are pipelined, at most `maxInFlight` awaiting their acknowledgement,
 *   each carrying the id of its predecessor as the stream's expected last id; when one fails,
 *   the ones after it fail too, and the exporter resumes from the last acknowledged position.
 *   So the stream holds the feed's order, per subject and overall.
 * - **Wake-ups**: the feed notifier (any tenant's commit) and a poll every `pollMs` (incident
 *   changes and a lost notification are picked up by the poll).
 */
import type { Logger } from "../logger.ts";
import type { FeedNotifier } from "./ports/notifier.ts";
import type { Observer } from "./ports/observer.ts";
import type { ExportMessage, ExportPublisher } from "./ports/publisher.ts";
import type { ExportItem, Store } from "./ports/store.ts";

/** The lease and position row of the NATS export. */
export const EXPORT_LEASE = "nats";

export interface ExporterOptions {
  /** Publishes awaiting their acknowledgement at most (INTAKE_EXPORT_NATS_MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** How long a lease lasts without renewal: a dead holder's successor waits this long. */
  leaseTtlMs: number;
  /** How often the holder renews the lease and records its position. */
  renewMs: number;
  /** How often an instance without the lease tries to take it. */
  standbyMs: number;
  /** Re-read the feed this often when no wake-up came. */
  pollMs: number;
  /** Feed items read at a time. */
  pageSize: number;
  /** The longest pause before resuming after a failed publish. */
  maxBackoffMs: number;
}

export const DEFAULT_EXPORTER_OPTIONS: ExporterOptions = {
  maxInFlight: 256,
  leaseTtlMs: 5_000,
  renewMs: 1_000,
  standbyMs: 1_000,
  pollMs: 1_000,
  pageSize: 500,
  maxBackoffMs: 5_000,
};

export interface ExporterDeps {
  store: Store;
  publisher: ExportPublisher;
  /** Item → subject, body and id (src/export/messages.ts). */
  encode: (item: ExportItem) => ExportMessage;
  notifier: FeedNotifier;
  observer: Observer;
  logger: Logger;
  options?: Partial<ExporterOptions>;
}

/** The lease went to another instance: stop publishing, become a standby. */
class LeaseLost extends Error {
  constructor() {
    super("the export lease is held by another instance");
  }
}

interface Pending {
  /** The feed position acknowledged once this settles. */
  position: number;
  /** Null when acknowledged, else the failure (never rejects, so no rejection goes unhandled). */
  done: Promise<unknown>;
  /** What `done` resolved to, once it has (undefined before). */
  outcome?: unknown;
}

const ACKNOWLEDGED = Promise.resolve(null);

export function createExporter(deps: ExporterDeps) {
  const { store, publisher, encode, notifier, observer, logger } = deps;
  const options = { ...DEFAULT_EXPORTER_OPTIONS, ...deps.options };
  const holder = crypto.randomUUID();
  let stopped = false;
  let running: Promise<void> | null = null;
  let leading = false;

  // A wake-up that comes while the exporter is busy is kept, so the next pause ends at once.
  let woken = false;
  let interrupt: (() => void) | null = null;
  let wakeable = false;

  /** Resolves after `ms`, on stop, or (when `onWake`) on a feed wake-up. */
  function pause(ms: number, onWake: boolean): Promise<void> {
    if (stopped || (onWake && woken)) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        interrupt = null;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      interrupt = finish;
      wakeable = onWake;
    });
  }
  const unsubscribe = notifier.subscribeAll(() => {
    woken = true;
    if (wakeable) interrupt?.();
  });

  /** While holding the lease: read, publish, record. Returns on stop; throws on any failure. */
  async function lead(start: number): Promise<void> {
    await publisher.ensureStream();
    let acked = start;
    let readFrom = start;
    let head = start;
    let previousId: string | null = null;
    let lost = false;
    const inFlight: Pending[] = [];
    // One record at a time, in order: the position never goes back.
    let recording: Promise<void> = Promise.resolve();
    const record = (): Promise<void> => {
      // A failed record (the store unreachable) must not fail every later one unattempted.
      recording = recording
        .catch(() => {})
        .then(async () => {
          const position = acked;
          if (!(await store.exports.advance(EXPORT_LEASE, holder, position, options.leaseTtlMs))) {
            lost = true;
          }
        });
      return recording;
    };
    // Renewed on its own timer, so a slow publish or read never lets the lease lapse.
    const renewal = setInterval(() => {
      record().catch((error: unknown) => logger.warn("export: lease renewal failed", { error: String(error) }));
    }, options.renewMs);

    const settleOldest = async () => {
      const pending = inFlight.shift() as Pending;
      const failure = await pending.done;
      if (failure !== null) throw failure;
      acked = pending.position;
    };
    /** Takes every publish already settled off the front of the window, without waiting. */
    const settleReady = () => {
      for (let pending = inFlight[0]; pending?.outcome !== undefined; pending = inFlight[0]) {
        inFlight.shift();
        if (pending.outcome !== null) throw pending.outcome;
        acked = pending.position;
      }
    };
    try {
      while (!stopped) {
        if (lost) throw new LeaseLost();
        woken = false;
        const page = await store.exports.read(readFrom, options.pageSize);
        head = Math.max(head, page.head);
        for (const item of page.items) {
          if (inFlight.length >= options.maxInFlight) {
            // The window is full: wait for its oldest, then take every later one already
            // acknowledged (acknowledgements arrive many to a read), so the window refills in
            // a burst the client writes to the socket at once. Refilled one publish per
            // acknowledgement, each went out in a write of its own (bench scenario 14).
            await settleOldest();
            settleReady();
          }
          if (lost) throw new LeaseLost();
          const message = encode(item);
          const pending: Pending = { position: item.position, done: ACKNOWLEDGED };
          pending.done = publisher.publish(message, previousId).then(
            (ack) => {
              observer.exportPublished(ack);
              pending.outcome = null;
              return null;
            },
            (error: unknown) => {
              pending.outcome = error ?? new Error("publish failed");
              return pending.outcome;
            },
          );
          inFlight.push(pending);
          previousId = message.id;
        }
        // Past the page's gaps too (positions of nothing, or of rows deleted since).
        if (page.upTo > readFrom) inFlight.push({ position: page.upTo, done: ACKNOWLEDGED, outcome: null });
        readFrom = page.upTo;
        observer.exportLag(Math.max(0, head - acked));
        // A page may stop short of the head with nothing in it (a store reads a window of positions).
        if (page.items.length > 0 || page.upTo < page.head) continue;
        // Caught up: everything read is acknowledged (so the lag reads 0) before the pause.
        // The position is recorded by the renewal timer, not here: under ingest the exporter
        // catches up after nearly every commit, and a store write each time (on SQLite, a
        // transaction and its fsync on the event loop) doubled the commits (bench scenario 14).
        while (inFlight.length > 0) await settleOldest();
        observer.exportLag(Math.max(0, head - acked));
        if (lost) throw new LeaseLost();
        await pause(options.pollMs, true);
      }
      while (inFlight.length > 0) await settleOldest();
    } finally {
      clearInterval(renewal);
      // What was acknowledged before a failure is kept; the rest is published again, once
      // every publish of this run has settled (none is left to land behind the next run's).
      const outcomes = await Promise.all(inFlight.map((pending) => pending.done));
      for (let i = 0; i < outcomes.length && outcomes[i] === null; i++) acked = (inFlight[i] as Pending).position;
      inFlight.length = 0;
      if (!lost) await record().catch(() => {});
    }
  }

  async function run(): Promise<void> {
    let backoffMs = 250;
    while (!stopped) {
      let start: number | null = null;
      try {
        start = await store.exports.claim(EXPORT_LEASE, holder, options.leaseTtlMs);
      } catch (error) {
        logger.warn("export: cannot reach the store to claim the lease", { error: String(error) });
      }
      if (start === null) {
        await pause(options.standbyMs, false);
        continue;
      }
      if (!leading) logger.info("export: this instance exports", { position: start });
      leading = true;
      try {
        await lead(start);
        backoffMs = 250;
      } catch (error) {
        if (error instanceof LeaseLost) {
          // Another instance reports the lag now.
          observer.exportLag(0);
          leading = false;
          logger.warn("export: lease taken by another instance; standing by");
          continue;
        }
        logger.warn("export: publishing stopped; resuming from the last acknowledged position", {
          error: String(error),
          retry_in_ms: backoffMs,
        });
        await pause(backoffMs, false);
        backoffMs = Math.min(options.maxBackoffMs, backoffMs * 2);
      }
    }
    if (leading) await store.exports.release(EXPORT_LEASE, holder).catch(() => {});
    leading = false;
  }

  return {
    /** Starts the background job (idempotent). */
    start(): void {
      if (running || stopped) return;
      running = run().catch((error: unknown) => {
        logger.error("export: stopped on an unexpected error", { error: String(error) });
      });
    },
    /** Whether this instance holds the lease now (tests, and the log). */
    isLeading: () => leading,
    /** Finishes what is in flight, records the position, lets the lease go, closes the publisher. */
    async stop(): Promise<void> {
      stopped = true;
      unsubscribe();
      interrupt?.();
      await running;
      await publisher.close();
    },
  };
}

export type Exporter = ReturnType<typeof createExporter>;
