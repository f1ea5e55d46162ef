/** Domain records. Timestamps are epoch milliseconds (UTC); ids are 32 lowercase hex (a UUIDv7 without dashes). */

export const SCOPES = ["read_only", "read_write"] as const;
export type Scope = (typeof SCOPES)[number];

/** Ranked highest first: owner > admin > member. */
export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSION_MODES = ["flat", "role_based"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export interface TenantRecord {
  /** Raw UUID with dashes. */
  id: string;
  name: string;
  permissionMode: PermissionMode;
  createdAt: number;
}

export interface TokenRecord {
  id: string;
  tenantId: string;
  name: string;
  scope: Scope;
  role: Role;
  /** `service_live_` + first 8 body chars; unique across every row ever created. */
  prefix: string;
  /** Lowercase hex HMAC-SHA256(pepper, token). */
  digest: string;
  createdAt: number;
  /** Id (32 hex) of the parent token; null for a tenant's first token. */
  createdBy: string | null;
  expiresAt: number | null;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** A token as a list page shows it: no tenant and no digest (docs/store.md, "List pages"). */
export type TokenSummary = Omit<TokenRecord, "tenantId" | "digest">;

export interface ServiceRecord {
  id: string;
  tenantId: string;
  serviceName: string;
  isMonitored: boolean;
  /** AES-256-GCM sealed signing secret (base64), bound to the service id. */
  secretCiphertext: string;
  signingSecretPrefix: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: number | null;
  secretRotatedAt: number | null;
  createdAt: number;
  updatedAt: number;
  /**
   * The service's own ingest rate limit (`rate_limit.limit` / `.window_seconds`): both set, or
   * both null for the deployment's default (INTAKE_RATE_LIMIT_INGEST).
   */
  rateLimitLimit: number | null;
  rateLimitWindowSeconds: number | null;
  /** §17: an open incident with no alert event for this long is resolved (auto); null = never. */
  incidentAutoResolveSeconds: number | null;
  /** §19: how its senders sign (docs/ingest.md). */
  signatureScheme: SignatureScheme;
}

/** §19: Stripe's `X-Service-Signature` (the default) or Standard Webhooks' `webhook-*` headers. */
export type SignatureScheme = "stripe" | "standard_webhooks";
export const SIGNATURE_SCHEMES: readonly SignatureScheme[] = ["stripe", "standard_webhooks"];

/**
 * A service as a list page shows it: no tenant (the list is one tenant's) and no sealed secrets,
 * which a list never shows, so the store does not read them (docs/store.md, "List pages").
 */
export type ServiceSummary = Omit<ServiceRecord, "tenantId" | "secretCiphertext" | "previousSecretCiphertext">;

export interface EventRecord {
  id: string;
  tenantId: string;
  serviceId: string;
  receivedAt: number;
  idempotencyKey: string | null;
  /** The exact bytes received. */
  payload: Uint8Array;
  /** Place in the tenant's feed (docs/feed.md). */
  position: number;
  /** §18: the payload's top-level `type` (1..255 characters), else null. */
  type: string | null;
  /** §17: the incident this alert event opened or changed (raw 32 hex), else null. */
  incidentId: string | null;
}

/** An event as §18's search returns it: with its `type` and `incident_id` columns (raw id). */
export interface FoundEvent extends EventRecord {
  type: string | null;
  incidentId: string | null;
}

/** Who is calling: what a verified bearer token resolves to. */
export interface Principal {
  tokenId: string;
  tenantId: string;
  scope: Scope;
  role: Role;
  permissionMode: PermissionMode;
}

/** Injected time source, so rules about expiry and grace windows are testable. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
