/** Protobuf messages (what the rpc layer answers) → the REST JSON shapes of the contract. */

import { toJson } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ApiToken } from "../../gen/intake/v1/api_tokens_pb.ts";
import type { AuditEvent } from "../../gen/intake/v1/audit_pb.ts";
import type { Service } from "../../gen/intake/v1/services_pb.ts";
import type { Tenant } from "../../gen/intake/v1/tenant_pb.ts";

/** RFC 3339 UTC, always with milliseconds. */
export function iso(value: Timestamp | undefined): string | null {
  if (!value) return null;
  return new Date(Number(value.seconds) * 1000 + Math.floor(value.nanos / 1e6)).toISOString();
}

export function tokenJson(m: ApiToken) {
  return {
    id: m.id,
    name: m.name,
    scope: m.scope,
    role: m.role,
    prefix: m.prefix,
    created_at: iso(m.createdAt),
    created_by: m.createdBy ?? null,
    expires_at: iso(m.expiresAt),
    last_used_at: iso(m.lastUsedAt),
    revoked_at: iso(m.revokedAt),
  };
}

export function serviceJson(m: Service) {
  return {
    id: m.id,
    service_name: m.serviceName,
    is_monitored: m.isMonitored,
    signing_secret_prefix: m.signingSecretPrefix,
    created_at: iso(m.createdAt),
    updated_at: iso(m.updatedAt),
    secret_rotated_at: iso(m.secretRotatedAt),
    previous_secret_expires_at: iso(m.previousSecretExpiresAt),
    rate_limit: m.rateLimit ? { limit: m.rateLimit.limit, window_seconds: m.rateLimit.windowSeconds } : null,
  };
}

/** Allow-list serialization: exactly these four keys, ever. */
export function tenantJson(m: Tenant) {
  return { id: m.id, name: m.name, permission_mode: m.permissionMode, created_at: iso(m.createdAt) };
}

/** `actor.id` only for a token; `changes` only when there are some (updates). */
export function auditJson(m: AuditEvent) {
  const changes = Object.entries(m.changes);
  return {
    id: m.id,
    occurred_at: iso(m.occurredAt),
    action: m.action,
    actor: m.actor?.id === undefined ? { type: m.actor?.type ?? "" } : { type: m.actor.type, id: m.actor.id },
    target: { type: m.target?.type ?? "", id: m.target?.id ?? "" },
    request_id: m.requestId ?? null,
    ...(changes.length > 0 && {
      changes: Object.fromEntries(
        changes.map(([field, change]) => [
          field,
          {
            from: change.from ? toJson(ValueSchema, change.from) : null,
            to: change.to ? toJson(ValueSchema, change.to) : null,
          },
        ]),
      ),
    }),
  };
}
