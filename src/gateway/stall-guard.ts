/**
 * Tearing down a streamed answer on the main port whose reader stopped reading (SPEC §10: a
 * stream ends, its connection closed, within 1 s of its token's revoke or expiry).
 *
 * Under `Bun.serve`, a body whose write is parked on a full socket cannot be ended: closing or
 * erroring a default `ReadableStream` waits for the socket to drain, and `server.timeout` only
 * acts seconds later and leaves the socket open behind its unsent bytes. A `type: "direct"`
 * body closed with an error is the one way out: Bun drops what it buffered and resets the
 * connection at once (docs/feed.md, "A stalled reader"; test/support/stalled-reader-repro.ts
 * shows each way tried). So the answer's bytes pass through a direct body that writes them as
 * the socket takes them (back-pressure unchanged: the source is read only once the previous
 * write drained), and `endSoon` — called by the feed when a stream must end — resets the
 * connection unless the answer was flushed to its end within the grace, as the gRPC port
 * resets its HTTP/2 stream (rpc/grpc-server.ts).
 */
import { STALLED_END_GRACE_MS } from "../rpc/grpc-server.ts";

/** Why a connection is reset: Bun prints it to stderr in development mode only (serve.ts runs without). */
const RESET_REASON = "intake: a stream that had to end was not read; its connection is reset (docs/feed.md)";

export interface StallGuard {
  /** The stream must end: unless its answer is flushed to the end within the grace, reset the connection. */
  endSoon(): void;
  /** The answer's body: `source`'s bytes, written as the socket takes them. */
  body(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array>;
}

export function stallGuard(graceMs: number = STALLED_END_GRACE_MS): StallGuard {
  let sink: ReadableStreamDirectController | undefined;
  let reader: { cancel(reason?: unknown): Promise<void> } | undefined;
  /** Flushed to its end, reset, or its client gone: nothing more to do. */
  let settled = false;
  /** Reset before the body started (the handler had not answered yet). */
  let resetPending = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const reset = () => {
    if (settled) return;
    settled = true;
    if (sink) sink.close(new Error(RESET_REASON));
    else resetPending = true;
    reader?.cancel().catch(() => {});
  };

  return {
    endSoon() {
      if (settled || timer !== undefined) return;
      timer = setTimeout(reset, graceMs);
      timer.unref?.();
    },
    body(source) {
      return new ReadableStream<Uint8Array>({
        type: "direct",
        async pull(controller) {
          sink = controller;
          if (resetPending) {
            controller.close(new Error(RESET_REASON));
            await source.cancel().catch(() => {});
            return;
          }
          const from = source.getReader();
          reader = from;
          try {
            for (;;) {
              const next = await from.read();
              if (settled) return;
              if (next.done) break;
              let wrote = controller.write(next.value);
              // Back-pressure: the next chunk is read only once the socket took this one.
              if (typeof wrote !== "number") wrote = await wrote;
              if (settled) return;
              // 0 for a non-empty chunk: the client went away.
              if (wrote === 0 && next.value.byteLength > 0) {
                settled = true;
                await from.cancel().catch(() => {});
                return;
              }
            }
            // The last bytes out before the answer counts as flushed; a reset may still overtake them.
            const drained = controller.flush(true);
            if (typeof drained !== "number") await drained;
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            controller.close();
          } catch (error) {
            // A failing source: the answer cannot be completed, so its connection is reset.
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            controller.close(error instanceof Error ? error : new Error(RESET_REASON));
          }
        },
        cancel(reason) {
          settled = true;
          clearTimeout(timer);
          return (reader ?? source).cancel(reason).catch(() => {});
        },
      });
    },
  };
}
