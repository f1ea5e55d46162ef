/**
 * An incident's timeline, oldest first: its alert events (what senders posted), the changes
 * made by hand (the audit log's incident.acknowledge / incident.resolve, or, when the token may
 * not read the audit log, the incident's own `_by` fields), and an automatic resolve.
 */
import type { AuditEvent } from "../../../gen/intake/v1/audit_pb.ts";
import type { Incident } from "../../../gen/intake/v1/incidents_pb.ts";
import type { Event } from "../../../gen/intake/v1/ingest_pb.ts";
import { Id, Link, pretty, Time, toDate, type When } from "../components.tsx";
import { SeverityBadge } from "./incident-parts.tsx";

interface Alert {
  action: string;
  summary?: string;
  severity?: string;
  source?: string;
}

export type Entry =
  | { kind: "event"; at: number; event: Event; alert: Alert }
  | { kind: "manual"; at: number; action: "acknowledge" | "resolve"; tokenId: string | undefined; requestId?: string }
  | { kind: "auto"; at: number };

const utf8 = new TextDecoder();

function alertOf(event: Event): Alert {
  try {
    const body = JSON.parse(utf8.decode(event.payload)) as {
      event_action?: unknown;
      payload?: { summary?: unknown; severity?: unknown; source?: unknown };
    };
    const text = (v: unknown) => (typeof v === "string" ? v : undefined);
    return {
      action: text(body.event_action) ?? "event",
      summary: text(body.payload?.summary),
      severity: text(body.payload?.severity),
      source: text(body.payload?.source),
    };
  } catch {
    return { action: "event" };
  }
}

const ms = (at: When) => toDate(at)?.getTime() ?? 0;

/**
 * The entries of `incident`'s timeline; `audit` null: the manual changes from its record. While
 * later alert events are still unread (`complete` false), nothing after the last read one is
 * shown, so no change appears before events that preceded it.
 */
export function timelineOf(
  incident: Incident,
  events: Event[],
  audit: AuditEvent[] | null,
  complete: boolean,
): Entry[] {
  const entries: Entry[] = events.map((event) => ({
    kind: "event",
    at: ms(event.receivedAt),
    event,
    alert: alertOf(event),
  }));
  if (audit) {
    // The audit log reads newest first: reversed, changes at one instant keep their order.
    for (const a of [...audit].reverse()) {
      const action =
        a.action === "incident.acknowledge" ? "acknowledge" : a.action === "incident.resolve" ? "resolve" : null;
      if (action)
        entries.push({ kind: "manual", at: ms(a.occurredAt), action, tokenId: a.actor?.id, requestId: a.requestId });
    }
  } else {
    const byHand = (action: "acknowledge" | "resolve", at: When, actor: Incident["acknowledgedBy"]) => {
      if (actor?.type === "api_token") entries.push({ kind: "manual", at: ms(at), action, tokenId: actor.id });
    };
    byHand("acknowledge", incident.acknowledgedAt, incident.acknowledgedBy);
    byHand("resolve", incident.resolvedAt, incident.resolvedBy);
  }
  if (incident.resolvedBy?.type === "auto") entries.push({ kind: "auto", at: ms(incident.resolvedAt) });
  // Stable: at one instant, the event that caused a change stays before it.
  const sorted = entries.sort((a, b) => a.at - b.at);
  const last = events[events.length - 1];
  return complete || !last ? sorted : sorted.filter((e) => e.at <= ms(last.receivedAt));
}

const ACTION_LABEL: Record<string, string> = {
  trigger: "Trigger",
  acknowledge: "Acknowledge",
  resolve: "Resolve",
};

export function Timeline(props: {
  entries: Entry[];
  tokenNames: ReadonlyMap<string, string>;
  more: boolean;
  onMore: () => void;
}) {
  const firstEvent = props.entries.find((e) => e.kind === "event");
  return (
    <>
      <ol class="timeline">
        {props.entries.map((entry) => {
          if (entry.kind === "event") {
            const { alert, event } = entry;
            return (
              <li key={event.id} class={`tl-${alert.action}`}>
                <p class="tl-head">
                  <Time at={event.receivedAt} />{" "}
                  <strong>
                    {ACTION_LABEL[alert.action] ?? alert.action}
                    {entry === firstEvent && alert.action === "trigger" && " — opened the incident"}
                  </strong>
                  {alert.severity && (
                    <>
                      {" "}
                      <SeverityBadge severity={alert.severity} />
                    </>
                  )}
                </p>
                {alert.summary && <p class="tl-summary">{alert.summary}</p>}
                <p class="meta">
                  alert event <Link to={`/events/${event.id}`}>{event.id}</Link>
                  {alert.source && <> · from {alert.source}</>}
                </p>
                <details>
                  <summary>Payload</summary>
                  <pre>{pretty(event.payload)}</pre>
                </details>
              </li>
            );
          }
          if (entry.kind === "manual") {
            const name = entry.tokenId ? props.tokenNames.get(entry.tokenId) : undefined;
            return (
              <li key={`${entry.action}-${entry.at}`} class={`tl-${entry.action}`}>
                <p class="tl-head">
                  <Time at={entry.at} />{" "}
                  <strong>{entry.action === "acknowledge" ? "Acknowledged" : "Resolved"} by hand</strong>
                </p>
                <p class="meta">
                  by token {name && <strong>{name}</strong>}{" "}
                  {entry.tokenId && <Id value={entry.tokenId} label="token id" />}
                  {entry.requestId && (
                    <>
                      {" "}
                      · request <code>{entry.requestId}</code>
                    </>
                  )}
                </p>
              </li>
            );
          }
          return (
            <li key="auto" class="tl-resolve">
              <p class="tl-head">
                <Time at={entry.at} /> <strong>Resolved automatically</strong>
              </p>
              <p class="meta">No alert event came for the service's auto-resolve period.</p>
            </li>
          );
        })}
      </ol>
      {props.more && (
        <button type="button" onClick={props.onMore}>
          Show later alert events
        </button>
      )}
    </>
  );
}
