/**
 * The incidents page (SPEC §22): open incidents first, then resolved ones, each newest first;
 * filters by status, service and severity (kept in the URL, so a filtered view can be linked);
 * acknowledge and resolve after a confirmation; live from the incident change stream.
 */
import { useCallback, useState } from "preact/hooks";
import type { Incident } from "../../../gen/intake/v1/incidents_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { Empty, ErrorNotice, Loading } from "../components.tsx";
import { cannotChange, type Identity } from "../identity.ts";
import { useIncidentChanges } from "../incident-live.ts";
import { type Filters, type Group, groupsFor, placeIncident, SEVERITIES } from "../incident-order.ts";
import { BASE } from "../router.ts";
import { IncidentLiveStatus, IncidentTable, useServiceNames } from "./incident-parts.tsx";

const STATUSES = ["open", "triggered", "acknowledged", "resolved"] as const;
/** The first page of each list; "Show older" reads on by cursor. */
const PAGE = { open: 50, other: 20 };

function filtersFromUrl(): Filters {
  const q = new URLSearchParams(location.search);
  const pick = (value: string | null, allowed: readonly string[]) => (value && allowed.includes(value) ? value : "");
  const service = q.get("service_id") ?? "";
  return {
    status: pick(q.get("status"), STATUSES),
    serviceId: /^svc_[0-9a-f]{32}$/.test(service) ? service : "",
    severity: pick(q.get("severity"), SEVERITIES),
  };
}

/** The link to the incidents page with these filters (the overview's and service page's links). */
export function incidentsPath(filters: Partial<Filters>): string {
  const q = new URLSearchParams();
  if (filters.status) q.set("status", filters.status);
  if (filters.serviceId) q.set("service_id", filters.serviceId);
  if (filters.severity) q.set("severity", filters.severity);
  const query = q.toString();
  return `/incidents${query ? `?${query}` : ""}`;
}

export function IncidentsPage({ identity }: { identity: Identity | null }) {
  const [filters, setFilters] = useState(filtersFromUrl);
  const names = useServiceNames();
  const change = (next: Partial<Filters>) => {
    const merged = { ...filters, ...next };
    history.replaceState(null, "", BASE + incidentsPath(merged));
    setFilters(merged);
  };
  return (
    <main>
      <h1>Incidents</h1>
      <p class="meta">
        What a person must act on, opened and grouped from the alert events senders post. Open incidents first.
      </p>
      <form class="row filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={filters.status} onChange={(e) => change({ status: e.currentTarget.value })}>
            <option value="">open, then resolved</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Service
          <select value={filters.serviceId} onChange={(e) => change({ serviceId: e.currentTarget.value })}>
            <option value="">every service</option>
            {filters.serviceId && !names?.has(filters.serviceId) && (
              <option value={filters.serviceId}>{filters.serviceId}</option>
            )}
            {[...(names ?? [])]
              .sort((a, b) => a[1].localeCompare(b[1]))
              .map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
          </select>
        </label>
        <label>
          Severity
          <select value={filters.severity} onChange={(e) => change({ severity: e.currentTarget.value })}>
            <option value="">any</option>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </form>
      <IncidentLists
        key={incidentsPath(filters)}
        filters={filters}
        names={names}
        denied={cannotChange(identity)}
        filtered={filters.status !== "" || filters.serviceId !== "" || filters.severity !== ""}
      />
    </main>
  );
}

/** The lists for one set of filters: remounted when they change (a fresh fill and stream). */
function IncidentLists(props: {
  filters: Filters;
  names: ReadonlyMap<string, string> | undefined;
  denied: string | null;
  filtered: boolean;
}) {
  const { filters } = props;
  const [groups, setGroups] = useState<Group[]>(() => groupsFor(filters.status));
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);

  const page = useCallback(
    (status: string, cursor: string | undefined, signal?: AbortSignal) =>
      api.incidents.listIncidents(
        {
          status,
          serviceId: filters.serviceId || undefined,
          severity: filters.severity || undefined,
          limit: status === "open" ? PAGE.open : PAGE.other,
          cursor,
        },
        { signal },
      ),
    [filters.serviceId, filters.severity],
  );

  const live = useIncidentChanges(
    filters.serviceId || undefined,
    async (signal) => {
      const fresh = groupsFor(filters.status);
      const pages = await Promise.all(fresh.map((g) => page(g.status, undefined, signal)));
      setGroups(fresh.map((g, i) => ({ ...g, items: pages[i]?.data ?? [], cursor: pages[i]?.nextCursor })));
    },
    (_change, incident) => setGroups((old) => placeIncident(old, filters, incident)),
  );
  const onChanged = useCallback(
    (incident: Incident) => setGroups((old) => placeIncident(old, filters, incident)),
    [filters],
  );

  const older = async (index: number) => {
    const group = groups[index];
    if (!group?.cursor) return;
    setBusy(true);
    setFailure(null);
    try {
      const res = await page(group.status, group.cursor);
      setGroups((old) =>
        old.map((g, i) => {
          if (i !== index) return g;
          const have = new Set((g.items ?? []).map((x) => x.id));
          return {
            ...g,
            items: [...(g.items ?? []), ...res.data.filter((x) => !have.has(x.id))],
            cursor: res.nextCursor,
          };
        }),
      );
    } catch (error) {
      setFailure(failureOf(error));
    } finally {
      setBusy(false);
    }
  };

  const loaded = groups.every((g) => g.items !== null);
  const none = loaded && groups.every((g) => g.items?.length === 0);
  return (
    <>
      <IncidentLiveStatus state={live} />
      {(live.kind === "reconnecting" || live.kind === "stopped") && <ErrorNotice failure={live.failure} />}
      <ErrorNotice failure={failure} />
      {!loaded && live.kind !== "stopped" && <Loading label="Loading incidents…" />}
      {none && !props.filtered && (
        <Empty
          title="No incidents yet"
          next={
            <>
              A service's senders open one by posting a signed alert event: a body with{" "}
              <code>"event_action": "trigger"</code> and a <code>payload</code> with summary, source and severity
              (PagerDuty's Events API v2 shape).
            </>
          }
        />
      )}
      {none && props.filtered && <Empty title="No incidents match these filters" next="Widen the filters above." />}
      {loaded &&
        !none &&
        groups.map((group, index) => (
          <section key={group.status} aria-labelledby={`incidents-${group.status}`}>
            <h2 id={`incidents-${group.status}`}>{group.heading}</h2>
            {group.items?.length === 0 ? (
              <p class="meta">None{props.filtered ? " match these filters" : ""}.</p>
            ) : (
              <IncidentTable
                incidents={group.items ?? []}
                names={props.names}
                denied={props.denied}
                onChanged={onChanged}
                caption={`${group.heading} incidents`}
                resolved={group.status === "resolved"}
              />
            )}
            {group.cursor && (
              <button type="button" disabled={busy} onClick={() => void older(index)}>
                Show older {group.heading.toLowerCase()} incidents
              </button>
            )}
          </section>
        ))}
    </>
  );
}
