/**
 * How the console's live incident views place what the change stream and their fill tell them
 * (src/console/incident-order.ts, docs/console.md "Live incidents"): a snapshot the view has
 * already passed never moves a row back, a changed incident moves to the list its status and
 * the filters put it in, newest first, and one whose place is past the loaded page waits for
 * "Show older".
 */
import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { type Incident, IncidentSchema } from "../../gen/intake/v1/incidents_pb.ts";
import { type Filters, type Group, groupsFor, notOlder, placeIncident } from "../../src/console/incident-order.ts";

function incident(
  n: number,
  fields: Partial<Pick<Incident, "status" | "severity" | "alertCount" | "serviceId">> = {},
): Incident {
  return create(IncidentSchema, {
    id: `inc_${n.toString(16).padStart(32, "0")}`,
    serviceId: `svc_${"a".repeat(32)}`,
    status: "triggered",
    severity: "warning",
    alertCount: 1n,
    title: `incident ${n}`,
    ...fields,
  });
}

const ALL: Filters = { status: "", serviceId: "", severity: "" };

function loaded(open: Incident[], resolved: Incident[], resolvedCursor?: string): Group[] {
  const [o, r] = groupsFor("") as [Group, Group];
  return [
    { ...o, items: open, cursor: undefined },
    { ...r, items: resolved, cursor: resolvedCursor },
  ];
}

const ids = (groups: Group[]) => groups.map((g) => (g.items ?? []).map((i) => i.id.slice(-2)));

describe("which snapshot of an incident is the later", () => {
  test("status, then alert count, then severity decide; equal snapshots are not older", () => {
    const first = incident(1);
    expect(notOlder(first, incident(1, { status: "acknowledged" }))).toBe(true);
    expect(notOlder(incident(1, { status: "resolved" }), incident(1, { status: "acknowledged", alertCount: 9n }))).toBe(
      false,
    );
    expect(notOlder(first, incident(1, { alertCount: 2n }))).toBe(true);
    expect(notOlder(incident(1, { alertCount: 2n }), first)).toBe(false);
    expect(notOlder(first, incident(1, { severity: "critical" }))).toBe(true);
    expect(notOlder(incident(1, { severity: "critical" }), first)).toBe(false);
    expect(notOlder(first, incident(1))).toBe(true);
  });
});

describe("placing a changed incident", () => {
  test("a resolve moves it from the open list into the resolved one at its place, newest first", () => {
    const groups = loaded([incident(5), incident(3)], [incident(4), incident(1)]);
    expect(ids(placeIncident(groups, ALL, incident(3, { status: "resolved" })))).toEqual([["05"], ["04", "03", "01"]]);
  });

  test("an opened incident enters the open list first", () => {
    const groups = loaded([incident(5)], []);
    expect(ids(placeIncident(groups, ALL, incident(6)))).toEqual([["06", "05"], []]);
  });

  test("a snapshot older than the one shown (the fill had seen the change) changes nothing", () => {
    const groups = loaded([], [incident(3, { status: "resolved" })]);
    expect(placeIncident(groups, ALL, incident(3, { status: "acknowledged" }))).toBe(groups);
  });

  test("an incident whose place is past the loaded page is left for Show older", () => {
    const groups = loaded([incident(2)], [incident(5), incident(4)], "cursor");
    expect(ids(placeIncident(groups, ALL, incident(2, { status: "resolved" })))).toEqual([[], ["05", "04"]]);
  });

  test("an incident the filters leave out leaves the list (a severity raised past the filter)", () => {
    const filters: Filters = { status: "open", serviceId: `svc_${"a".repeat(32)}`, severity: "warning" };
    const [open] = groupsFor("open") as [Group];
    const groups = [{ ...open, items: [incident(2), incident(1)] }];
    expect(ids(placeIncident(groups, filters, incident(2, { severity: "critical" })))).toEqual([["01"]]);
    expect(ids(placeIncident(groups, filters, incident(3, { serviceId: `svc_${"b".repeat(32)}` })))).toEqual([
      ["02", "01"],
    ]);
  });

  test("a list not filled yet stays unfilled", () => {
    const groups = groupsFor("");
    expect(placeIncident(groups, ALL, incident(1)).map((g) => g.items)).toEqual([null, null]);
  });
});
