/** Domain records → protobuf messages. Timestamps travel as google.protobuf.Timestamp. */
import { create, fromJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromMs, timestampMs, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { type ApiToken, ApiTokenSchema } from "../../gen/intake/v1/api_tokens_pb.ts";
import { type AuditEvent, AuditEventSchema } from "../../gen/intake/v1/audit_pb.ts";
import { type Event, EventSchema } from "../../gen/intake/v1/ingest_pb.ts";
import { RateLimitSchema, type Service, ServiceSchema } from "../../gen/intake/v1/services_pb.ts";
import { type Tenant, TenantSchema } from "../../gen/intake/v1/tenant_pb.ts";
import type { AuditRecord, AuditTarget } from "../domain/audit.ts";
import { formatId } from "../domain/ids.ts";
import { isRepresentableTime } from "../domain/time.ts";
import type { EventRecord, ServiceSummary, TenantRecord, TokenSummary } from "../domain/types.ts";

/**
 * Every timestamp of a response is built here. One the encoders cannot write (a row stored
 * before the domain's range check) fails inside the method, where rpcMethod turns it into
 * the fixed internal_error, instead of inside connect-es's serializer, whose error would
 * carry protobuf-es's own message to the caller.
 */
export function ts(ms: number): Timestamp {
  if (!isRepresentableTime(ms)) throw new RangeError(`timestamp out of range: ${ms}`);
  return timestampFromMs(ms);
}

function optionalTs(ms: number | null): Timestamp | undefined {
  return ms === null ? undefined : ts(ms);
}

/**
 * A request's Timestamp → epoch ms. NaN for one protobuf calls invalid (nanos outside
 * 0..999,999,999), which the domain's range check refuses with a 400 like any other bad time.
 */
export function msOf(value: Timestamp): number {
  if (!Number.isInteger(value.nanos) || value.nanos < 0 || value.nanos > 999_999_999) return Number.NaN;
  return timestampMs(value);
}

/** A full record or a list's summary: the message needs nothing a summary leaves out. */
export function tokenMessage(record: TokenSummary): ApiToken {
  return create(ApiTokenSchema, {
    id: formatId("tok", record.id),
    name: record.name,
    scope: record.scope,
    role: record.role,
    prefix: record.prefix,
    createdAt: ts(record.createdAt),
    createdBy: record.createdBy === null ? undefined : formatId("tok", record.createdBy),
    expiresAt: optionalTs(record.expiresAt),
    lastUsedAt: optionalTs(record.lastUsedAt),
    revokedAt: optionalTs(record.revokedAt),
  });
}

/** A full record or a list's summary: never a secret, a ciphertext or the tenant. */
export function serviceMessage(record: ServiceSummary): Service {
  return create(ServiceSchema, {
    id: formatId("svc", record.id),
    serviceName: record.serviceName,
    isMonitored: record.isMonitored,
    signingSecretPrefix: record.signingSecretPrefix,
    createdAt: ts(record.createdAt),
    updatedAt: ts(record.updatedAt),
    secretRotatedAt: optionalTs(record.secretRotatedAt),
    previousSecretExpiresAt: optionalTs(record.previousSecretExpiresAt),
    rateLimit:
      record.rateLimitLimit === null || record.rateLimitWindowSeconds === null
        ? undefined
        : create(RateLimitSchema, { limit: record.rateLimitLimit, windowSeconds: record.rateLimitWindowSeconds }),
  });
}

/** Allow-list: exactly the four public fields, whatever else the record grows. */
export function tenantMessage(record: TenantRecord): Tenant {
  return create(TenantSchema, {
    id: record.id,
    name: record.name,
    permissionMode: record.permissionMode,
    createdAt: ts(record.createdAt),
  });
}

export function eventMessage(record: EventRecord): Event {
  return create(EventSchema, {
    id: formatId("evt", record.id),
    serviceId: formatId("svc", record.serviceId),
    receivedAt: ts(record.receivedAt),
    idempotencyKey: record.idempotencyKey ?? undefined,
    payload: record.payload,
  });
}

/** A target's public id: `tok_…`, `svc_…`, or the tenant's UUID as it is. */
function targetId(target: AuditTarget): string {
  switch (target.type) {
    case "api_token":
      return formatId("tok", target.id);
    case "service":
      return formatId("svc", target.id);
    case "tenant":
      return target.id;
  }
}

export function auditMessage(record: AuditRecord): AuditEvent {
  const changes: Record<string, { from: Value; to: Value }> = {};
  for (const [field, change] of Object.entries(record.changes ?? {})) {
    changes[field] = { from: fromJson(ValueSchema, change.from), to: fromJson(ValueSchema, change.to) };
  }
  return create(AuditEventSchema, {
    id: formatId("aud", record.id),
    occurredAt: ts(record.occurredAt),
    action: record.action,
    actor: {
      type: record.actor.type,
      id: record.actor.type === "api_token" ? formatId("tok", record.actor.id) : undefined,
    },
    target: { type: record.target.type, id: targetId(record.target) },
    requestId: record.requestId ?? undefined,
    changes,
  });
}
