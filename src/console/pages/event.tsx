/**
 * One event (`/console/events/evt_…`, SPEC §22): its payload pretty-printed, copy buttons for the
 * id and the payload (the exact text received, as a replay or a signature check needs it), and
 * links to its service, its incident (§17) and the explorer narrowed to its service or type.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { useEffect, useState } from "preact/hooks";
import type { Event } from "../../../gen/intake/v1/ingest_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice, pretty } from "../components.tsx";
import { explorerPath, typeLabel } from "../event-query.ts";
import { CopyButton, Id } from "../ui/copy.tsx";
import { Link, Loading, NotFound } from "../ui/states.tsx";
import { Time } from "../ui/time.tsx";

const utf8 = new TextDecoder();

type State =
  | { kind: "loading" }
  | { kind: "found"; event: Event; serviceName: string | null }
  | { kind: "missing" }
  | { kind: "failed"; failure: ApiFailure };

export function EventPage({ id }: { id: string }) {
  const [state, setState] = useState<State>({ kind: "loading" });
  useEffect(() => {
    const abort = new AbortController();
    const signal = abort.signal;
    (async () => {
      const { event } = await api.ingest.getEvent({ id }, { signal });
      if (!event) return setState({ kind: "missing" });
      // The name is a nicety: the event is shown without it if its service cannot be read.
      const service = await api.services.getService({ id: event.serviceId }, { signal }).catch(() => null);
      setState({ kind: "found", event, serviceName: service?.service?.serviceName ?? null });
    })().catch((error) => {
      if (signal.aborted) return;
      if (error instanceof ConnectError && error.code === Code.NotFound) setState({ kind: "missing" });
      else setState({ kind: "failed", failure: failureOf(error) });
    });
    return () => abort.abort();
  }, [id]);

  if (state.kind === "missing") {
    return (
      <NotFound title="Event not found" back={{ to: "/events", label: "Find events" }}>
        <p>
          There is no event <code>{id}</code> in this tenant. It may have been deleted with its service, or by
          retention.
        </p>
      </NotFound>
    );
  }
  if (state.kind !== "found") {
    return (
      <main>
        <h1>Event</h1>
        {state.kind === "loading" ? <Loading label="Loading the event…" /> : <ErrorNotice failure={state.failure} />}
      </main>
    );
  }
  const { event, serviceName } = state;
  const raw = utf8.decode(event.payload);
  return (
    <main>
      <p class="meta">
        <Link to="/events">Events</Link> ›
      </p>
      <h1>{typeLabel(event) ?? "Event"}</h1>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <Id value={event.id} label="event id" />
        </dd>
        <dt>Service</dt>
        <dd>
          <Link to={`/services/${event.serviceId}`}>{serviceName ?? event.serviceId}</Link>
          {" · "}
          <Link to={explorerPath({ service_id: event.serviceId })}>its events</Link>
        </dd>
        <dt>Received</dt>
        <dd>
          <Time at={event.receivedAt} />
        </dd>
        <dt>Type</dt>
        <dd>
          {event.type ? (
            <>
              <code>{event.type}</code> · <Link to={explorerPath({ type: event.type })}>events of this type</Link>
            </>
          ) : (
            `none (the payload has no top-level string "type")${typeLabel(event) ? "; an alert event (its event_action)" : ""}`
          )}
        </dd>
        <dt>Idempotency key</dt>
        <dd>{event.idempotencyKey ? <code>{event.idempotencyKey}</code> : "none"}</dd>
        <dt>Incident</dt>
        <dd>{event.incidentId ? <Link to={`/incidents/${event.incidentId}`}>{event.incidentId}</Link> : "none"}</dd>
      </dl>
      <div class="row heading-row">
        <h2>Payload</h2>
        <CopyButton text={raw} label="payload" />
      </div>
      <p class="meta">
        Pretty-printed here; the copy is the exact text received ({event.payload.length.toLocaleString()} bytes).
      </p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls sideways must take the focus, or the keyboard cannot scroll it (axe scrollable-region-focusable) */}
      <pre class="payload" tabIndex={0}>
        {pretty(event.payload)}
      </pre>
    </main>
  );
}
