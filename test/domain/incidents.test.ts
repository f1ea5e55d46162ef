import { describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import type { Alert, AlertEventInput, IncidentRecord } from "../../src/domain/incident-types.ts";
import {
  acknowledgeByHand,
  applyAlert,
  autoResolveDeadline,
  eventType,
  higherSeverity,
  parseAlert,
  planAlertBatch,
  resolveByHand,
} from "../../src/domain/incidents.ts";

const EVT = `evt_${"a".repeat(32)}`;
const T = 1_800_000_000_000;

function issues(body: Record<string, unknown>): Array<{ field: string; message: string }> {
  try {
    parseAlert(body, EVT);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe("invalid_request");
    return (error as DomainError).details ?? [];
  }
  throw new Error("expected the alert to be refused");
}

const trigger = (extra: Record<string, unknown> = {}) => ({
  event_action: "trigger",
  payload: { summary: "disk full on db-1", source: "db-1", severity: "warning" },
  ...extra,
});

describe("alert events: recognition and validation (§17)", () => {
  test("a body without a top-level event_action is a plain event", () => {
    expect(parseAlert({ type: "invoice.paid", payload: { event_action: "trigger" } }, EVT)).toBeNull();
  });

  test("a valid trigger is an alert; without dedup_key its key is the event's own id", () => {
    expect(parseAlert(trigger(), EVT)).toEqual({
      action: "trigger",
      dedupKey: EVT,
      summary: "disk full on db-1",
      source: "db-1",
      severity: "warning",
    });
    expect(parseAlert(trigger({ dedup_key: "disk/db-1" }), EVT)?.dedupKey).toBe("disk/db-1");
  });

  test("400: a trigger needs payload.summary, payload.source and payload.severity, one detail each", () => {
    expect(issues({ event_action: "trigger", payload: {} })).toEqual([
      { field: "payload.summary", message: "is required" },
      { field: "payload.source", message: "is required" },
      { field: "payload.severity", message: "is required" },
    ]);
    expect(issues({ event_action: "trigger" })).toEqual([{ field: "payload", message: "is required for a trigger" }]);
  });

  test("400: acknowledge and resolve require dedup_key", () => {
    expect(issues({ event_action: "acknowledge" })).toEqual([{ field: "dedup_key", message: "is required" }]);
    expect(issues({ event_action: "resolve", dedup_key: "" })).toEqual([
      { field: "dedup_key", message: "must be 1 to 255 characters" },
    ]);
    expect(parseAlert({ event_action: "resolve", dedup_key: "k" }, EVT)).toEqual({ action: "resolve", dedupKey: "k" });
  });

  test("400: an unknown event_action, a bad severity and over-long fields each get their own detail", () => {
    expect(issues({ event_action: "escalate" })).toEqual([
      { field: "event_action", message: "must be one of trigger, acknowledge, resolve" },
    ]);
    const fields = issues({
      event_action: "trigger",
      dedup_key: "k".repeat(256),
      payload: {
        summary: "s".repeat(1025),
        source: 7,
        severity: "fatal",
        timestamp: "2026-02-30T00:00:00Z",
        component: "c".repeat(256),
        group: ["g"],
        class: "ok",
      },
    }).map((d) => d.field);
    expect(fields).toEqual([
      "dedup_key",
      "payload.summary",
      "payload.source",
      "payload.severity",
      "payload.timestamp",
      "payload.component",
      "payload.group",
    ]);
  });

  test("lengths count characters, not UTF-16 units: 255 emoji are a valid dedup_key", () => {
    expect(parseAlert(trigger({ dedup_key: "🔥".repeat(255) }), EVT)?.dedupKey).toBe("🔥".repeat(255));
    expect(issues(trigger({ dedup_key: "🔥".repeat(256) }))).toHaveLength(1);
  });

  test("ignored fields (links, images, client, routing_key) never make an alert invalid", () => {
    const body = trigger({ links: "x", images: 1, client: {}, client_url: [], routing_key: null });
    expect(parseAlert(body, EVT)?.action).toBe("trigger");
  });

  test("payload.timestamp accepts any RFC 3339 offset", () => {
    const body = trigger();
    (body.payload as Record<string, unknown>).timestamp = "2026-11-26T10:00:00.123+05:30";
    expect(parseAlert(body, EVT)?.action).toBe("trigger");
  });
});

describe("event type (§18)", () => {
  test("the payload's top-level type when a string of 1..255 characters, else null", () => {
    expect(eventType({ type: "invoice.paid" })).toBe("invoice.paid");
    expect(eventType({ type: "" })).toBeNull();
    expect(eventType({ type: 5 })).toBeNull();
    expect(eventType({ type: "t".repeat(256) })).toBeNull();
    expect(eventType({ type: "é".repeat(255) })).toBe("é".repeat(255));
    expect(eventType({})).toBeNull();
  });
});

let ids = 0;
const newIncidentId = () => `inc${String(++ids).padStart(29, "0")}`;

function event(alert: Partial<Alert> & Pick<Alert, "action">, at = T, eventId = "e".repeat(32)): AlertEventInput {
  return {
    eventId,
    tenantId: "tenant",
    serviceId: "service",
    receivedAt: at,
    alert: {
      dedupKey: "k",
      ...(alert.action === "trigger" && { summary: "s", source: "src", severity: "warning" }),
      ...alert,
    },
  };
}

function opened(overrides: Partial<IncidentRecord> = {}): IncidentRecord {
  const step = applyAlert(null, event({ action: "trigger" }), newIncidentId);
  return { ...(step.incident as IncidentRecord), ...overrides };
}

describe("incident rules per (service, dedup_key) (§17)", () => {
  test("a trigger with no open incident opens a new triggered one titled by its summary", () => {
    const step = applyAlert(null, event({ action: "trigger", summary: "CPU high", severity: "error" }), newIncidentId);
    expect(step.change).toBe("opened");
    expect(step.incident).toMatchObject({
      status: "triggered",
      severity: "error",
      title: "CPU high",
      source: "src",
      dedupKey: "k",
      alertCount: 1,
      createdAt: T,
      lastEventAt: T,
      acknowledgedAt: null,
      resolvedAt: null,
    });
  });

  test("a trigger with one open joins it: alert_count + 1, last_event_at moves, title stays", () => {
    const step = applyAlert(
      opened(),
      event({ action: "trigger", summary: "other", severity: "info" }, T + 5),
      newIncidentId,
    );
    expect(step.change).toBe("joined");
    expect(step.incident).toMatchObject({ alertCount: 2, lastEventAt: T + 5, severity: "warning", title: "s" });
  });

  test("a higher severity raises the incident's severity (critical > error > warning > info)", () => {
    const step = applyAlert(opened(), event({ action: "trigger", severity: "critical" }), newIncidentId);
    expect(step.change).toBe("severity_raised");
    expect(step.incident?.severity).toBe("critical");
    expect(higherSeverity("error", "warning")).toBe("error");
    expect(higherSeverity("info", "warning")).toBe("warning");
  });

  test("a trigger joining an acknowledged incident leaves it acknowledged", () => {
    const step = applyAlert(opened({ status: "acknowledged" }), event({ action: "trigger" }), newIncidentId);
    expect(step.incident?.status).toBe("acknowledged");
    expect(step.incident?.alertCount).toBe(2);
  });

  test("acknowledge turns a triggered incident acknowledged, by the event", () => {
    const step = applyAlert(opened(), event({ action: "acknowledge" }, T + 1, "b".repeat(32)), newIncidentId);
    expect(step.change).toBe("acknowledged");
    expect(step.incident).toMatchObject({
      status: "acknowledged",
      acknowledgedAt: T + 1,
      acknowledgedBy: { type: "event", id: "b".repeat(32) },
      alertCount: 2,
    });
  });

  test("acknowledge of an acknowledged incident counts the event and changes nothing else", () => {
    const before = opened({ status: "acknowledged", acknowledgedAt: T, acknowledgedBy: { type: "auto" } });
    const step = applyAlert(before, event({ action: "acknowledge" }, T + 9), newIncidentId);
    expect(step.change).toBe("joined");
    expect(step.incident).toEqual({ ...before, alertCount: 2, lastEventAt: T + 9 });
  });

  test("acknowledge or resolve with no open incident changes nothing (incident_id null)", () => {
    expect(applyAlert(null, event({ action: "acknowledge" }), newIncidentId)).toEqual({
      change: "none",
      incident: null,
    });
    expect(applyAlert(null, event({ action: "resolve" }), newIncidentId)).toEqual({ change: "none", incident: null });
  });

  test("resolve closes the open incident, by the event", () => {
    const step = applyAlert(
      opened({ status: "acknowledged" }),
      event({ action: "resolve" }, T + 2, "c".repeat(32)),
      newIncidentId,
    );
    expect(step.change).toBe("resolved");
    expect(step.incident).toMatchObject({
      status: "resolved",
      resolvedAt: T + 2,
      resolvedBy: { type: "event", id: "c".repeat(32) },
    });
  });

  test("after a resolve the next trigger with the same key opens a new incident (one batch)", () => {
    const plan = planAlertBatch(
      [event({ action: "trigger" }), event({ action: "resolve" }), event({ action: "trigger" })],
      [],
      newIncidentId,
    );
    expect(plan.outcomes.map((o) => o.change)).toEqual(["opened", "resolved", "opened"]);
    const [first, , third] = plan.outcomes;
    expect(third?.incidentId).not.toBe(first?.incidentId);
    expect(plan.incidents.map((i) => i.incident.status)).toEqual(["resolved", "triggered"]);
    expect(plan.changes.map((c) => c.change)).toEqual(["opened", "resolved", "opened"]);
  });

  test("N triggers on one key in a batch make one incident with alert_count N; joins are not stream changes", () => {
    const plan = planAlertBatch(
      Array.from({ length: 5 }, () => event({ action: "trigger" })),
      [],
      newIncidentId,
    );
    expect(plan.incidents).toHaveLength(1);
    expect(plan.incidents[0]?.incident.alertCount).toBe(5);
    expect(plan.changes.map((c) => c.change)).toEqual(["opened"]);
  });

  test("a batch writes updates of existing incidents before inserting new ones", () => {
    const existing = opened();
    const plan = planAlertBatch(
      [event({ action: "resolve" }), event({ action: "trigger" })],
      [existing],
      newIncidentId,
    );
    expect(plan.incidents.map((i) => [i.incident.id === existing.id, i.isNew])).toEqual([
      [true, false],
      [false, true],
    ]);
  });
});

describe("incidents by hand and auto-resolve (§17)", () => {
  const token = { type: "api_token", id: "f".repeat(32) } as const;

  test("acknowledging a triggered incident by hand records the token", () => {
    expect(acknowledgeByHand(opened(), token, T + 3)).toMatchObject({
      kind: "changed",
      incident: { status: "acknowledged", acknowledgedAt: T + 3, acknowledgedBy: token },
    });
  });

  test("asking for the state it is already in changes nothing", () => {
    const acked = opened({ status: "acknowledged" });
    expect(acknowledgeByHand(acked, token, T)).toEqual({ kind: "unchanged", incident: acked });
    const resolved = opened({ status: "resolved" });
    expect(resolveByHand(resolved, token, T)).toEqual({ kind: "unchanged", incident: resolved });
  });

  test("409 incident_resolved: acknowledging a resolved incident is refused", () => {
    expect(acknowledgeByHand(opened({ status: "resolved" }), token, T)).toEqual({ kind: "incident_resolved" });
  });

  test("an open incident is due to auto-resolve its service's seconds after its last alert event", () => {
    expect(autoResolveDeadline({ lastEventAt: T }, 60)).toBe(T + 60_000);
    expect(resolveByHand(opened(), { type: "auto" }, T + 60_000)).toMatchObject({
      kind: "changed",
      incident: { status: "resolved", resolvedBy: { type: "auto" } },
    });
  });
});
