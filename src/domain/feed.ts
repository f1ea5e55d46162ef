/**
 * The feed (docs/feed.md): every stored event of a tenant in one order, read by programs with
 * a cursor that never skips and never repeats.
 *
 * Positions are assigned by the store inside each batch's write transaction, in commit order
 * (SQLite: one writer at a time; PostgreSQL: the feed_head row lock held to commit), so every
 * read returns a prefix of the final order. The cursor is that position, bound to the tenant.
 * Readers are woken by the notifier but always read the store: a lost wake-up only delays.
 */
import type { Logger } from "../logger.ts";
import { DomainError, invalid, notFound } from "./errors.ts";
import { decodeFeedCursor, encodeFeedCursor, tenantTag } from "./feed-cursor.ts";
import {
  createDrain,
  createReaderCaps,
  createTails,
  createWaiter,
  DETACHED,
  FEED_BATCH_BYTES,
  FEED_DRAIN_GRACE_MS,
  STREAM_PAGE,
  type Step,
  shuttingDown,
  type TenantTail,
} from "./feed-live.ts";
import type {
  FeedPage,
  FeedRequest,
  ListOptions,
  LiveItem,
  LiveSource,
  StreamItem,
  StreamOptions,
} from "./feed-types.ts";
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

/**
 * The byte budget of a page (docs/feed.md, "Byte budget"): its events' payloads total at most
 * this, unless its first event alone is larger (a page always carries one event, so a reader
 * always progresses). `limit` still bounds the count. With 1,000 events' fields around it, a
 * ListFeed message stays under gRPC's customary 4 MiB receive limit (grpc-js, grpc-go).
 */
export const FEED_PAGE_BYTES = 3 * 1024 * 1024;
/** How often a stream or a long poll re-checks its token (and a stream its filtered service): ends within 1 s of a revoke. */
const CHECK_INTERVAL_MS = 500;
/** SSE comment / no-op at least this often on an idle stream (docs/feed.md: at most 15 s). */
const KEEP_ALIVE_MS = 15_000;
/** Defaults of INTAKE_FEED_READERS_PER_TOKEN / _PER_TENANT (docs/feed.md, "Live readers"). */
export const FEED_READERS_PER_TOKEN = 10;
export const FEED_READERS_PER_TENANT = 100;

export interface FeedDeps {
  store: Store;
  notifier: FeedNotifier;
  /** Re-verifies a stream's bearer token (cache first; revocations invalidate across instances). */
  verifyToken(credential: string): { ok: boolean } | Promise<{ ok: boolean }>;
  observer: Observer;
  logger: Logger;
  /** The ingest limit (INTAKE_MAX_EVENT_BYTES): tells a batch the budget may have cut from one that is whole. */
  maxEventBytes?: number;
  /** Live reads (streams, waiting long polls) this instance holds at once, per token and per tenant. */
  readersPerToken?: number;
  readersPerTenant?: number;
  /** Tests shorten these. */
  keepAliveMs?: number;
  checkIntervalMs?: number;
  drainGraceMs?: number;
}

export type * from "./feed-types.ts";

// --- The feed ---------------------------------------------------------------------------

export function createFeed(deps: FeedDeps) {
  const { store, notifier, observer, logger } = deps;
  const keepAliveMs = deps.keepAliveMs ?? KEEP_ALIVE_MS;
  const checkIntervalMs = deps.checkIntervalMs ?? CHECK_INTERVAL_MS;
  const maxEventBytes = deps.maxEventBytes ?? 256 * 1024;
  const readersPerToken = deps.readersPerToken ?? FEED_READERS_PER_TOKEN;
  const readersPerTenant = deps.readersPerTenant ?? FEED_READERS_PER_TENANT;
  /** drain(): long polls answer at once; streams send what is committed, then end (feed-live.ts). */
  const { draining, everyone, enlist, drain } = createDrain(deps.drainGraceMs ?? FEED_DRAIN_GRACE_MS);
  const { tailOf, leave } = createTails(store, notifier, maxEventBytes);
  const admitReader = createReaderCaps(observer, readersPerToken, readersPerTenant);

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

  /**
   * A reader's own read past `scan` (it is behind the shared reads): an empty answer means
   * nothing of its filter is committed up to where the shared reads were before it, so it may
   * continue from there.
   */
  async function ownStep(
    tenantId: string,
    tail: TenantTail,
    scan: number,
    serviceId: string | undefined,
    limit: number,
    maxBytes: number,
  ): Promise<Step> {
    const shared = tail.position;
    const rows = await store.events.feed(tenantId, { after: scan, limit, maxBytes, serviceId });
    const last = rows[rows.length - 1];
    if (last) return { rows, to: last.position, more: true };
    return { rows, to: Math.max(scan, shared ?? scan), more: false };
  }

  /** The next step of a live reader: shared when it is caught up, its own read when it is behind. */
  async function nextStep(
    tenantId: string,
    tail: TenantTail,
    scan: number,
    serviceId: string | undefined,
    own: boolean,
  ): Promise<Step | null> {
    const shared = own ? DETACHED : await tail.take(scan, serviceId);
    if (shared !== DETACHED) return shared;
    return ownStep(tenantId, tail, scan, serviceId, STREAM_PAGE, FEED_BATCH_BYTES);
  }

  const dead = () => new DomainError("invalid_credentials", "The bearer token was revoked or has expired.");

  async function tokenAlive(credential: string): Promise<boolean> {
    try {
      return (await deps.verifyToken(credential)).ok;
    } catch (error) {
      // A store or cache hiccup is not a reason to cut a reader off: the next check decides.
      logger.warn("feed: token re-check failed", { error });
      return true;
    }
  }

  /**
   * `GET /v1/feed` / ListFeed: oldest first, at most `limit` events and FEED_PAGE_BYTES of
   * payloads; with `wait`, held until something arrives, the token re-checked while it waits
   * and before it answers.
   */
  async function listFeed(principal: Principal, request: FeedRequest, options: ListOptions = {}): Promise<FeedPage> {
    const { signal, credential } = options;
    const limit = checkLimit(request.limit);
    const waitSeconds = checkWait(request.waitSeconds);
    const position = await startPosition(principal, request);
    const serviceId = await filterOf(principal, request.serviceId);
    const { tenantId } = principal;
    let heldMs = 0;
    const page = (rows: EventRecord[]): FeedPage => {
      const last = rows[rows.length - 1];
      return { events: rows, nextCursor: encodeFeedCursor(tenantId, last ? last.position : position), heldMs };
    };
    const deadline = Date.now() + waitSeconds * 1000;
    const first = await store.events.feed(tenantId, { after: position, limit, maxBytes: FEED_PAGE_BYTES, serviceId });
    if (first.length > 0 || waitSeconds === 0) return page(first);
    // Nothing yet: the call waits, and counts as a live reader while it does.
    const release = admitReader(principal);
    const tail = tailOf(tenantId);
    const waiter = createWaiter(tail, everyone);
    const revoked = new AbortController();
    const watchdog =
      credential === undefined
        ? undefined
        : setInterval(async () => {
            if (!revoked.signal.aborted && !(await tokenAlive(credential))) revoked.abort();
          }, checkIntervalMs);
    try {
      // Subscribed now, so read once more before waiting: what committed between the first
      // read and the subscription (its wake-up missed) is found here, not at the next rescan.
      let step: Step = { rows: [], to: position, more: true };
      while (step.rows.length === 0 && !draining.signal.aborted && !signal?.aborted && !revoked.signal.aborted) {
        if (!step.more) {
          const left = deadline - Date.now();
          if (left <= 0) break;
          const waited = performance.now();
          await waiter.wait(left, [signal, draining.signal, revoked.signal]);
          heldMs += performance.now() - waited;
          if (revoked.signal.aborted || Date.now() >= deadline) break;
        }
        step = (await nextStep(tenantId, tail, step.to, serviceId, draining.signal.aborted)) ?? {
          ...step,
          more: false,
        };
      }
      // Whatever it found, a long poll answers only while its token still holds.
      if (revoked.signal.aborted || (credential !== undefined && !(await tokenAlive(credential)))) throw dead();
      return page(step.rows.slice(0, limit));
    } finally {
      clearInterval(watchdog);
      waiter.close();
      leave(tenantId, tail);
      release();
    }
  }

  /** `GET /v1/events/{id}` / GetEvent: another tenant's event is a 404 like an unknown one. */
  async function getEvent(principal: Principal, id: string): Promise<EventRecord> {
    const raw = parseId("evt", id);
    const event = raw ? await store.events.get(principal.tenantId, raw) : null;
    if (!event) throw notFound("event");
    return event;
  }

  /**
   * Opens a live stream. Validation (cursor, start, service) and the reader caps happen here,
   * before anything is sent, so the caller can still answer with an error status. The returned
   * iterator yields events as the consumer pulls them (back-pressure: at most one batch is
   * held), and keep-alives on idle; it throws the reason when the stream must end (token
   * revoked or expired, filtered service deleted, server draining), after which the caller
   * closes. Its slot is taken now and given back when it ends, is returned, or its caller goes.
   */
  async function openStream(
    principal: Principal,
    request: FeedRequest,
    options: StreamOptions,
  ): Promise<AsyncGenerator<StreamItem, void, undefined>> {
    const position = await startPosition(principal, request);
    const serviceId = await filterOf(principal, request.serviceId);
    const { tenantId } = principal;
    const tag = tenantTag(tenantId);
    const events: LiveSource<EventRecord, StreamItem> = {
      next: (tail, scan, own) => nextStep(tenantId, tail, scan, serviceId, own),
      item: (event, at) => ({ kind: "event", item: { event, cursor: encodeFeedCursor(tenantId, at, tag) } }),
    };
    return openLive(principal, position, serviceId, options, events);
  }

  /**
   * A live stream over `source` from `start` (validated by the caller): the reader caps, the
   * tenant's shared wake-ups, the end conditions (token revoked or expired, filtered service
   * deleted, drain), keep-alives and back-pressure are the same for every stream of the
   * tenant's one order (the feed, the incident changes).
   */
  async function openLive<R extends { position: number }, I>(
    principal: Principal,
    start: number,
    serviceId: string | undefined,
    options: StreamOptions,
    source: LiveSource<R, I>,
  ): Promise<AsyncGenerator<LiveItem<I>, void, undefined>> {
    let position = start;
    const { tenantId } = principal;
    const releaseSlot = admitReader(principal);
    observer.feedStreams(1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      releaseSlot();
      observer.feedStreams(-1);
    };

    // The end conditions are watched on a timer of their own, so an idle stream ends promptly,
    // and a stalled one too: its slot is released and the transport told, whatever the reader does.
    const ended = new AbortController();
    let endReason: DomainError | null = null;
    const end = (reason: DomainError) => {
      if (endReason) return;
      endReason = reason;
      ended.abort(reason);
      release();
      options.onEnd?.(reason);
    };
    // A stream the drain's grace does not see end is ended here, like a revoked one.
    const unlist = enlist(() => end(shuttingDown()));
    let checking = false;
    async function check(): Promise<void> {
      if (checking || endReason) return;
      checking = true;
      try {
        const verdict = await deps.verifyToken(options.credential);
        if (!verdict.ok) {
          end(dead());
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
    const watchdog = setInterval(() => void check(), checkIntervalMs);
    const onAbort = () => {
      clearInterval(watchdog);
      release();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const signals = [options.signal, ended.signal, draining.signal];

    async function* run(): AsyncGenerator<LiveItem<I>, void, undefined> {
      const tail = tailOf(tenantId);
      const waiter = createWaiter(tail, everyone);
      try {
        let lastSent = Date.now();
        // `scan`: everything of this stream's filter up to here was handed out; `position`
        // (its cursor) moves only on its events.
        let scan = position;
        let more = true;
        for (;;) {
          if (options.signal?.aborted) return;
          if (endReason) throw endReason;
          // Captured before the read: when draining, the read that comes back empty is the last.
          const drainingNow = draining.signal.aborted;
          const step = await source.next(tail, scan, drainingNow);
          if (step) {
            for (const row of step.rows) {
              if (options.signal?.aborted) return;
              if (endReason) throw endReason;
              position = row.position;
              yield source.item(row, position);
            }
            if (step.rows.length > 0) lastSent = Date.now();
            scan = Math.max(scan, step.to);
            more = step.more;
          } else {
            more = false;
          }
          if (more) {
            // SQLite reads resolve at once: without a turn of the event loop, readers
            // catching up would run page after page as microtasks and starve every request.
            await new Promise<void>((resolve) => setImmediate(resolve));
            continue;
          }
          if (drainingNow) throw shuttingDown();
          if (Date.now() - lastSent >= keepAliveMs) {
            yield { kind: "keep_alive" };
            lastSent = Date.now();
          }
          await waiter.wait(Math.max(1, keepAliveMs - (Date.now() - lastSent)), signals);
        }
      } finally {
        clearInterval(watchdog);
        options.signal?.removeEventListener("abort", onAbort);
        waiter.close();
        leave(tenantId, tail);
        release();
        unlist();
      }
    }
    const generator = run();
    // A generator that is returned before it ever ran does not run its finally: release here too.
    const stop = generator.return.bind(generator);
    generator.return = (value) => {
      clearInterval(watchdog);
      release();
      unlist();
      return stop(value);
    };
    // Check once now: a token revoked while the stream was being opened ends it at once.
    await check();
    return generator;
  }

  return { listFeed, getEvent, openStream, openLive, drain };
}

export type Feed = ReturnType<typeof createFeed>;
