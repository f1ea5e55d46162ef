/**
 * AuditRecord → the audit_events row, the same on both dialects: actor and target are stored
 * flat (type and id columns) so that the list filters are indexed equality. Read back by the
 * list page's own mapping (list-rows.ts).
 */
import type { AuditActor, AuditChanges, AuditRecord, AuditTargetType } from "../domain/audit-types.ts";

export interface AuditRow {
  id: string;
  tenantId: string;
  occurredAt: number;
  action: AuditRecord["action"];
  actorType: AuditActor["type"];
  actorId: string | null;
  targetType: AuditTargetType;
  targetId: string;
  requestId: string | null;
  changes: AuditChanges | null;
}

export function toAuditRow(record: AuditRecord): AuditRow {
  return {
    id: record.id,
    tenantId: record.tenantId,
    occurredAt: record.occurredAt,
    action: record.action,
    actorType: record.actor.type,
    actorId: record.actor.type === "api_token" ? record.actor.id : null,
    targetType: record.target.type,
    targetId: record.target.id,
    requestId: record.requestId,
    changes: record.changes,
  };
}
