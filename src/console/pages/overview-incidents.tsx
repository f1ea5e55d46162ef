/**
 * The overview's open incidents by severity (SPEC §22), live from the incident change stream:
 * every open incident's severity by id (ListIncidents status=open, up to CAP), then each change
 * moves one in or out. Each count links to the incidents page filtered to it.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { Link } from "../components.tsx";
import { useIncidentChanges } from "../incident-live.ts";
import { SEVERITIES } from "../incident-order.ts";
import { IncidentLiveStatus, SeverityBadge } from "./incident-parts.tsx";
import { incidentsPath } from "./incidents.tsx";

/** Open incidents the overview reads to count them; past it a count says "or more". */
const CAP = 1_000;

export function OpenIncidents() {
  const [open, setOpen] = useState<ReadonlyMap<string, string> | null>(null);
  const [capped, setCapped] = useState(false);
  const live = useIncidentChanges(
    undefined,
    async (signal) => {
      const all = new Map<string, string>();
      let cursor: string | undefined;
      do {
        const res = await api.incidents.listIncidents({ status: "open", limit: 100, cursor }, { signal });
        for (const i of res.data) all.set(i.id, i.severity);
        cursor = res.nextCursor;
      } while (cursor && all.size < CAP);
      setCapped(cursor !== undefined);
      setOpen(all);
    },
    (_change, incident) =>
      setOpen((old) => {
        if (!old) return old;
        const next = new Map(old);
        if (incident.status === "resolved") next.delete(incident.id);
        else next.set(incident.id, incident.severity);
        return next;
      }),
  );
  const counts = new Map<string, number>();
  for (const severity of open?.values() ?? []) counts.set(severity, (counts.get(severity) ?? 0) + 1);
  return (
    <section aria-labelledby="overview-incidents">
      <h2 id="overview-incidents">Open incidents</h2>
      <IncidentLiveStatus state={live} />
      {/* The cards hold their place while the count loads (nothing below them moves), unless it cannot load. */}
      {(open !== null || live.kind !== "stopped") && (
        <ul class="cards severities" aria-busy={open === null}>
          {SEVERITIES.map((severity) => (
            <li key={severity} class={counts.get(severity) ? `has-${severity}` : undefined}>
              <Link to={incidentsPath({ status: "open", severity })}>
                <strong>
                  {open ? (counts.get(severity) ?? 0) : "…"}
                  {capped && "+"}
                </strong>{" "}
                <SeverityBadge severity={severity} />
              </Link>
            </li>
          ))}
        </ul>
      )}
      {/* Always there, and one line even on a 390 px phone: its text arriving moves nothing below it. */}
      <p class="meta">
        {open === null ? (
          "\u00a0"
        ) : open.size === 0 ? (
          "Nothing open: no alert needs anyone now."
        ) : (
          <>
            {open.size}
            {capped && "+"} open: <Link to={incidentsPath({ status: "open" })}>see them all</Link>.
          </>
        )}
      </p>
    </section>
  );
}
