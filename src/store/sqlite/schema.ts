/**
 * SQLite tables. Times are epoch milliseconds in INTEGER; ids are TEXT compared with SQLite's
 * default BINARY collation, so `ORDER BY id DESC` / `id < ?` follow the 32-hex (UUIDv7, time
 * ordered) string order that keyset pagination relies on.
 */

import { sql } from "drizzle-orm";
import { check, customType, index, integer, sqliteTable, text, unique } from "drizzle-orm/sqlite-core";
import { AUDIT_ACTIONS, type AuditChanges } from "../../domain/audit-types.ts";
import { PERMISSION_MODES, ROLES, SCOPES } from "../../domain/types.ts";

const millis = (name: string) => integer(name, { mode: "number" });

/**
 * BLOB, not TEXT: the exact bytes received come back, never re-encoded. A custom type rather
 * than drizzle's `blob({ mode: "buffer" })`, which copies every value into a Buffer; bun:sqlite
 * already returns a Uint8Array.
 */
const bytes = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "blob",
  fromDriver: (value) => new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
});

function inList(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(", ");
}

export const tenants = sqliteTable(
  "tenants",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    permissionMode: text("permission_mode", { enum: PERMISSION_MODES }).notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [check("tenants_permission_mode_check", sql`${t.permissionMode} in (${sql.raw(inList(PERMISSION_MODES))})`)],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    name: text("name").notNull(),
    scope: text("scope", { enum: SCOPES }).notNull(),
    role: text("role", { enum: ROLES }).notNull(),
    prefix: text("prefix").notNull(),
    digest: text("digest").notNull(),
    createdAt: millis("created_at").notNull(),
    createdBy: text("created_by"),
    expiresAt: millis("expires_at"),
    lastUsedAt: millis("last_used_at"),
    revokedAt: millis("revoked_at"),
  },
  (t) => [
    // Prefixes stay reserved forever, revoked rows included, so the constraint covers every row.
    unique("api_tokens_prefix_unique").on(t.prefix),
    unique("api_tokens_digest_unique").on(t.digest),
    index("api_tokens_tenant_id_idx").on(t.tenantId, t.id),
    check("api_tokens_scope_check", sql`${t.scope} in (${sql.raw(inList(SCOPES))})`),
    check("api_tokens_role_check", sql`${t.role} in (${sql.raw(inList(ROLES))})`),
  ],
);

export const services = sqliteTable(
  "services",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    serviceName: text("service_name").notNull(),
    isMonitored: integer("is_monitored", { mode: "boolean" }).notNull(),
    secretCiphertext: text("secret_ciphertext").notNull(),
    signingSecretPrefix: text("signing_secret_prefix").notNull(),
    previousSecretCiphertext: text("previous_secret_ciphertext"),
    previousSecretExpiresAt: millis("previous_secret_expires_at"),
    secretRotatedAt: millis("secret_rotated_at"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
    // The service's own rate limit: both set, or both null (the deployment's default). No
    // table CHECK here, unlike PostgreSQL: SQLite cannot add one to a table, and drizzle-kit's
    // rebuild (DROP TABLE services) would cascade into events. The store writes both together.
    rateLimitLimit: integer("rate_limit_limit"),
    rateLimitWindowSeconds: integer("rate_limit_window_seconds"),
  },
  (t) => [
    // BINARY collation: "Billing" and "billing" are two different names.
    unique("services_tenant_name_unique").on(t.tenantId, t.serviceName),
    index("services_tenant_id_idx").on(t.tenantId, t.id),
  ],
);

export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    // Denormalized from the service: the feed is read per tenant, in position order. The
    // default exists only so the column can be added to existing rows, which the
    // 0004_feed_backfill migration then fills; every insert sets it.
    tenantId: text("tenant_id").notNull().default(""),
    receivedAt: millis("received_at").notNull(),
    idempotencyKey: text("idempotency_key"),
    payload: bytes("payload").notNull(),
    /** Feed position: assigned inside the write transaction from feed_head (docs/feed.md). */
    position: integer("position", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    // NULL keys are distinct, so events without an Idempotency-Key never collide.
    unique("events_service_idempotency_key_unique").on(t.serviceId, t.idempotencyKey),
    index("events_service_id_idx").on(t.serviceId, t.id),
    index("events_tenant_position_idx").on(t.tenantId, t.position),
    index("events_service_position_idx").on(t.serviceId, t.position),
  ],
);

/**
 * One-time setup codes (docs/console.md): only the keyed digest of a code is stored, like a
 * token's. `used_at` is set, once, by the redemption that creates the tenant.
 */
export const setupCodes = sqliteTable("setup_codes", {
  digest: text("digest").primaryKey(),
  createdAt: millis("created_at").notNull(),
  expiresAt: millis("expires_at").notNull(),
  usedAt: millis("used_at"),
  /** The tenant the redemption created (no foreign key: the code is claimed before the tenant is written). */
  tenantId: text("tenant_id"),
});

/**
 * One row (id 1): the last feed position handed out. Every event batch bumps it first inside
 * its write transaction, so positions are assigned in commit order (docs/feed.md).
 */
export const feedHead = sqliteTable("feed_head", {
  id: integer("id").primaryKey(),
  head: integer("head", { mode: "number" }).notNull(),
});

/**
 * The audit log (docs/api.md, "Audit log"): written only in the transaction of the change it
 * records. Actor and target are flat columns so the list filters are plain indexed equality.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    occurredAt: millis("occurred_at").notNull(),
    action: text("action", { enum: AUDIT_ACTIONS }).notNull(),
    actorType: text("actor_type", { enum: ["api_token", "setup_link", "operator"] }).notNull(),
    actorId: text("actor_id"),
    targetType: text("target_type", { enum: ["tenant", "api_token", "service"] }).notNull(),
    targetId: text("target_id").notNull(),
    requestId: text("request_id"),
    changes: text("changes", { mode: "json" }).$type<AuditChanges>(),
  },
  (t) => [
    index("audit_events_tenant_id_idx").on(t.tenantId, t.id),
    index("audit_events_tenant_action_idx").on(t.tenantId, t.action, t.id),
    index("audit_events_tenant_target_idx").on(t.tenantId, t.targetId, t.id),
    // Retention deletes by age, oldest first.
    index("audit_events_occurred_at_idx").on(t.occurredAt),
    check("audit_events_action_check", sql`${t.action} in (${sql.raw(inList(AUDIT_ACTIONS))})`),
  ],
);
