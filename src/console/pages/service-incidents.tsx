/**
 * The service page's incidents section (SPEC §22): its open incidents, live, and its
 * auto-resolve setting (`incident_auto_resolve_seconds`, §17: never, or 60 s .. 30 days).
 */
import { useCallback, useMemo, useState } from "preact/hooks";
import type { Incident } from "../../../gen/intake/v1/incidents_pb.ts";
import type { Service } from "../../../gen/intake/v1/services_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { Action, Empty, ErrorNotice, Link, Loading } from "../components.tsx";
import { useIncidentChanges } from "../incident-live.ts";
import { placeIncident } from "../incident-order.ts";
import { IncidentLiveStatus, IncidentTable } from "./incident-parts.tsx";
import { incidentsPath } from "./incidents.tsx";

const OPEN_PAGE = 20;

export function ServiceIncidents(props: { service: Service; denied: string | null; onSaved: (s: Service) => void }) {
  const { service } = props;
  const serviceId = service.id;
  const filters = useMemo(() => ({ status: "open", serviceId, severity: "" }), [serviceId]);
  const [groups, setGroups] = useState([
    { status: "open", heading: "Open", items: null as Incident[] | null, cursor: undefined as string | undefined },
  ]);
  const live = useIncidentChanges(
    serviceId,
    async (signal) => {
      const res = await api.incidents.listIncidents({ status: "open", serviceId, limit: OPEN_PAGE }, { signal });
      setGroups((old) => old.map((g) => ({ ...g, items: res.data, cursor: res.nextCursor })));
    },
    (_change, incident) => setGroups((old) => placeIncident(old, filters, incident)),
  );
  const onChanged = useCallback(
    (incident: Incident) => setGroups((old) => placeIncident(old, filters, incident)),
    [filters],
  );
  const open = groups[0];
  return (
    <section aria-labelledby="service-incidents">
      <h2 id="service-incidents">Open incidents</h2>
      <IncidentLiveStatus state={live} />
      {open?.items === null && live.kind !== "stopped" && <Loading label="Loading incidents…" />}
      {open?.items?.length === 0 && (
        <Empty
          title="No open incidents"
          next={
            <>
              Its senders open one with a signed alert event (<code>"event_action": "trigger"</code>).
            </>
          }
        />
      )}
      {open?.items && open.items.length > 0 && (
        <IncidentTable
          incidents={open.items}
          names={undefined}
          denied={props.denied}
          onChanged={onChanged}
          caption={`Open incidents of ${service.serviceName}`}
          hideService
        />
      )}
      <p>
        <Link to={incidentsPath({ serviceId })}>Every incident of {service.serviceName}</Link>
        {open?.cursor && ` (more than ${OPEN_PAGE} are open)`}
      </p>
      <AutoResolveForm service={service} denied={props.denied} onSaved={props.onSaved} />
    </section>
  );
}

const UNITS = [
  { name: "days", seconds: 86_400 },
  { name: "hours", seconds: 3_600 },
  { name: "minutes", seconds: 60 },
  { name: "seconds", seconds: 1 },
] as const;
const MIN_SECONDS = 60;
const MAX_SECONDS = 2_592_000;

/** "2 hours", "90 seconds": the largest unit that divides the period. */
export function period(seconds: number): string {
  const unit = UNITS.find((u) => seconds % u.seconds === 0) ?? UNITS[3];
  const n = seconds / unit.seconds;
  return `${n} ${n === 1 ? unit.name.slice(0, -1) : unit.name}`;
}

function AutoResolveForm(props: { service: Service; denied: string | null; onSaved: (s: Service) => void }) {
  const { service, denied } = props;
  const current = service.incidentAutoResolveSeconds;
  const initialUnit = UNITS.find((u) => current !== undefined && current % u.seconds === 0) ?? UNITS[2];
  const [amount, setAmount] = useState(current === undefined ? "" : String(current / initialUnit.seconds));
  const [unit, setUnit] = useState<number>(initialUnit.seconds);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const seconds = Math.round(Number(amount) * unit);
  const invalid = amount === "" || !Number.isFinite(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS;

  const save = async (value: number | null) => {
    setBusy(true);
    setFailure(null);
    try {
      const res = await api.services.updateService(
        value === null
          ? { id: service.id, resetIncidentAutoResolveSeconds: true }
          : { id: service.id, incidentAutoResolveSeconds: value },
      );
      if (res.service) props.onSaved(res.service);
    } catch (error) {
      setFailure(failureOf(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h2>Incident auto-resolve</h2>
      <p>
        {current === undefined ? (
          <>
            <strong>Never</strong>: its incidents stay open until an alert event or a person resolves them.
          </>
        ) : (
          <>
            An open incident with no alert event for <strong>{period(current)}</strong> is resolved automatically.
          </>
        )}
        {!service.isMonitored && " While ingestion is paused, nothing is auto-resolved."}
      </p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          if (!invalid) void save(seconds);
        }}
      >
        <label>
          Resolve after
          <input
            type="number"
            required
            min={1}
            step="any"
            value={amount}
            disabled={denied !== null}
            aria-describedby="auto-resolve-bounds"
            onInput={(e) => setAmount(e.currentTarget.value)}
          />
        </label>
        <label>
          Unit
          <select
            value={String(unit)}
            disabled={denied !== null}
            onChange={(e) => setUnit(Number(e.currentTarget.value))}
          >
            {UNITS.map((u) => (
              <option key={u.name} value={String(u.seconds)}>
                {u.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={denied !== null || busy || invalid}>
          Set auto-resolve
        </button>
        {current !== undefined && (
          <Action denied={denied} busy={busy} onClick={() => void save(null)}>
            Never auto-resolve
          </Action>
        )}
      </form>
      <p id="auto-resolve-bounds" class="meta">
        Between 1 minute and 30 days{denied ? `. ${denied}` : ""}.
      </p>
      <ErrorNotice failure={failure} />
    </>
  );
}
