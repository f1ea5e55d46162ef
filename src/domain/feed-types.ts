/**
 * The feed's shapes (docs/feed.md), shared by the feed (feed.ts), its live readers
 * (feed-live.ts), the incident change stream (incident-handling.ts) and the adapters: a request,
 * a page, a stream's items, what a live stream reads, and the options of a read.
 */
import type { DomainError } from "./errors.ts";
import type { TenantTail } from "./feed-live.ts";
import type { EventRecord } from "./types.ts";

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
  /**
   * How long a long poll held its answer waiting for an event (0 for a plain read): not the
   * server's latency, so the request-duration series leaves it out (docs/operations.md).
   */
  heldMs: number;
}

export type StreamItem = { kind: "event"; item: FeedItem } | { kind: "keep_alive" };

/** What a live stream yields: its items (an event, an incident change), and keep-alives on idle. */
export type LiveItem<I> = I | { kind: "keep_alive" };

/**
 * What a live stream reads, past a position of the tenant's one order: the feed's events, or
 * the incident changes (domain/incident-handling.ts). `next` is given the tenant's shared tail
 * and whether to read for itself (draining); `item` is one row with its cursor.
 */
export interface LiveSource<R extends { position: number }, I> {
  next(tail: LiveTail, scan: number, own: boolean): Promise<LiveStep<R> | null>;
  item(row: R, position: number): I;
}

/** A live stream's read: `to` is where it has everything of its filter up to; `more`: read again at once. */
export interface LiveStep<R> {
  rows: R[];
  to: number;
  more: boolean;
}

/** The tenant's shared reads and wake-ups; a source that reads for itself ignores it. */
export type LiveTail = TenantTail;

export interface StreamOptions {
  /** The bearer token the stream was opened with, re-verified while it lasts. */
  credential: string;
  /** The caller went away. */
  signal?: AbortSignal | undefined;
  /**
   * Called once when the stream must end (token revoked or expired, service deleted) while the
   * transport may not be pulling: a reader that never reads would otherwise hold its
   * connection. The stream's slot and the `intake_feed_streams` gauge are released already.
   */
  onEnd?: ((reason: DomainError) => void) | undefined;
}

export interface ListOptions {
  /** The caller went away. */
  signal?: AbortSignal | undefined;
  /** The bearer token of the call: a long poll re-verifies it while it waits and before it answers. */
  credential?: string | undefined;
}
