/** An audit event's public shapes: its REST JSON and its protobuf message, from one record. */
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { AuditChange, AuditEvent } from "../../gen/intake/v1/audit_pb.ts";
import type { AuditRecord, AuditTarget } from "../domain/audit-types.ts";
import { formatId } from "../domain/ids.ts";
import { isoOfMs, ts, type Whole } from "./time.ts";

/** A target's public id: `tok_…`, `svc_…`, `inc_…`, or the tenant's UUID as it is. */
function targetId(target: AuditTarget): string {
  switch (target.type) {
    case "api_token":
      return formatId("tok", target.id);
    case "service":
      return formatId("svc", target.id);
    case "incident":
      return formatId("inc", target.id);
    case "tenant":
      return target.id;
  }
}

/** `actor.id` only for a token; `changes` only when there are some (updates), as stored. */
export function auditJson(record: AuditRecord) {
  const { actor } = record;
  return {
    id: formatId("aud", record.id),
    occurred_at: isoOfMs(record.occurredAt),
    action: record.action,
    actor: actor.type === "api_token" ? { type: actor.type, id: formatId("tok", actor.id) } : { type: actor.type },
    target: { type: record.target.type, id: targetId(record.target) },
    request_id: record.requestId,
    ...(record.changes !== null && Object.keys(record.changes).length > 0 && { changes: record.changes }),
  };
}

export function auditMessage(record: AuditRecord): AuditEvent {
  const changes: Record<string, AuditChange> = {};
  if (record.changes !== null) {
    for (const [field, change] of Object.entries(record.changes)) {
      const value: Whole<AuditChange> = {
        $typeName: "intake.v1.AuditChange",
        from: fromJson(ValueSchema, change.from),
        to: fromJson(ValueSchema, change.to),
      };
      changes[field] = value;
    }
  }
  const message: Whole<AuditEvent> = {
    $typeName: "intake.v1.AuditEvent",
    id: formatId("aud", record.id),
    occurredAt: ts(record.occurredAt),
    action: record.action,
    actor: {
      $typeName: "intake.v1.AuditActor",
      type: record.actor.type,
      id: record.actor.type === "api_token" ? formatId("tok", record.actor.id) : undefined,
    },
    target: { $typeName: "intake.v1.AuditTarget", type: record.target.type, id: targetId(record.target) },
    requestId: record.requestId ?? undefined,
    changes,
  };
  return message;
}
