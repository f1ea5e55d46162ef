/**
 * The incident record types (SPEC §17, docs/incidents.md): what the store port persists and
 * the domain (incidents.ts) decides. Their own module, so that the port imports no domain logic.
 */

/** Highest first: an incident's severity is the highest of its triggers. */
export const SEVERITIES = ["critical", "error", "warning", "info"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const INCIDENT_STATUSES = ["triggered", "acknowledged", "resolved"] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

export const ALERT_ACTIONS = ["trigger", "acknowledge", "resolve"] as const;
export type AlertAction = (typeof ALERT_ACTIONS)[number];

/** Who acknowledged or resolved: an alert event, a bearer token (raw ids), or auto-resolve. */
export type IncidentActor = { type: "event"; id: string } | { type: "api_token"; id: string } | { type: "auto" };

export interface IncidentRecord {
  /** 32 hex (UUIDv7), shown as `inc_…`. */
  id: string;
  tenantId: string;
  serviceId: string;
  dedupKey: string;
  status: IncidentStatus;
  severity: Severity;
  /** The summary of its first trigger. */
  title: string;
  source: string;
  /** Alert events that touched it. */
  alertCount: number;
  createdAt: number;
  lastEventAt: number;
  acknowledgedAt: number | null;
  resolvedAt: number | null;
  acknowledgedBy: IncidentActor | null;
  resolvedBy: IncidentActor | null;
}

/**
 * What one alert event did to its incident. `joined`: counted without a change a reader is
 * told about (a trigger of the same severity or lower, an acknowledge of an acknowledged one);
 * `none`: an acknowledge or resolve that found no open incident.
 */
export type AlertChange = "opened" | "joined" | "severity_raised" | "acknowledged" | "resolved" | "none";

/** The changes the incident stream carries (§17), one message each. */
export const STREAM_CHANGES = ["opened", "acknowledged", "resolved", "severity_raised"] as const;
export type StreamChange = (typeof STREAM_CHANGES)[number];

/** A validated alert event, its dedup key settled (a trigger without one takes its event's id). */
export interface Alert {
  action: AlertAction;
  dedupKey: string;
  /** Trigger only. */
  summary?: string;
  source?: string;
  severity?: Severity;
}

/** An alert event as the store applies it, in its batch's order. */
export interface AlertEventInput {
  /** Raw 32 hex of the (inserted, not duplicate) event. */
  eventId: string;
  tenantId: string;
  serviceId: string;
  receivedAt: number;
  alert: Alert;
}

/** The 202's extras of one alert event, and what it changed. */
export interface AlertOutcome {
  dedupKey: string;
  /** Raw 32 hex; null when an acknowledge or resolve found no open incident. */
  incidentId: string | null;
  change: AlertChange;
}

/** One entry of the tenant's incident change stream: the incident as it was right after. */
export interface IncidentChangeRecord {
  /** In the tenant's one order (the feed's positions, docs/incidents.md). */
  position: number;
  change: StreamChange;
  incident: IncidentRecord;
}
