/**
 * The feed (docs/feed.md): every stored event of a tenant in one order, read by programs with
 * a cursor that never skips and never repeats.
 *
 * Positions are assigned by the store inside each batch's write transaction, in commit order
 * (SQLite: one writer at a time; PostgreSQL: the feed_head row lock held to commit), so every
 * read returns a prefix of the final order. The cursor is that position, bound to the tenant.
 * Readers are woken by the notifier but always read the store: a lost wake-up only delays.
 */
import { createHash } from "node:crypto";
import type { Logger } from "../logger.ts";
import { DomainError, invalid, notFound } from "./errors.ts";
import { parseId } from "./ids.ts";
import type { FeedNotifier } from "./ports/notifier.ts";
import type { Observer } from "./ports/observer.ts";
import type { Store } from "./ports/store.ts";
import type { EventRecord, Principal } from "./types.ts";

export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 1000;
export const FEED_MAX_WAIT_SECONDS = 30;
export const FEED_STARTS = ["earliest", "latest"] as const;
export type FeedStart = (typeof FEED_STARTS)[number];

/** Events a stream reads from the store at once: all a slow reader can make Intake hold. */
const STREAM_PAGE = 100;
/** How often a stream re-checks its token and filtered service: ends within 1 s of a revoke. */
const CHECK_INTERVAL_MS = 500;
/** Re-read without a wake-up at least this often: a lost notification delays, never loses. */
const RESCAN_INTERVAL_MS = 2_000;
/** SSE comment / no-op at least this often on an idle stream (docs/feed.md: at most 15 s). */
const KEEP_ALIVE_MS = 15_000;

export interface FeedDeps {
  store: Store;
  notifier: FeedNotifier;
  /** Re-verifies a stream's bearer token (cache first; revocations invalidate across instances). */
  verifyToken(credential: string): { ok: boolean } | Promise<{ ok: boolean }>;
  observer: Observer;
  logger: Logger;
  /** Tests shorten these. */
  keepAliveMs?: number;
  checkIntervalMs?: number;
}

export interface FeedRequest {
  after?: string | undefined;
  limit?: number | undefined;
  serviceId?: string | undefined;
  start?: string | undefined;
  waitSeconds?: number | undefined;
}

export interface FeedItem {
  event: EventRecord;
  /** Where to resume to get what comes after this event. */
  cursor: string;
}

/**
 * A page carries one cursor, after its last event: a page reader resumes only from there, so
 * the per-event cursors a stream hands out (FeedItem) are not computed for a page.
 */
export interface FeedPage {
  events: EventRecord[];
  /** Never null: the request's own position when nothing new was there. */
  nextCursor: string;
}

export type StreamItem = { kind: "event"; item: FeedItem } | { kind: "keep_alive" };

export interface StreamOptions {
  /** The bearer token the stream was opened with, re-verified while it lasts. */
  credential: string;
  /** The caller went away. */
  signal?: AbortSignal | undefined;
}

// --- Cursors ----------------------------------------------------------------------------

/**
 * A short digest of the tenant id, so a cursor of one tenant is refused by another (400)
 * without revealing the tenant it belongs to. Not a secret: positions are not either.
 */
export function tenantTag(tenantId: string): string {
  return createHash("sha256").update(`intake-feed:${tenantId}`).digest("hex").slice(0, 16);
}

const CURSOR_TEXT = /^[A-Za-z0-9_-]{1,64}$/;
const CURSOR_BODY = /^f1\.(\d{1,16})\.([0-9a-f]{16})$/;

/** The feed cursor: opaque to clients, base64url of `f1.<position>.<tenant tag>`. */
export function encodeFeedCursor(tenantId: string, position: number, tag = tenantTag(tenantId)): string {
  return Buffer.from(`f1.${position}.${tag}`, "latin1").toString("base64url");
}

/** The position of a cursor this tenant was given; 400 invalid_request for anything else. */
export function decodeFeedCursor(tenantId: string, cursor: string, field = "after"): number {
  const text = CURSOR_TEXT.test(cursor) ? Buffer.from(cursor, "base64url").toString("latin1") : "";
  const match = CURSOR_BODY.exec(text);
  const position = match ? Number(match[1]) : Number.NaN;
  if (!match || !Number.isSafeInteger(position) || match[2] !== tenantTag(tenantId)) {
    throw invalid(field, "is not a feed cursor this API returned to this tenant");
  }
  return position;
}

// --- Waiting ----------------------------------------------------------------------------

interface Waiter {
  /** Resolves true when woken (now or since the last wait), false on timeout or abort. */
  wait(ms: number, signals: ReadonlyArray<AbortSignal | undefined>): Promise<boolean>;
  close(): void;
}

function createWaiter(notifier: FeedNotifier, tenantId: string, extraWake: Set<() => void>): Waiter {
  let pending = false;
  let release: ((woken: boolean) => void) | null = null;
  const wake = () => {
    if (release) release(true);
    else pending = true;
  };
  const unsubscribe = notifier.subscribe(tenantId, wake);
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

// --- The feed ---------------------------------------------------------------------------

export function createFeed(deps: FeedDeps) {
  const { store, notifier, observer, logger } = deps;
  const keepAliveMs = deps.keepAliveMs ?? KEEP_ALIVE_MS;
  const checkIntervalMs = deps.checkIntervalMs ?? CHECK_INTERVAL_MS;
  /** Set by drain(): streams send what is committed, then end; long polls answer at once. */
  const draining = new AbortController();
  const everyone = new Set<() => void>();

  function checkLimit(limit: number | undefined): number {
    const value = limit ?? FEED_DEFAULT_LIMIT;
    if (!Number.isInteger(value) || value < 1 || value > FEED_MAX_LIMIT) {
      throw invalid("limit", `must be an integer from 1 to ${FEED_MAX_LIMIT}`);
    }
    return value;
  }

  function checkWait(waitSeconds: number | undefined): number {
    const value = waitSeconds ?? 0;
    if (!Number.isInteger(value) || value < 0 || value > FEED_MAX_WAIT_SECONDS) {
      throw invalid("wait", `must be an integer from 0 to ${FEED_MAX_WAIT_SECONDS}`);
    }
    return value;
  }

  /** The filtered service's raw id, after checking it is the caller's (404 otherwise). */
  async function filterOf(principal: Principal, serviceId: string | undefined): Promise<string | undefined> {
    if (serviceId === undefined) return undefined;
    const raw = parseId("svc", serviceId);
    if (raw === null || !(await store.services.get(principal.tenantId, raw))) throw notFound("service");
    return raw;
  }

  /** Where a read starts: `after` wins; else `start` (earliest: before everything; latest: the head now). */
  async function startPosition(principal: Principal, request: FeedRequest): Promise<number> {
    if (request.after !== undefined) return decodeFeedCursor(principal.tenantId, request.after);
    const start = request.start ?? "earliest";
    if (!(FEED_STARTS as readonly string[]).includes(start)) throw invalid("start", "must be earliest or latest");
    return start === "latest" ? store.events.feedHead(principal.tenantId) : 0;
  }

  /** `GET /v1/feed` / ListFeed: oldest first; with `wait`, held until something arrives. */
  async function listFeed(principal: Principal, request: FeedRequest, signal?: AbortSignal): Promise<FeedPage> {
    const limit = checkLimit(request.limit);
    const waitSeconds = checkWait(request.waitSeconds);
    const position = await startPosition(principal, request);
    const serviceId = await filterOf(principal, request.serviceId);
    const { tenantId } = principal;
    const read = () => store.events.feed(tenantId, { after: position, limit, serviceId });
    let rows: EventRecord[];
    if (waitSeconds === 0) {
      rows = await read();
    } else {
      // Subscribed before the first read: an event committed between the read and the wait
      // still wakes us.
      const waiter = createWaiter(notifier, tenantId, everyone);
      try {
        const deadline = Date.now() + waitSeconds * 1000;
        rows = await read();
        while (rows.length === 0 && !draining.signal.aborted && !signal?.aborted) {
          const left = deadline - Date.now();
          if (left <= 0) break;
          await waiter.wait(Math.min(left, RESCAN_INTERVAL_MS), [signal, draining.signal]);
          rows = await read();
        }
      } finally {
        waiter.close();
      }
    }
    const last = rows[rows.length - 1];
    return { events: rows, nextCursor: encodeFeedCursor(tenantId, last ? last.position : position) };
  }

  /** `GET /v1/events/{id}` / GetEvent: another tenant's event is a 404 like an unknown one. */
  async function getEvent(principal: Principal, id: string): Promise<EventRecord> {
    const raw = parseId("evt", id);
    const event = raw ? await store.events.get(principal.tenantId, raw) : null;
    if (!event) throw notFound("event");
    return event;
  }

  /**
   * Opens a live stream. Validation (cursor, start, service) happens here, before anything is
   * sent, so the caller can still answer with an error status. The returned iterator yields
   * events as the consumer pulls them (back-pressure: at most one store page is held), and
   * keep-alives on idle; it throws the reason when the stream must end (token revoked or
   * expired, filtered service deleted, server draining), after which the caller closes.
   */
  async function openStream(
    principal: Principal,
    request: FeedRequest,
    options: StreamOptions,
  ): Promise<AsyncGenerator<StreamItem, void, undefined>> {
    let position = await startPosition(principal, request);
    const serviceId = await filterOf(principal, request.serviceId);
    const { tenantId } = principal;
    const tag = tenantTag(tenantId);

    // The end conditions are watched on a timer of their own, so an idle stream ends promptly.
    const ended = new AbortController();
    let endReason: DomainError | null = null;
    const end = (reason: DomainError) => {
      if (endReason) return;
      endReason = reason;
      ended.abort(reason);
    };
    let checking = false;
    async function check(): Promise<void> {
      if (checking || endReason) return;
      checking = true;
      try {
        const verdict = await deps.verifyToken(options.credential);
        if (!verdict.ok) {
          end(new DomainError("invalid_credentials", "The bearer token was revoked or has expired."));
          return;
        }
        if (serviceId !== undefined && !(await store.services.get(tenantId, serviceId))) {
          end(new DomainError("not_found", "The filtered service was deleted."));
        }
      } catch (error) {
        // A store or cache hiccup is not a reason to cut a reader off: the next check decides.
        logger.warn("feed stream: end-condition check failed", { error });
      } finally {
        checking = false;
      }
    }
    const signals = [options.signal, ended.signal, draining.signal];

    // Everything that needs releasing starts with the first pull, inside the try whose
    // finally releases it: a generator that is never started holds nothing.
    async function* run(): AsyncGenerator<StreamItem, void, undefined> {
      const watchdog = setInterval(() => void check(), checkIntervalMs);
      const waiter = createWaiter(notifier, tenantId, everyone);
      observer.feedStreams(1);
      try {
        let lastSent = Date.now();
        let lastRead = 0;
        let woken = true;
        for (;;) {
          if (options.signal?.aborted) return;
          if (endReason) throw endReason;
          // Captured before the read: when draining, the read that comes back empty is the last.
          const drainingNow = draining.signal.aborted;
          if (woken || drainingNow || Date.now() - lastRead >= RESCAN_INTERVAL_MS) {
            lastRead = Date.now();
            const rows = await store.events.feed(tenantId, { after: position, limit: STREAM_PAGE, serviceId });
            if (rows.length > 0) {
              for (const event of rows) {
                if (options.signal?.aborted) return;
                if (endReason) throw endReason;
                position = event.position;
                yield { kind: "event", item: { event, cursor: encodeFeedCursor(tenantId, position, tag) } };
              }
              lastSent = Date.now();
              woken = true; // a full page may have more behind it
              // SQLite reads resolve at once: without a turn of the event loop, readers
              // catching up would run page after page as microtasks and starve every request.
              await new Promise<void>((resolve) => setImmediate(resolve));
              continue;
            }
            if (drainingNow) {
              throw new DomainError("unavailable", "The server is shutting down; resume from the last cursor.");
            }
          }
          if (Date.now() - lastSent >= keepAliveMs) {
            yield { kind: "keep_alive" };
            lastSent = Date.now();
          }
          const untilKeepAlive = keepAliveMs - (Date.now() - lastSent);
          const untilRescan = RESCAN_INTERVAL_MS - (Date.now() - lastRead);
          woken = await waiter.wait(Math.max(1, Math.min(untilKeepAlive, untilRescan)), signals);
        }
      } finally {
        clearInterval(watchdog);
        waiter.close();
        observer.feedStreams(-1);
      }
    }
    const generator = run();
    // Check once now: a token revoked while the stream was being opened ends it at once.
    await check();
    return generator;
  }

  /** Server drain: streams send what is committed and end; waiting long polls answer now. */
  function drain(): void {
    draining.abort();
    for (const wake of [...everyone]) wake();
  }

  return { listFeed, getEvent, openStream, drain };
}

export type Feed = ReturnType<typeof createFeed>;
