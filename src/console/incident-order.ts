/**
 * How the live incident views order what they show (docs/console.md, "Live incidents"): which
 * of two snapshots of an incident is the later, and where a changed incident goes in a page's
 * lists. No DOM and no API here: test/console/incident-order.test.ts holds it to the rules.
 */
import type { Incident } from "../../gen/intake/v1/incidents_pb.ts";

/** Status only moves forward over an incident's life. */
const STATUS_RANK: Record<string, number> = { triggered: 0, acknowledged: 1, resolved: 2 };
export const SEVERITIES = ["critical", "error", "warning", "info"] as const;
export type Severity = (typeof SEVERITIES)[number];
export function severityRank(severity: string): number {
  const i = SEVERITIES.indexOf(severity as Severity);
  return i < 0 ? SEVERITIES.length : i;
}

/**
 * Whether snapshot `b` of an incident is not older than `a`. Status, alert count and severity
 * never go back (§17), so comparing them in turn orders any two snapshots of one incident.
 */
export function notOlder(a: Incident, b: Incident): boolean {
  const fields = (i: Incident) => [STATUS_RANK[i.status] ?? 0, Number(i.alertCount), -severityRank(i.severity)];
  const [x, y] = [fields(a), fields(b)];
  for (let k = 0; k < x.length; k++) {
    if ((y[k] as number) !== (x[k] as number)) return (y[k] as number) > (x[k] as number);
  }
  return true;
}

export interface Filters {
  status: string;
  serviceId: string;
  severity: string;
}

/** One list on the page: its status filter, what is loaded, and the cursor of what is not. */
export interface Group {
  status: string;
  heading: string;
  items: Incident[] | null;
  cursor: string | undefined;
}

export function groupsFor(status: string): Group[] {
  if (status === "") {
    return [
      { status: "open", heading: "Open", items: null, cursor: undefined },
      { status: "resolved", heading: "Resolved", items: null, cursor: undefined },
    ];
  }
  const heading = status === "open" ? "Open" : status[0]?.toUpperCase() + status.slice(1);
  return [{ status, heading, items: null, cursor: undefined }];
}

function statusMatches(filter: string, status: string): boolean {
  return filter === "open" ? status === "triggered" || status === "acknowledged" : filter === status;
}

/**
 * Where an incident's new snapshot goes: out of every list, then into the one it matches, at its
 * place newest first — unless that place is past the loaded page (it comes with "Show older").
 * A snapshot older than the one shown (a change the fill had already seen) changes nothing.
 */
export function placeIncident(groups: Group[], filters: Filters, incident: Incident): Group[] {
  const shown = groups.flatMap((g) => g.items ?? []).find((i) => i.id === incident.id);
  if (shown && !notOlder(shown, incident)) return groups;
  const fits =
    (!filters.serviceId || incident.serviceId === filters.serviceId) &&
    (!filters.severity || incident.severity === filters.severity);
  return groups.map((group) => {
    if (group.items === null) return group;
    const items = group.items.filter((i) => i.id !== incident.id);
    const last = items[items.length - 1];
    const beyond = group.cursor !== undefined && last !== undefined && incident.id < last.id;
    if (fits && statusMatches(group.status, incident.status) && !beyond) {
      const at = items.findIndex((i) => i.id < incident.id);
      items.splice(at < 0 ? items.length : at, 0, incident);
    }
    return { ...group, items };
  });
}
