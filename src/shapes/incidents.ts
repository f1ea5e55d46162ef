/**
 * An incident's public shapes (SPEC §17): its REST JSON and its protobuf message, from one
 * record; and a change as `{"change", "incident"}`, the incident change stream's `data` and the
 * export's message body (docs/export.md).
 */
import type { Incident, IncidentActor as IncidentActorMessage } from "../../gen/intake/v1/incidents_pb.ts";
import { formatId } from "../domain/ids.ts";
import type { IncidentActor, IncidentChangeRecord, IncidentRecord } from "../domain/incident-types.ts";
import { isoOfMs, isoOrNull, optionalTs, ts, type Whole } from "./time.ts";

/** `{"type": "event", "id": "evt_…"}`, `{"type": "api_token", "id": "tok_…"}` or `{"type": "auto"}`. */
export function incidentActorJson(actor: IncidentActor | null) {
  if (actor === null) return null;
  switch (actor.type) {
    case "event":
      return { type: actor.type, id: formatId("evt", actor.id) };
    case "api_token":
      return { type: actor.type, id: formatId("tok", actor.id) };
    case "auto":
      return { type: actor.type };
  }
}

export function incidentJson(record: IncidentRecord) {
  return {
    id: formatId("inc", record.id),
    service_id: formatId("svc", record.serviceId),
    dedup_key: record.dedupKey,
    status: record.status,
    severity: record.severity,
    title: record.title,
    source: record.source,
    alert_count: record.alertCount,
    created_at: isoOfMs(record.createdAt),
    last_event_at: isoOfMs(record.lastEventAt),
    acknowledged_at: isoOrNull(record.acknowledgedAt),
    resolved_at: isoOrNull(record.resolvedAt),
    acknowledged_by: incidentActorJson(record.acknowledgedBy),
    resolved_by: incidentActorJson(record.resolvedBy),
  };
}

/** `{"change": …, "incident": {…}}` as one line of JSON. */
export function incidentChangeJson(change: IncidentChangeRecord): string {
  return JSON.stringify({ change: change.change, incident: incidentJson(change.incident) });
}

function actorMessage(actor: IncidentActor | null): IncidentActorMessage | undefined {
  const json = incidentActorJson(actor);
  if (json === null) return undefined;
  const message: Whole<IncidentActorMessage> = {
    $typeName: "intake.v1.IncidentActor",
    type: json.type,
    id: "id" in json ? json.id : undefined,
  };
  return message;
}

export function incidentMessage(record: IncidentRecord): Incident {
  const message: Whole<Incident> = {
    $typeName: "intake.v1.Incident",
    id: formatId("inc", record.id),
    serviceId: formatId("svc", record.serviceId),
    dedupKey: record.dedupKey,
    status: record.status,
    severity: record.severity,
    title: record.title,
    source: record.source,
    alertCount: BigInt(record.alertCount),
    createdAt: ts(record.createdAt),
    lastEventAt: ts(record.lastEventAt),
    acknowledgedAt: optionalTs(record.acknowledgedAt),
    resolvedAt: optionalTs(record.resolvedAt),
    acknowledgedBy: actorMessage(record.acknowledgedBy),
    resolvedBy: actorMessage(record.resolvedBy),
  };
  return message;
}
