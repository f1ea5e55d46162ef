/**
 * The console's live views (docs/console.md): a first fill, then the feed's StreamFeed from the
 * position the fill started at, resumed from the last cursor after any end but a 401.
 *
 * Order of work: `ListFeed start=latest` names "now" as a cursor, then the view fills itself
 * (newest first, from the unary lists), then the stream runs from that cursor. An event
 * committed between the two is seen by both and merged by id; none can fall in between.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { useEffect, useRef, useState } from "preact/hooks";
import { FeedStart } from "../../gen/intake/v1/feed_pb.ts";
import type { Event } from "../../gen/intake/v1/ingest_pb.ts";
import { type ApiFailure, api, failureOf } from "./api.ts";
import { useSessionToken } from "./session.ts";

export type LiveState =
  | { kind: "connecting" }
  | { kind: "live" }
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
 * Keeps a view live while it is mounted: `fill` once (retried until it succeeds), then every
 * event after it through `onEvent`, oldest first. Restarts when the service or the token
 * changes; stops (aborting the stream) on unmount. A 401 ends it: the api's interceptor has
 * already signed the tab out.
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
        const opened = Date.now();
        try {
          if (cursor === undefined) {
            const now = await api.feed.listFeed({ start: FeedStart.LATEST, serviceId, limit: 1 }, { signal });
            await fillRef.current(signal);
            cursor = now.nextCursor;
          }
          const stream = api.feed.streamFeed({ after: cursor, serviceId }, { signal });
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
