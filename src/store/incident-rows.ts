/**
 * Incident rows, the same on both dialects: one column list, IncidentRecord ↔ positional
 * values, and the change row's JSON snapshot. Raw statements (no drizzle builder or row
 * mapping), like the event reads and list pages (docs/store.md), because the SQLite half runs
 * inside the event writer's transaction on a connection that has no drizzle instance.
 */
import type {
  IncidentActor,
  IncidentChangeRecord,
  IncidentRecord,
  IncidentStatus,
  Severity,
  StreamChange,
} from "../domain/incident-types.ts";
import type { IncidentQuery } from "../domain/ports/store.ts";
import type { Placeholder } from "./list-rows.ts";

export const INCIDENT_COLUMNS =
  "id, tenant_id, service_id, dedup_key, status, severity, title, source, alert_count, created_at, " +
  "last_event_at, acknowledged_at, resolved_at, acknowledged_by_type, acknowledged_by_id, " +
  "resolved_by_type, resolved_by_id";

/** The same columns qualified by a table alias (for joins). */
export function incidentColumnsOf(alias: string): string {
  return INCIDENT_COLUMNS.split(", ")
    .map((column) => `${alias}.${column}`)
    .join(", ");
}

/** Epoch ms: an INTEGER from bun:sqlite, a `bigint` as its decimal text from Bun SQL. */
function ms(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

function msOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : ms(value);
}

function actorOf(type: unknown, id: unknown): IncidentActor | null {
  switch (type) {
    case "event":
      return { type: "event", id: id as string };
    case "api_token":
      return { type: "api_token", id: id as string };
    case "auto":
      return { type: "auto" };
    default:
      return null;
  }
}

function actorColumns(actor: IncidentActor | null): [string | null, string | null] {
  if (actor === null) return [null, null];
  return [actor.type, actor.type === "auto" ? null : actor.id];
}

/** One row of INCIDENT_COLUMNS, in its order. */
export function incidentRecord(row: unknown[]): IncidentRecord {
  return {
    id: row[0] as string,
    tenantId: row[1] as string,
    serviceId: row[2] as string,
    dedupKey: row[3] as string,
    status: row[4] as IncidentStatus,
    severity: row[5] as Severity,
    title: row[6] as string,
    source: row[7] as string,
    alertCount: Number(row[8]),
    createdAt: ms(row[9]),
    lastEventAt: ms(row[10]),
    acknowledgedAt: msOrNull(row[11]),
    resolvedAt: msOrNull(row[12]),
    acknowledgedBy: actorOf(row[13], row[14]),
    resolvedBy: actorOf(row[15], row[16]),
  };
}

/** IncidentRecord → the values of INCIDENT_COLUMNS, in order. */
export function incidentValues(record: IncidentRecord): Array<string | number | null> {
  return [
    record.id,
    record.tenantId,
    record.serviceId,
    record.dedupKey,
    record.status,
    record.severity,
    record.title,
    record.source,
    record.alertCount,
    record.createdAt,
    record.lastEventAt,
    record.acknowledgedAt,
    record.resolvedAt,
    ...actorColumns(record.acknowledgedBy),
    ...actorColumns(record.resolvedBy),
  ];
}

/**
 * What an incident's UPDATE writes: everything a rule or a hand can change (never the key,
 * service, title, source or creation time), then the id.
 */
export const INCIDENT_UPDATE_COLUMNS = [
  "status",
  "severity",
  "alert_count",
  "last_event_at",
  "acknowledged_at",
  "resolved_at",
  "acknowledged_by_type",
  "acknowledged_by_id",
  "resolved_by_type",
  "resolved_by_id",
] as const;

export function incidentUpdateValues(record: IncidentRecord): Array<string | number | null> {
  return [
    record.status,
    record.severity,
    record.alertCount,
    record.lastEventAt,
    record.acknowledgedAt,
    record.resolvedAt,
    ...actorColumns(record.acknowledgedBy),
    ...actorColumns(record.resolvedBy),
    record.id,
  ];
}

export function updateIncidentStatement(placeholder: Placeholder): string {
  const set = INCIDENT_UPDATE_COLUMNS.map((column, i) => `${column} = ${placeholder(i + 1)}`).join(", ");
  return `update incidents set ${set} where id = ${placeholder(INCIDENT_UPDATE_COLUMNS.length + 1)}`;
}

/** The change row's snapshot: the record as JSON text (every field is JSON-safe). */
export function snapshot(record: IncidentRecord): string {
  return JSON.stringify(record);
}

/** One row of `position, change, incident` (the change stream's read). */
export function changeRecord(row: unknown[]): IncidentChangeRecord {
  return {
    position: Number(row[0]),
    change: row[1] as StreamChange,
    incident: JSON.parse(row[2] as string) as IncidentRecord,
  };
}

/**
 * A tenant's incidents page, newest first. Each filter combination reads an index whose order
 * is the page's (docs/incidents.md, "Indexes"): status open → the partial index over open
 * rows; an exact status → (tenant, status, id); a severity → (tenant, severity, id); a service
 * → (service, id); none → (tenant, id). Other filters of a combination are checked on the rows
 * that index yields.
 */
export function incidentListStatement(
  placeholder: Placeholder,
  tenantId: string,
  query: IncidentQuery,
): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const bind = (value: unknown) => {
    params.push(value);
    return placeholder(params.length);
  };
  const conditions = [`tenant_id = ${bind(tenantId)}`];
  if (query.status === "open") conditions.push("status <> 'resolved'");
  else if (query.status !== undefined) conditions.push(`status = ${bind(query.status)}`);
  if (query.serviceId !== undefined) conditions.push(`service_id = ${bind(query.serviceId)}`);
  if (query.severity !== undefined) conditions.push(`severity = ${bind(query.severity)}`);
  if (query.before !== undefined) conditions.push(`id < ${bind(query.before)}`);
  const limit = bind(query.limit);
  return {
    text: `select ${INCIDENT_COLUMNS} from incidents where ${conditions.join(" and ")} order by id desc limit ${limit}`,
    params,
  };
}
