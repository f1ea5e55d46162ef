/**
 * Domain records → protobuf messages. Timestamps travel as google.protobuf.Timestamp.
 *
 * The messages of the list pages (tokens, services, audit events) and their timestamps are
 * written as object literals, which is what a protobuf-es v2 message is (a plain object with
 * its `$typeName`), instead of through the reflective `create()`: a page of 20 services cost
 * ~14 µs in `create()` and ~2 µs as literals (bench/README.md, "11, 12. List pages"). Typed as
 * `Whole<…>`, a literal must name every field, so TypeScript still catches a forgotten one.
 */
import { create, fromJson, type Message } from "@bufbuild/protobuf";
import { type Timestamp, timestampMs, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ApiToken } from "../../gen/intake/v1/api_tokens_pb.ts";
import type { AuditChange, AuditEvent } from "../../gen/intake/v1/audit_pb.ts";
import { type Event, EventSchema, type IngestResponse } from "../../gen/intake/v1/ingest_pb.ts";
import type { Service } from "../../gen/intake/v1/services_pb.ts";
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
  // protobuf-es's timestampFromMs, without create() and protoInt64's checks: ms is in range.
  const seconds = Math.floor(ms / 1000);
  return { $typeName: "google.protobuf.Timestamp", seconds: BigInt(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

/**
 * Every field of a message, the optional ones too (undefined when unset, which protobuf-es
 * reads as not set): an object literal of this type cannot leave a field out.
 */
export type Whole<M extends Message> = {
  [K in Exclude<keyof M, "$unknown">]-?: undefined extends M[K] ? M[K] | undefined : M[K];
};

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
  const message: Whole<ApiToken> = {
    $typeName: "intake.v1.ApiToken",
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
  };
  return message;
}

/** A full record or a list's summary: never a secret, a ciphertext or the tenant. */
export function serviceMessage(record: ServiceSummary): Service {
  const message: Whole<Service> = {
    $typeName: "intake.v1.Service",
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
        : {
            $typeName: "intake.v1.RateLimit",
            limit: record.rateLimitLimit,
            windowSeconds: record.rateLimitWindowSeconds,
          },
  };
  return message;
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
    type: record.type ?? undefined,
    incidentId: record.incidentId === null ? undefined : formatId("inc", record.incidentId),
  });
}

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

/** Ingest's answer, once per event: a literal, like the list pages' messages. */
export function ingestResponseMessage(
  rawId: string,
  receivedAt: number,
  duplicate: boolean,
  incident: { dedupKey: string; incidentId: string | null } | null = null,
): IngestResponse {
  const message: Whole<IngestResponse> = {
    $typeName: "intake.v1.IngestResponse",
    id: formatId("evt", rawId),
    receivedAt: ts(receivedAt),
    duplicate,
    dedupKey: incident?.dedupKey,
    incidentId: incident?.incidentId == null ? undefined : formatId("inc", incident.incidentId),
  };
  return message;
}
