/**
 * One incident (SPEC §22): what it is, acknowledge / resolve after a confirmation, and its
 * timeline — the alert events that touched it (ListIncidentEvents, oldest first) and the
 * changes made by hand (the audit log, `target_id` = the incident), with an automatic resolve
 * from the incident's own record. Live: the incident change stream moves its status, and the
 * service's feed adds each new alert event of this incident to the timeline as it arrives.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { AuditEvent } from "../../../gen/intake/v1/audit_pb.ts";
import type { Incident } from "../../../gen/intake/v1/incidents_pb.ts";
import type { Event } from "../../../gen/intake/v1/ingest_pb.ts";
import { type ApiFailure, api, failureOf, readAll } from "../api.ts";
import { ErrorNotice, Id, Link, Loading, NotFound, Time } from "../components.tsx";
import { cannotChange, cannotReadAudit, type Identity } from "../identity.ts";
import { useIncidentChanges } from "../incident-live.ts";
import { notOlder } from "../incident-order.ts";
import { useLiveFeed } from "../live.ts";
import { IncidentActions, IncidentLiveStatus, SeverityBadge, StatusBadge } from "./incident-parts.tsx";
import { type Entry, Timeline, timelineOf } from "./incident-timeline.tsx";
import { incidentsPath } from "./incidents.tsx";

const EVENTS_PAGE = 100;

export function IncidentPage({ id, identity }: { id: string; identity: Identity | null }) {
  const [incident, setIncident] = useState<Incident | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [missing, setMissing] = useState(false);

  useEffect(() => {
    const abort = new AbortController();
    api.incidents.getIncident({ id }, { signal: abort.signal }).then(
      (res) => setIncident(res.incident ?? null),
      (error: unknown) => {
        if (abort.signal.aborted) return;
        if (error instanceof ConnectError && error.code === Code.NotFound) setMissing(true);
        else setFailure(failureOf(error));
      },
    );
    return () => abort.abort();
  }, [id]);

  if (missing) {
    return (
      <NotFound title="Incident not found" back={{ to: "/incidents", label: "See every incident" }}>
        <p>
          There is no incident <code>{id}</code> in this tenant: its service may have been deleted, or retention removed
          it after it was resolved.
        </p>
      </NotFound>
    );
  }
  if (!incident) {
    return (
      <main>
        <h1>Incident</h1>
        <ErrorNotice failure={failure} />
        {!failure && <Loading label="Loading the incident…" />}
      </main>
    );
  }
  return <IncidentView first={incident} identity={identity} />;
}

function IncidentView({ first, identity }: { first: Incident; identity: Identity | null }) {
  const [incident, setIncident] = useState(first);
  // undefined while it loads ("…", one short line: the page below does not move when it comes), null if unknown.
  const [serviceName, setServiceName] = useState<string | null | undefined>(undefined);
  const [events, setEvents] = useState<Event[] | null>(null);
  const [eventsCursor, setEventsCursor] = useState<string | undefined>(undefined);
  const cursorRef = useRef<string | undefined>(undefined);
  cursorRef.current = eventsCursor;
  const [audit, setAudit] = useState<AuditEvent[] | null>(null);
  const [tokenNames, setTokenNames] = useState<ReadonlyMap<string, string>>(new Map());
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const { id, serviceId } = first;
  const auditDenied = cannotReadAudit(identity);

  const update = useCallback((next: Incident) => {
    setIncident((old) => (next.id === old.id && notOlder(old, next) ? next : old));
  }, []);

  useEffect(() => {
    api.services.getService({ id: serviceId }).then(
      (res) => setServiceName(res.service?.serviceName ?? null),
      () => setServiceName(null),
    );
    void (async () => {
      try {
        const tokens = await readAll((cursor) =>
          api.tokens.listApiTokens({ limit: 100, cursor, includeRevoked: true }),
        );
        setTokenNames(new Map(tokens.map((t) => [t.id, t.name])));
      } catch {
        // The names are a courtesy: the ids stay.
      }
    })();
  }, [serviceId]);

  /** The manual changes: every audit event of this incident (a handful: two at most that change it). */
  const loadAudit = useCallback(
    async (signal?: AbortSignal) => {
      if (auditDenied) return;
      let all: AuditEvent[];
      try {
        all = await readAll((cursor) => api.audit.listAuditEvents({ targetId: id, limit: 100, cursor }, { signal }));
      } catch (error) {
        // A member token of a role_based tenant: the incident's own record tells the changes.
        if (error instanceof ConnectError && error.code === Code.PermissionDenied) return;
        throw error;
      }
      setAudit(all);
    },
    [id, auditDenied],
  );

  // The status, live: its changes (acknowledged, resolved, severity raised), from any tab or sender.
  const live = useIncidentChanges(
    serviceId,
    async (signal) => {
      const res = await api.incidents.getIncident({ id }, { signal });
      if (res.incident) update(res.incident);
      // An abort (the page left, the tab hidden past the grace) is no failure to show.
      await loadAudit(signal).catch((error: unknown) => !signal.aborted && setFailure(failureOf(error)));
    },
    (change, next) => {
      if (next.id !== id) return;
      update(next);
      if (change === "acknowledged" || change === "resolved") void loadAudit().catch(() => undefined);
    },
  );

  // The timeline's alert events, live: the first page, then this incident's new events from the
  // service's feed (an alert event that joins an incident is not an incident change).
  useLiveFeed(
    serviceId,
    async (signal) => {
      const res = await api.incidents.listIncidentEvents({ id, limit: EVENTS_PAGE }, { signal });
      setEvents(res.data);
      setEventsCursor(res.nextCursor);
    },
    (event) => {
      if (event.incidentId !== id) return;
      // Appended only when the timeline is read to its end; else it comes with "Show later".
      if (cursorRef.current !== undefined) return;
      setEvents((old) => (old === null || old.some((e) => e.id === event.id) ? old : [...old, event]));
      void api.incidents.getIncident({ id }).then(
        (res) => res.incident && update(res.incident),
        () => undefined,
      );
    },
  );

  const later = async () => {
    try {
      const res = await api.incidents.listIncidentEvents({ id, limit: EVENTS_PAGE, cursor: eventsCursor });
      setEvents((old) => {
        const have = new Set((old ?? []).map((e) => e.id));
        return [...(old ?? []), ...res.data.filter((e) => !have.has(e.id))];
      });
      setEventsCursor(res.nextCursor);
    } catch (error) {
      setFailure(failureOf(error));
    }
  };

  const entries: Entry[] | null = events && timelineOf(incident, events, audit, eventsCursor === undefined);
  return (
    <main>
      <p class="meta">
        <Link to="/incidents">Incidents</Link> ›
      </p>
      <h1>{incident.title}</h1>
      <p class="incident-badges">
        <SeverityBadge severity={incident.severity} /> <StatusBadge status={incident.status} />
      </p>
      <IncidentActions
        incident={incident}
        denied={cannotChange(identity)}
        onChanged={(next) => {
          update(next);
          // Its own change is in the timeline at once, whether or not the stream is live.
          void loadAudit().catch(() => undefined);
        }}
      />
      <IncidentLiveStatus state={live} />
      {live.kind === "stopped" && <ErrorNotice failure={live.failure} />}
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <Id value={incident.id} label="incident id" />
        </dd>
        <dt>Service</dt>
        <dd>
          <Link to={`/services/${serviceId}`}>{serviceName === undefined ? "…" : (serviceName ?? serviceId)}</Link>
          {" · "}
          <Link to={incidentsPath({ serviceId })}>its incidents</Link>
        </dd>
        <dt>Dedup key</dt>
        <dd>
          <Id value={incident.dedupKey} label="dedup key" />
        </dd>
        <dt>Source</dt>
        <dd>{incident.source}</dd>
        <dt>Alert events</dt>
        <dd>{String(incident.alertCount)}</dd>
        <dt>Opened</dt>
        <dd>
          <Time at={incident.createdAt} />
        </dd>
        <dt>Last alert event</dt>
        <dd>
          <Time at={incident.lastEventAt} />
        </dd>
        {incident.acknowledgedAt && (
          <>
            <dt>Acknowledged</dt>
            <dd>
              <Time at={incident.acknowledgedAt} /> <By actor={incident.acknowledgedBy} tokenNames={tokenNames} />
            </dd>
          </>
        )}
        {incident.resolvedAt && (
          <>
            <dt>Resolved</dt>
            <dd>
              <Time at={incident.resolvedAt} /> <By actor={incident.resolvedBy} tokenNames={tokenNames} />
            </dd>
          </>
        )}
      </dl>

      <h2>Timeline</h2>
      <p class="meta">
        Oldest first: the alert events that touched it and the changes made by hand.
        {auditDenied &&
          " The manual changes come from the incident's own record: this token may not read the audit log."}
      </p>
      <ErrorNotice failure={failure} />
      {entries === null ? (
        <Loading label="Loading the timeline…" />
      ) : (
        <Timeline entries={entries} tokenNames={tokenNames} more={eventsCursor !== undefined} onMore={later} />
      )}
    </main>
  );
}

/** Who acknowledged or resolved it: an alert event, a token (by name), or auto-resolve. */
export function By(props: { actor: Incident["acknowledgedBy"]; tokenNames: ReadonlyMap<string, string> }) {
  const { actor } = props;
  if (!actor) return null;
  if (actor.type === "auto") return <span>automatically (the service's auto-resolve)</span>;
  if (actor.type === "api_token" && actor.id) {
    const name = props.tokenNames.get(actor.id);
    return (
      <span>
        by token {name && <strong>{name}</strong>} <code>{actor.id}</code>
      </span>
    );
  }
  if (actor.type === "event" && actor.id) {
    return (
      <span>
        by alert event <Link to={`/events/${actor.id}`}>{actor.id}</Link>
      </span>
    );
  }
  return <span>by {actor.type}</span>;
}
