/**
 * The console's live incident views (docs/console.md, "Live incidents"): the incident change
 * stream `GET /v1/incidents/stream` (SSE, SPEC §17) read with `fetch`, so the token travels in
 * the `Authorization` header as for every call (an `EventSource` cannot send it, and a token is
 * never put in a URL), parsed by `eventsource-parser`.
 *
 * Order of work: the stream is opened first (`start=latest`); the server fixes its starting
 * position before it answers 200, so the view fills itself (the unary lists) only once the
 * response has arrived. A change committed after that position is streamed; one committed
 * before it is in the fill; one in both is merged by `notOlder` (incident-order.ts), which
 * keeps the later of two snapshots of an incident. None can fall in between. After any end but a 401 or a
 * final refusal the stream resumes from the last change's cursor (`after`). A tab hidden past
 * the grace lets go of the stream and, shown again, takes that same path (`attemptSignal`).
 */
import { fromJson } from "@bufbuild/protobuf";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { useEffect, useRef, useState } from "preact/hooks";
import { type Incident, IncidentSchema } from "../../gen/intake/v1/incidents_pb.ts";
import { type ApiFailure, failureOf } from "./api.ts";
import { attemptSignal, backoffMs, HEALTHY_MS, type LiveState, pause } from "./live.ts";
import { session, useSessionToken } from "./session.ts";

export type IncidentChange = "opened" | "acknowledged" | "resolved" | "severity_raised";

/** A failure the stream cannot recover from by reconnecting (401s are handled apart). */
class StreamEnd extends Error {
  constructor(
    readonly failure: ApiFailure,
    readonly status: number,
  ) {
    super(failure.message);
  }
}

/** REST statuses (and end codes) reconnecting cannot fix: refused request, unknown service. */
const FINAL_STATUS = new Set([400, 403, 404]);
const FINAL_CODE = new Set(["not_found", "invalid_request", "token_scope_insufficient"]);
const SIGNED_OUT = new Set(["missing_credentials", "invalid_credentials"]);

async function refusal(res: Response): Promise<StreamEnd> {
  const requestId = res.headers.get("x-request-id");
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    return new StreamEnd(
      { code: body.error?.code ?? "http_error", message: body.error?.message ?? res.statusText, requestId },
      res.status,
    );
  } catch {
    return new StreamEnd({ code: "http_error", message: `The stream answered ${res.status}.`, requestId }, res.status);
  }
}

/**
 * Keeps a view live while mounted: `fill` once the stream is open (and again after a resume
 * that has no cursor yet), then every change through `onChange`, in the tenant's order.
 * Restarts when the service filter or the token changes; a 401 signs the tab out, saying why.
 */
export function useIncidentChanges(
  serviceId: string | undefined,
  fill: (signal: AbortSignal) => Promise<void>,
  onChange: (change: IncidentChange, incident: Incident) => void,
): LiveState {
  const token = useSessionToken();
  const [state, setState] = useState<LiveState>({ kind: "connecting" });
  const fillRef = useRef(fill);
  const onChangeRef = useRef(onChange);
  fillRef.current = fill;
  onChangeRef.current = onChange;

  useEffect(() => {
    if (!token) return;
    const abort = new AbortController();
    const { signal } = abort;
    setState({ kind: "connecting" });
    const signOut = (message: string) => {
      if (session.token() === token) session.signOut(`Signed out: ${message}`);
    };
    void (async () => {
      let cursor: string | undefined;
      let failures = 0;
      while (!signal.aborted) {
        const attempt = await attemptSignal(signal, setState);
        if (!attempt) return;
        const opened = Date.now();
        // Whatever ends this attempt (a failed fill, an `end` message) lets go of the response.
        let body: ReadableStream<Uint8Array> | ReadableStreamDefaultReader<unknown> | null = null;
        try {
          const query = new URLSearchParams(cursor === undefined ? { start: "latest" } : { after: cursor });
          if (serviceId) query.set("service_id", serviceId);
          const res = await fetch(`/v1/incidents/stream?${query}`, {
            headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
            signal: attempt,
            // Open for the life of the view: low priority, as api.ts sends the Connect streams.
            priority: "low",
          });
          if (!res.ok || !res.body) throw await refusal(res);
          body = res.body;
          if (cursor === undefined) await fillRef.current(attempt);
          setState({ kind: "live" });
          const reader = res.body
            .pipeThrough(new TextDecoderStream())
            .pipeThrough(new EventSourceParserStream())
            .getReader();
          body = reader;
          for (let next = await reader.read(); !next.done; next = await reader.read()) {
            const message = next.value;
            if (message.event === "end") {
              const { error } = JSON.parse(message.data) as { error: { code: string; message: string } };
              throw new StreamEnd({ code: error.code, message: error.message, requestId: null }, 0);
            }
            if (message.event !== "incident") continue;
            const data = JSON.parse(message.data) as { change: IncidentChange; incident: unknown };
            onChangeRef.current(
              data.change,
              fromJson(IncidentSchema, data.incident as never, { ignoreUnknownFields: true }),
            );
            // Only a change the view took moves the cursor: a resume re-reads one it could not.
            if (message.id) cursor = message.id;
            failures = 0;
          }
          throw new StreamEnd({ code: "unavailable", message: "The live stream ended.", requestId: null }, 0);
        } catch (error) {
          body?.cancel().catch(() => undefined);
          if (signal.aborted) return;
          // The tab let go of its streams: the next turn waits until it is shown again.
          if (attempt.aborted) continue;
          // Anything else: the network, or a fill's call (whose 401 the api has already handled).
          const end = error instanceof StreamEnd ? error : new StreamEnd(failureOf(error), 0);
          if (end.status === 401 || SIGNED_OUT.has(end.failure.code)) {
            signOut(end.failure.message);
            return;
          }
          if (FINAL_STATUS.has(end.status) || FINAL_CODE.has(end.failure.code)) {
            setState({ kind: "stopped", failure: end.failure });
            return;
          }
          if (Date.now() - opened >= HEALTHY_MS) failures = 0;
          setState({ kind: "reconnecting", failure: end.failure });
        }
        await pause(backoffMs(failures++), signal);
      }
    })();
    return () => abort.abort();
  }, [serviceId, token]);

  return state;
}
