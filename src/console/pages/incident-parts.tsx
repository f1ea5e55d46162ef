/**
 * What the incident pages share (SPEC §17, §22): severity and status badges, the acknowledge and
 * resolve buttons with their confirmations, the incidents table, the live line, and the
 * tenant's service names.
 */
import { useCallback, useEffect, useId, useState } from "preact/hooks";
import type { Incident } from "../../../gen/intake/v1/incidents_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { type ConfirmOptions, ErrorNotice, Link, LiveStatus, Time, useConfirm } from "../components.tsx";
import type { LiveState } from "../live.ts";
import { allServices } from "../service-names.ts";

export function SeverityBadge({ severity }: { severity: string }) {
  return <span class={`badge severity-${severity}`}>{severity}</span>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

export function isOpen(incident: Incident): boolean {
  return incident.status === "triggered" || incident.status === "acknowledged";
}

/** The live line of a view fed by the incident change stream: one line on a 390 px phone, like "Connecting…", so nothing below moves when it goes live. */
export function IncidentLiveStatus({ state }: { state: LiveState }) {
  return <LiveStatus state={state} arriving="incident changes appear as they happen" />;
}

/** Every service's name by id, read once (ListServices, all pages); `undefined` until read. */
export function useServiceNames(): ReadonlyMap<string, string> | undefined {
  const [names, setNames] = useState<ReadonlyMap<string, string>>();
  useEffect(() => {
    const abort = new AbortController();
    allServices(abort.signal).then(
      (all) => !abort.signal.aborted && setNames(new Map(all.map((s) => [s.id, s.serviceName]))),
      // Names are a courtesy: without them the ids are shown.
      () => !abort.signal.aborted && setNames(new Map()),
    );
    return () => abort.abort();
  }, []);
  return names;
}

/**
 * Acknowledge (a triggered incident) and resolve (an open one), each after a confirmation;
 * `onChanged` gets the incident the server answered. A token that may not change anything sees
 * them disabled, described by the reason: `reasonId` names one shown for a whole table, else
 * the reason is shown here.
 */
export function IncidentActions(props: {
  incident: Incident;
  denied: string | null;
  reasonId?: string;
  onChanged: (incident: Incident) => void;
}) {
  const { incident, denied } = props;
  const ownReasonId = useId();
  const reasonId = props.reasonId ?? ownReasonId;
  const { ask, dialog } = useConfirm();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const act = useCallback(
    async (options: ConfirmOptions, call: () => Promise<{ incident?: Incident }>) => {
      if (!(await ask(options))) return;
      setBusy(true);
      setFailure(null);
      try {
        const res = await call();
        if (res.incident) props.onChanged(res.incident);
      } catch (error) {
        setFailure(failureOf(error));
      } finally {
        setBusy(false);
      }
    },
    [ask, props.onChanged],
  );
  if (!isOpen(incident)) return null;
  const id = incident.id;
  const control = {
    type: "button" as const,
    disabled: denied !== null || busy,
    "aria-describedby": denied ? reasonId : undefined,
    "aria-haspopup": "dialog" as const,
  };
  return (
    <div class="incident-actions">
      {incident.status === "triggered" && (
        <button
          {...control}
          onClick={() =>
            void act(
              {
                title: `Acknowledge “${incident.title}”?`,
                body: "Everyone sees that someone is on it. It stays open: its next alert events still join it.",
                confirmLabel: "Acknowledge",
              },
              () => api.incidents.acknowledgeIncident({ id }),
            )
          }
        >
          Acknowledge
        </button>
      )}
      <button
        {...control}
        class="danger"
        onClick={() =>
          void act(
            {
              title: `Resolve “${incident.title}”?`,
              body: (
                <p>
                  It closes for good: it cannot be reopened. The next trigger with the key{" "}
                  <code>{incident.dedupKey}</code> opens a new incident.
                </p>
              ),
              confirmLabel: "Resolve incident",
              danger: true,
            },
            () => api.incidents.resolveIncident({ id }),
          )
        }
      >
        Resolve
      </button>
      {denied && !props.reasonId && (
        <small id={ownReasonId} class="reason">
          {denied}
        </small>
      )}
      {dialog}
      <ErrorNotice failure={failure} />
    </div>
  );
}

/** Incidents as table rows (cards on a phone): severity, title (and when it opened), service, status, alerts, last alert, actions. */
export function IncidentTable(props: {
  incidents: Incident[];
  names: ReadonlyMap<string, string> | undefined;
  denied: string | null;
  onChanged: (incident: Incident) => void;
  caption: string;
  /** Leave the service column out (a service's own page). */
  hideService?: boolean;
  /** A list of resolved incidents: when each was resolved instead of the actions. */
  resolved?: boolean;
}) {
  const reasonId = useId();
  return (
    <>
      {props.denied && !props.resolved && (
        <p id={reasonId} class="reason">
          {props.denied}
        </p>
      )}
      <table class="incidents" aria-label={props.caption}>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Incident</th>
            {!props.hideService && <th scope="col">Service</th>}
            <th scope="col">Status</th>
            <th scope="col">Alerts</th>
            <th scope="col">Last alert</th>
            <th scope="col">{props.resolved ? "Resolved" : "Actions"}</th>
          </tr>
        </thead>
        <tbody>
          {props.incidents.map((incident) => (
            <tr key={incident.id} data-incident={incident.id}>
              <td data-label="Severity">
                <SeverityBadge severity={incident.severity} />
              </td>
              <td data-label="Incident">
                <div>
                  <Link to={`/incidents/${incident.id}`}>{incident.title}</Link>
                  <div class="meta">
                    {incident.source} · key <code>{incident.dedupKey}</code> · opened <Time at={incident.createdAt} />
                  </div>
                </div>
              </td>
              {!props.hideService && (
                <td data-label="Service">
                  <Link to={`/services/${incident.serviceId}`}>
                    {props.names?.get(incident.serviceId) ?? incident.serviceId}
                  </Link>
                </td>
              )}
              <td data-label="Status">
                <StatusBadge status={incident.status} />
              </td>
              <td data-label="Alerts">{String(incident.alertCount)}</td>
              <td data-label="Last alert">
                <Time at={incident.lastEventAt} />
              </td>
              {props.resolved ? (
                <td data-label="Resolved">
                  <Time at={incident.resolvedAt} />
                </td>
              ) : (
                <td data-label="Actions">
                  <IncidentActions
                    incident={incident}
                    denied={props.denied}
                    reasonId={reasonId}
                    onChanged={props.onChanged}
                  />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
