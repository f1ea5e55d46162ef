/**
 * Feed wake-ups across instances over PostgreSQL LISTEN/NOTIFY (PostgreSQL without REDIS_URL).
 * Its own small client: LISTEN holds a dedicated connection. Best effort like the Redis one:
 * readers re-read the store on a timer too (docs/feed.md).
 *
 * NOTIFYs are spaced (docs/feed.md, "Live delivery and wake-ups"): a NOTIFY is a transaction of
 * its own on the server (a transaction id, the database-wide notification lock at commit, a
 * signal to every listening session, this instance's own included), and one per committed
 * ingest batch doubled the transactions an ingest load commits, costing CPU on both sides
 * (the benchmark's scenario 4, signed ingest on PostgreSQL). A NOTIFY returns long before the next batch commits, so
 * merging only what commits while one is in flight merges nothing: at most one is in flight,
 * and the next goes no sooner than NOTIFY_SPACING_MS after the previous one, carrying the
 * tenants of every batch committed meanwhile. The first after a quiet spell goes at once; under
 * sustained ingest a wake-up on another instance waits at most that much longer. This
 * instance's own readers are woken at once, whatever the spacing.
 */
import { randomUUID } from "node:crypto";
import { SQL as BunSQL } from "bun";
import type { FeedNotifier } from "../domain/ports/notifier.ts";
import type { Logger } from "../logger.ts";
import { createLocalWakeups, parseWakeMessage } from "./local.ts";

const CHANNEL = "intake_feed";
const WARN_INTERVAL_MS = 10_000;
// A NOTIFY payload is at most 8000 bytes: 150 tenant ids (37 bytes each as JSON) fit.
const TENANTS_PER_NOTIFY = 150;
/** Exported for the tests. Far inside the cross-instance delivery bound of docs/feed.md. */
export const NOTIFY_SPACING_MS = 20;
/**
 * How long close() lets what is pending go out. Bounded: with the database unreachable (a
 * silently dropped network) a NOTIFY never answers, and a drain must still end (the wake-ups
 * are best effort; readers re-read on their timer).
 */
const CLOSE_FLUSH_MS = 1_000;

export async function createPostgresNotifier(options: { url: string; logger: Logger }): Promise<FeedNotifier> {
  const { logger } = options;
  const self = randomUUID();
  const local = createLocalWakeups();
  const client = new BunSQL(options.url, { max: 2, connection: { application_name: "intake-feed-notifier" } });
  let lastWarn = 0;
  const warn = (what: string, error: unknown) => {
    const now = Date.now();
    if (now - lastWarn < WARN_INTERVAL_MS) return;
    lastWarn = now;
    logger.warn("feed notifier: LISTEN/NOTIFY unavailable; readers fall back to their timed re-reads", {
      what,
      error: error instanceof Error ? error.message : String(error),
    });
  };
  let subscription: Awaited<ReturnType<BunSQL["listen"]>> | null = null;
  try {
    subscription = await client.listen(
      CHANNEL,
      (text) => {
        const message = parseWakeMessage(text);
        if (message && message.from !== self) local.fire(message.tenants);
      },
      // Initially and after every reconnect: what was sent meanwhile is lost, so wake all.
      () => local.fireAll(),
    );
  } catch (error) {
    warn("listen", error);
  }

  // Tenants published since the last NOTIFY went out.
  const pending = new Set<string>();
  let inFlight: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let lastSentAt = Number.NEGATIVE_INFINITY;

  let closing = false;

  /** Sends what is pending now, or arms the timer for when the spacing allows. */
  function schedule(): void {
    if (inFlight !== null || timer !== null || pending.size === 0) return;
    if (closing) return;
    const wait = lastSentAt + NOTIFY_SPACING_MS - performance.now();
    if (wait <= 0) {
      inFlight = send();
      return;
    }
    timer = setTimeout(() => {
      timer = null;
      schedule();
    }, wait);
  }

  async function send(): Promise<void> {
    lastSentAt = performance.now();
    const tenants = [...pending];
    pending.clear();
    for (let i = 0; i < tenants.length; i += TENANTS_PER_NOTIFY) {
      const message = JSON.stringify({ from: self, tenants: tenants.slice(i, i + TENANTS_PER_NOTIFY) });
      try {
        await client.notify(CHANNEL, message);
      } catch (error) {
        warn("notify", error);
      }
    }
    inFlight = null;
    schedule();
  }

  return {
    kind: "postgres",
    publish(tenantIds) {
      local.fire(tenantIds);
      for (const tenantId of tenantIds) pending.add(tenantId);
      schedule();
    },
    subscribe: (tenantId, wake) => local.subscribe(tenantId, wake),
    subscribeAll: (wake) => local.subscribeAll(wake),
    async close() {
      // What is still pending goes out now rather than after the spacing, for at most
      // CLOSE_FLUSH_MS; then nothing more is sent.
      const flush = async () => {
        for (;;) {
          if (timer !== null) clearTimeout(timer);
          timer = null;
          if (inFlight !== null) await inFlight;
          else if (pending.size > 0 && !closing) {
            lastSentAt = Number.NEGATIVE_INFINITY;
            schedule();
          } else break;
        }
      };
      let expired: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([flush(), new Promise<void>((resolve) => (expired = setTimeout(resolve, CLOSE_FLUSH_MS)))]);
      clearTimeout(expired);
      closing = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await subscription?.unlisten().catch(() => undefined);
      // At once: an unanswered NOTIFY would otherwise hold close() (Bun's SQL waits for every
      // running query unless told a timeout); it rejects, and send() only warns.
      await client.close({ timeout: 0 }).catch(() => undefined);
    },
  };
}
