/**
 * The console's live views (docs/console.md): a first fill, then the feed's StreamFeed from the
 * position the fill started at, resumed from the last cursor after any end but a 401.
 *
 * Order of work: `ListFeed start=latest` names "now" as a cursor, then the view fills itself
 * (newest first, from the unary lists), then the stream runs from that cursor. An event
 * committed between the two is seen by both and merged by id; none can fall in between.
 *
 * A tab hidden past a short grace lets go of its streams and takes them back when shown again
 * (tab-visibility.ts): `attemptSignal` holds each loop's next attempt until then, and the attempt
 * that follows is the loop's usual one, as after any other end.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { useEffect, useRef, useState } from "preact/hooks";
import { FeedStart } from "../../gen/intake/v1/feed_pb.ts";
import type { Event } from "../../gen/intake/v1/ingest_pb.ts";
import { type ApiFailure, api, failureOf } from "./api.ts";
import { useSessionToken } from "./session.ts";
import { streamsHeld, whenShown } from "./tab-visibility.ts";

export type LiveState =
  | { kind: "connecting" }
  | { kind: "live" }
  | { kind: "paused" }
  | { kind: "reconnecting"; failure: ApiFailure }
  | { kind: "stopped"; failure: ApiFailure };

/** Reconnect delays: 1 s doubling to 30 s, each with jitter so many tabs do not return at once. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** A stream that stayed open this long was healthy: the next end starts the backoff again. */
export const HEALTHY_MS = 10_000;

/** The wait before reconnect number `failures` (0 first): half the ceiling plus jitter. */
export function backoffMs(failures: number): number {
  const ceiling = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** failures);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Ends that reconnecting cannot fix: the service was deleted, the request itself is refused. */
const FINAL = new Set([Code.NotFound, Code.InvalidArgument, Code.PermissionDenied]);

export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Called by a live loop (this one and incident-live.ts's) before each attempt at its stream.
 * While the tab holds its streams it returns at once; once the tab has let go of them (hidden
 * past the grace) it says `paused`, waits until the tab is shown again, and says `connecting`.
 * Returns the attempt's signal: the view's, aborted as well when the tab lets go of its streams
 * (the loop then goes round to wait here, with no backoff); `null` once the view has ended.
 */
export async function attemptSignal(
  view: AbortSignal,
  setState: (state: LiveState) => void,
): Promise<AbortSignal | null> {
  if (streamsHeld().aborted) {
    setState({ kind: "paused" });
    await whenShown(view);
    if (view.aborted) return null;
    setState({ kind: "connecting" });
  }
  return AbortSignal.any([view, streamsHeld()]);
}

/**
 * Keeps a view live while it is mounted: `fill` once (retried until it succeeds), then every
 * event after it through `onEvent`, oldest first. Restarts when the service or the token
 * changes; stops (aborting the stream) on unmount; pauses while the tab is hidden (past the
 * grace) and, shown again, fills again and streams from then. A 401 ends it: the api's
 * interceptor has already signed the tab out.
 */
export function useLiveFeed(
  serviceId: string | undefined,
  fill: (signal: AbortSignal) => Promise<void>,
  onEvent: (event: Event) => void,
): LiveState {
  const token = useSessionToken();
  const [state, setState] = useState<LiveState>({ kind: "connecting" });
  const fillRef = useRef(fill);
  const onEventRef = useRef(onEvent);
  fillRef.current = fill;
  onEventRef.current = onEvent;

  useEffect(() => {
    if (!token) return;
    const abort = new AbortController();
    const { signal } = abort;
    setState({ kind: "connecting" });
    void (async () => {
      let cursor: string | undefined;
      let failures = 0;
      while (!signal.aborted) {
        const attempt = await attemptSignal(signal, setState);
        if (!attempt) return;
        const opened = Date.now();
        try {
          if (cursor === undefined) {
            const now = await api.feed.listFeed({ start: FeedStart.LATEST, serviceId, limit: 1 }, { signal: attempt });
            await fillRef.current(attempt);
            cursor = now.nextCursor;
          }
          const stream = api.feed.streamFeed({ after: cursor, serviceId }, { signal: attempt });
          setState({ kind: "live" });
          for await (const message of stream) {
            cursor = message.cursor;
            failures = 0;
            if (message.event) onEventRef.current(message.event);
          }
          // A stream that ends without an error (a proxy's timeout, say) is resumed like a drain.
          throw new ConnectError("The live stream ended.", Code.Unavailable);
        } catch (error) {
          if (signal.aborted) return;
          // The tab let go of its streams: the next turn waits until it is shown again, then
          // fills again from "now" as on mount. These views show the newest events only, so
          // replaying all that arrived meanwhile (hours of a busy tenant's) would show nothing more.
          if (attempt.aborted) {
            cursor = undefined;
            continue;
          }
          const code = error instanceof ConnectError ? error.code : undefined;
          if (code === Code.Unauthenticated) return;
          if (code !== undefined && FINAL.has(code)) {
            setState({ kind: "stopped", failure: failureOf(error) });
            return;
          }
          if (Date.now() - opened >= HEALTHY_MS) failures = 0;
          setState({ kind: "reconnecting", failure: failureOf(error) });
        }
        await pause(backoffMs(failures++), signal);
      }
    })();
    return () => abort.abort();
  }, [serviceId, token]);

  return state;
}
