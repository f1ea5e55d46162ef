/**
 * Incidents (SPEC §17, docs/incidents.md): which events are alert events, what makes one
 * valid, and the rules that open, group and close incidents per (service, dedup_key). Pure
 * functions over "the open incident for the key, if any" and the event: the store applies
 * them inside the event's own transaction, under the lock that orders the feed, so their
 * result is what commits (src/store/*\/incidents.ts).
 */
import { DomainError, type FieldIssue } from "./errors.ts";
import {
  ALERT_ACTIONS,
  type Alert,
  type AlertAction,
  type AlertChange,
  type AlertEventInput,
  type AlertOutcome,
  type IncidentActor,
  type IncidentRecord,
  SEVERITIES,
  type Severity,
  type StreamChange,
} from "./incident-types.ts";
import { isRepresentableTime } from "./time.ts";

// --- Recognition and validation --------------------------------------------------------

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Characters are Unicode code points, as for names (docs/api.md). */
function length(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** An RFC 3339 date-time whose fields are a real calendar instant (Feb 30 is not). */
export function isRfc3339(value: string): boolean {
  const match = RFC3339.exec(value);
  if (!match) return false;
  const n = (group: number) => Number(match[group] ?? 0);
  const wall = new Date(Date.UTC(n(1), n(2) - 1, n(3), n(4), n(5), n(6)));
  wall.setUTCFullYear(n(1));
  const real =
    wall.getUTCFullYear() === n(1) &&
    wall.getUTCMonth() === n(2) - 1 &&
    wall.getUTCDate() === n(3) &&
    wall.getUTCHours() === n(4) &&
    wall.getUTCMinutes() === n(5) &&
    wall.getUTCSeconds() === n(6) &&
    n(8) <= 23 &&
    n(9) <= 59;
  return real && isRepresentableTime(Date.parse(value));
}

/** A string field of `min..max` characters; absent (or null) passes unless required. */
function text(
  body: JsonObject,
  key: string,
  field: string,
  bounds: { min: number; max: number; required: boolean },
  issues: FieldIssue[],
): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) {
    if (bounds.required) issues.push({ field, message: "is required" });
    return undefined;
  }
  if (typeof value !== "string") {
    issues.push({ field, message: "must be a string" });
    return undefined;
  }
  const n = length(value);
  if (n < bounds.min || n > bounds.max) {
    issues.push({
      field,
      message:
        bounds.min > 0
          ? `must be ${bounds.min} to ${bounds.max} characters`
          : `must be at most ${bounds.max} characters`,
    });
    return undefined;
  }
  return value;
}

function isSeverity(value: unknown): value is Severity {
  return typeof value === "string" && (SEVERITIES as readonly string[]).includes(value);
}

function isAction(value: unknown): value is AlertAction {
  return typeof value === "string" && (ALERT_ACTIONS as readonly string[]).includes(value);
}

/**
 * The alert in an ingested body, or null for a plain event (no top-level `event_action`).
 * A broken alert event is 400 `invalid_request` with one detail per bad field, before
 * anything is stored. A trigger without `dedup_key` takes `eventId` (the event's public
 * `evt_…` id) as its key. `null` in an optional field counts as absent; fields §17 calls
 * ignored (`links`, `images`, `client`, `client_url`, `routing_key`) and unknown ones are not
 * looked at: senders vary, and the event is stored as received anyway.
 */
export function parseAlert(body: JsonObject, eventId: string): Alert | null {
  if (!Object.hasOwn(body, "event_action")) return null;
  const issues: FieldIssue[] = [];
  const action = body.event_action;
  if (!isAction(action)) {
    issues.push({ field: "event_action", message: "must be one of trigger, acknowledge, resolve" });
  }
  const isTrigger = action === "trigger";
  const dedupKey = text(
    body,
    "dedup_key",
    "dedup_key",
    { min: 1, max: 255, required: !isTrigger && isAction(action) },
    issues,
  );

  const payload = body.payload;
  let summary: string | undefined;
  let source: string | undefined;
  let severity: Severity | undefined;
  if (payload === undefined || payload === null) {
    if (isTrigger) issues.push({ field: "payload", message: "is required for a trigger" });
  } else if (!isObject(payload)) {
    issues.push({ field: "payload", message: "must be an object" });
  } else {
    summary = text(payload, "summary", "payload.summary", { min: 1, max: 1024, required: isTrigger }, issues);
    source = text(payload, "source", "payload.source", { min: 1, max: 255, required: isTrigger }, issues);
    const level = payload.severity;
    if (level === undefined || level === null) {
      if (isTrigger) issues.push({ field: "payload.severity", message: "is required" });
    } else if (isSeverity(level)) {
      severity = level;
    } else {
      issues.push({ field: "payload.severity", message: "must be one of critical, error, warning, info" });
    }
    const timestamp = payload.timestamp;
    if (timestamp !== undefined && timestamp !== null && (typeof timestamp !== "string" || !isRfc3339(timestamp))) {
      issues.push({ field: "payload.timestamp", message: "must be an RFC 3339 timestamp, e.g. 2026-11-26T10:00:00Z" });
    }
    for (const key of ["component", "group", "class"]) {
      text(payload, key, `payload.${key}`, { min: 0, max: 255, required: false }, issues);
    }
  }

  if (issues.length > 0 || !isAction(action)) {
    throw new DomainError("invalid_request", "The alert event is invalid.", issues);
  }
  if (!isTrigger) return { action, dedupKey: dedupKey as string };
  return {
    action,
    dedupKey: dedupKey ?? eventId,
    summary: summary as string,
    source: source as string,
    severity: severity as Severity,
  };
}

/** §18: the payload's top-level `type` when it is a string of 1..255 characters, else null. */
export function eventType(body: JsonObject): string | null {
  const value = body.type;
  if (typeof value !== "string" || value.length === 0) return null;
  return length(value) <= 255 ? value : null;
}

// --- The rules -------------------------------------------------------------------------

const RANK: Record<Severity, number> = { critical: 4, error: 3, warning: 2, info: 1 };

/** The higher of two severities (critical > error > warning > info). */
export function higherSeverity(a: Severity, b: Severity): Severity {
  return RANK[b] > RANK[a] ? b : a;
}

export function isOpen(incident: IncidentRecord): boolean {
  return incident.status !== "resolved";
}

export interface AlertStep {
  change: AlertChange;
  /** The incident after the event (a new object); null when nothing was open to change. */
  incident: IncidentRecord | null;
}

/**
 * One alert event against the open incident of its (service, dedup_key), if any (§17):
 * - trigger, none open → a new `triggered` incident; one open → the event joins it
 *   (alert_count + 1, last_event_at, severity raised if higher; acknowledged stays acknowledged);
 * - acknowledge → triggered becomes acknowledged; acknowledged counts the event; none → nothing;
 * - resolve → the open incident becomes resolved; none → nothing.
 */
export function applyAlert(
  open: IncidentRecord | null,
  event: AlertEventInput,
  newIncidentId: () => string,
): AlertStep {
  const { alert, receivedAt: at } = event;
  const by: IncidentActor = { type: "event", id: event.eventId };
  if (open !== null && !isOpen(open)) throw new Error("applyAlert: the incident given as open is resolved");

  if (alert.action === "trigger") {
    const severity = alert.severity as Severity;
    if (open === null) {
      return {
        change: "opened",
        incident: {
          id: newIncidentId(),
          tenantId: event.tenantId,
          serviceId: event.serviceId,
          dedupKey: alert.dedupKey,
          status: "triggered",
          severity,
          title: alert.summary as string,
          source: alert.source as string,
          alertCount: 1,
          createdAt: at,
          lastEventAt: at,
          acknowledgedAt: null,
          resolvedAt: null,
          acknowledgedBy: null,
          resolvedBy: null,
        },
      };
    }
    const raised = higherSeverity(open.severity, severity);
    return {
      change: raised === open.severity ? "joined" : "severity_raised",
      incident: { ...open, severity: raised, alertCount: open.alertCount + 1, lastEventAt: at },
    };
  }

  if (open === null) return { change: "none", incident: null };
  const touched = { ...open, alertCount: open.alertCount + 1, lastEventAt: at };
  if (alert.action === "acknowledge") {
    if (open.status === "acknowledged") return { change: "joined", incident: touched };
    return {
      change: "acknowledged",
      incident: { ...touched, status: "acknowledged", acknowledgedAt: at, acknowledgedBy: by },
    };
  }
  return { change: "resolved", incident: { ...touched, status: "resolved", resolvedAt: at, resolvedBy: by } };
}

/** The changes the incident stream tells readers about; `joined` and `none` are not among them. */
export function streamChange(change: AlertChange): StreamChange | null {
  return change === "joined" || change === "none" ? null : change;
}

/** What a batch of alert events does, in order, as the store writes it. */
export interface AlertBatchPlan {
  /** Positional with the batch: the 202's extras and what each event did. */
  outcomes: AlertOutcome[];
  /**
   * The final state of every incident the batch touched, in first-touch order; `isNew` ones
   * are inserted, the others updated. Updates go first: a batch may resolve an open incident
   * and open the key's next one, and at most one per key may be open at any moment.
   */
  incidents: Array<{
    incident: IncidentRecord;
    isNew: boolean;
    /** The row as the batch read it (null for a new one): a store may write only what moved. */
    stored: IncidentRecord | null;
  }>;
  /** Stream changes, in the batch's order, each with the incident right after it. */
  changes: Array<{ change: StreamChange; incident: IncidentRecord }>;
}

function keyOf(serviceId: string, dedupKey: string): string {
  return `${serviceId}\u0000${dedupKey}`;
}

/**
 * A batch's alert events applied one after another (a later event sees what an earlier one of
 * the same batch did), for a store that learns event by event whether an event goes in:
 * `next` says what the event would do, `record` keeps it (an event that turned out to be a
 * duplicate is never recorded, so it changes nothing), `plan` is what to write.
 */
export interface AlertPlanner {
  next(event: AlertEventInput): AlertStep;
  record(event: AlertEventInput, step: AlertStep): AlertOutcome;
  plan(): Pick<AlertBatchPlan, "incidents" | "changes">;
}

/**
 * `openOf` reads the open incident of a key as the transaction sees it (null when none); it is
 * asked once per key per batch, after which the batch's own state of the key is used.
 */
export function createAlertPlanner(
  openOf: (serviceId: string, dedupKey: string) => IncidentRecord | null,
  newIncidentId: () => string,
): AlertPlanner {
  const current = new Map<string, IncidentRecord | null>();
  const existing = new Map<string, IncidentRecord>();
  const finals = new Map<string, IncidentRecord>();
  const changes: AlertBatchPlan["changes"] = [];

  function openFor(event: AlertEventInput, key: string): IncidentRecord | null {
    let open = current.get(key);
    if (open === undefined) {
      open = openOf(event.serviceId, event.alert.dedupKey);
      if (open !== null && !isOpen(open)) open = null;
      if (open !== null) existing.set(open.id, open);
      current.set(key, open);
    }
    return open;
  }

  return {
    next: (event) => applyAlert(openFor(event, keyOf(event.serviceId, event.alert.dedupKey)), event, newIncidentId),
    record(event, step) {
      const outcome: AlertOutcome = {
        dedupKey: event.alert.dedupKey,
        incidentId: step.incident?.id ?? null,
        change: step.change,
      };
      if (step.incident === null) return outcome;
      finals.set(step.incident.id, step.incident);
      current.set(keyOf(event.serviceId, event.alert.dedupKey), isOpen(step.incident) ? step.incident : null);
      const change = streamChange(step.change);
      if (change) changes.push({ change, incident: step.incident });
      return outcome;
    },
    plan() {
      const incidents = [...finals.values()].map((incident) => {
        const stored = existing.get(incident.id) ?? null;
        return { incident, isNew: stored === null, stored };
      });
      incidents.sort((a, b) => Number(a.isNew) - Number(b.isNew));
      return { incidents, changes };
    },
  };
}

/**
 * Applies a batch's alert events one after another, starting from `open`: the open incidents
 * of the batch's keys as the transaction reads them.
 */
export function planAlertBatch(
  events: ReadonlyArray<AlertEventInput>,
  open: ReadonlyArray<IncidentRecord>,
  newIncidentId: () => string,
): AlertBatchPlan {
  const byKey = new Map<string, IncidentRecord>();
  for (const incident of open) {
    if (isOpen(incident)) byKey.set(keyOf(incident.serviceId, incident.dedupKey), incident);
  }
  const planner = createAlertPlanner(
    (serviceId, dedupKey) => byKey.get(keyOf(serviceId, dedupKey)) ?? null,
    newIncidentId,
  );
  const outcomes = events.map((event) => planner.record(event, planner.next(event)));
  return { outcomes, ...planner.plan() };
}

// --- By hand, and auto-resolve ---------------------------------------------------------

export type ManualOutcome =
  | { kind: "changed"; incident: IncidentRecord }
  /** Already in the asked-for state: a 200 that changes nothing (and writes no audit record). */
  | { kind: "unchanged"; incident: IncidentRecord }
  /** Acknowledging a resolved incident: 409 incident_resolved. */
  | { kind: "incident_resolved" };

/** POST /v1/incidents/{id}/acknowledge: triggered → acknowledged; acknowledged stays; resolved is 409. */
export function acknowledgeByHand(incident: IncidentRecord, by: IncidentActor, at: number): ManualOutcome {
  if (incident.status === "resolved") return { kind: "incident_resolved" };
  if (incident.status === "acknowledged") return { kind: "unchanged", incident };
  return { kind: "changed", incident: { ...incident, status: "acknowledged", acknowledgedAt: at, acknowledgedBy: by } };
}

/** POST /v1/incidents/{id}/resolve (and auto-resolve, `by` = auto): an open incident becomes resolved. */
export function resolveByHand(incident: IncidentRecord, by: IncidentActor, at: number): ManualOutcome {
  if (incident.status === "resolved") return { kind: "unchanged", incident };
  return { kind: "changed", incident: { ...incident, status: "resolved", resolvedAt: at, resolvedBy: by } };
}

/** The 409 of acknowledging a resolved incident. */
export function incidentResolvedError(): DomainError {
  return new DomainError("incident_resolved", "The incident is resolved; it can no longer be acknowledged.");
}

/** `incident_auto_resolve_seconds`: null (never) or 60..2592000 (30 days). */
export const AUTO_RESOLVE_MIN_SECONDS = 60;
export const AUTO_RESOLVE_MAX_SECONDS = 2_592_000;

/** When an open incident with no alert event since `lastEventAt` is due to auto-resolve. */
export function autoResolveDeadline(incident: Pick<IncidentRecord, "lastEventAt">, seconds: number): number {
  return incident.lastEventAt + seconds * 1000;
}
