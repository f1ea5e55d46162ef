/** Protobuf messages (what the rpc layer answers) → the REST JSON shapes of the contract. */
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { ApiToken } from "../../gen/intake/v1/api_tokens_pb.ts";
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
