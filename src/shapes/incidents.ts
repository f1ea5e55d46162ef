/**
 * An incident's public shapes (§17). REST: the incident object, and a change as
 * `{"change", "incident"}`, the incident change stream's `data` and the export's message body
 * (docs/export.md).
 */
import { formatId } from "../domain/ids.ts";
import type { IncidentActor, IncidentChangeRecord, IncidentRecord } from "../domain/incident-types.ts";
import { isoOfMs } from "./time.ts";

function actor(by: IncidentActor | null) {
  if (by === null) return null;
  switch (by.type) {
    case "event":
      return { type: "event", id: formatId("evt", by.id) };
    case "api_token":
      return { type: "api_token", id: formatId("tok", by.id) };
    case "auto":
      return { type: "auto" };
  }
}

/** The incident as §17 shows it (public ids, RFC 3339 times; no tenant). */
export function incidentObject(incident: IncidentRecord) {
  return {
    id: formatId("inc", incident.id),
    service_id: formatId("svc", incident.serviceId),
    dedup_key: incident.dedupKey,
    status: incident.status,
    severity: incident.severity,
    title: incident.title,
    source: incident.source,
    alert_count: incident.alertCount,
    created_at: isoOfMs(incident.createdAt),
    last_event_at: isoOfMs(incident.lastEventAt),
    acknowledged_at: incident.acknowledgedAt === null ? null : isoOfMs(incident.acknowledgedAt),
    resolved_at: incident.resolvedAt === null ? null : isoOfMs(incident.resolvedAt),
    acknowledged_by: actor(incident.acknowledgedBy),
    resolved_by: actor(incident.resolvedBy),
  };
}

/** `{"change": …, "incident": {…}}` as one line of JSON. */
export function incidentChangeJson(change: IncidentChangeRecord): string {
  return JSON.stringify({ change: change.change, incident: incidentObject(change.incident) });
}
