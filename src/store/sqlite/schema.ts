/**
 * SQLite tables. Times are epoch milliseconds in INTEGER; ids are TEXT compared with SQLite's
 * default BINARY collation, so `ORDER BY id DESC` / `id < ?` follow the 32-hex (UUIDv7, time
 * ordered) string order that keyset pagination relies on.
 */

import { sql } from "drizzle-orm";
import {
  check,
  customType,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  unique,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { AUDIT_ACTIONS, type AuditChanges } from "../../domain/audit-types.ts";
import { INCIDENT_STATUSES, SEVERITIES, STREAM_CHANGES } from "../../domain/incident-types.ts";
import { STATS_OUTCOMES } from "../../domain/stats-types.ts";
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
    /** §17: open incidents with no alert event for this long are resolved (auto); null = never. */
    incidentAutoResolveSeconds: integer("incident_auto_resolve_seconds"),
    /** §19: how its senders sign (docs/ingest.md). */
    signatureScheme: text("signature_scheme", { enum: ["stripe", "standard_webhooks"] })
      .notNull()
      .default("stripe"),
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
    /**
     * Feed position: assigned inside the write transaction from feed_head (docs/feed.md). The
     * row's rowid is its position too (the writer inserts both, migration 0013 moved the rows
     * before it), so the export's global position order and FTS5's rowid order need no index.
     */
    position: integer("position", { mode: "number" }).notNull().default(0),
    /** §18: the payload's top-level `type` (1..255 characters), else null. */
    type: text("type"),
    /** §17: the incident this alert event opened or changed (docs/incidents.md), else null. */
    incidentId: text("incident_id"),
  },
  (t) => [
    // NULL keys are distinct, so events without an Idempotency-Key never collide.
    unique("events_service_idempotency_key_unique").on(t.serviceId, t.idempotencyKey),
    index("events_tenant_position_idx").on(t.tenantId, t.position),
    // A service's listing (newest stored first), its feed filter, §18's service pages, and
    // the services cascade all walk this one; no (service_id, id): each index costs every insert.
    index("events_service_position_idx").on(t.serviceId, t.position),
    // An incident's timeline, oldest first; plain events (no incident) are not in it, so they
    // cost it nothing on insert.
    index("events_incident_id_idx").on(t.incidentId, t.id).where(sql`${t.incidentId} is not null`),
    // §18's listing (docs/search.md) walks the two (…, position) indexes above, newest stored
    // first, and this one for the `service_id` + `type` page; its time bounds are positions
    // found through the primary key, so no index on received_at (each costs every insert).
    index("events_service_type_position_idx").on(t.serviceId, t.type, t.position),
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
    targetType: text("target_type", { enum: ["tenant", "api_token", "service", "incident"] }).notNull(),
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

/**
 * Incidents (SPEC §17, docs/incidents.md). At most one open (triggered or acknowledged)
 * incident per (service, dedup_key) is a property of the table itself: a partial unique
 * index over the open rows, so no code path, instance or race can make a second.
 */
export const incidents = sqliteTable(
  "incidents",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    dedupKey: text("dedup_key").notNull(),
    status: text("status", { enum: INCIDENT_STATUSES }).notNull(),
    severity: text("severity", { enum: SEVERITIES }).notNull(),
    title: text("title").notNull(),
    source: text("source").notNull(),
    alertCount: integer("alert_count").notNull(),
    createdAt: millis("created_at").notNull(),
    lastEventAt: millis("last_event_at").notNull(),
    acknowledgedAt: millis("acknowledged_at"),
    resolvedAt: millis("resolved_at"),
    /** `event` / `api_token` / `auto`, with the raw id for the first two. */
    acknowledgedByType: text("acknowledged_by_type"),
    acknowledgedById: text("acknowledged_by_id"),
    resolvedByType: text("resolved_by_type"),
    resolvedById: text("resolved_by_id"),
  },
  (t) => [
    uniqueIndex("incidents_open_key_unique").on(t.serviceId, t.dedupKey).where(sql`${t.status} <> 'resolved'`),
    // Keyset pages newest first: every list filter has an index whose order is the page's,
    // so a page reads its 21 rows whatever the tenant holds (docs/incidents.md, "Indexes").
    index("incidents_tenant_id_idx").on(t.tenantId, t.id),
    index("incidents_tenant_open_idx").on(t.tenantId, t.id).where(sql`${t.status} <> 'resolved'`),
    index("incidents_tenant_status_idx").on(t.tenantId, t.status, t.id),
    index("incidents_tenant_severity_idx").on(t.tenantId, t.severity, t.id),
    index("incidents_service_id_idx").on(t.serviceId, t.id),
    // No index over `last_event_at` (nor `alert_count`): an alert event that joins an open
    // incident sets only those (incidents.ts `touch`), so it rewrites no index entry (bench
    // scenario 15). Auto-resolve reads a service's open incidents through
    // `incidents_open_key_unique` instead.
    // Retention of resolved incidents, oldest first.
    index("incidents_resolved_at_idx").on(t.resolvedAt).where(sql`${t.status} = 'resolved'`),
    check("incidents_status_check", sql`${t.status} in (${sql.raw(inList(INCIDENT_STATUSES))})`),
    check("incidents_severity_check", sql`${t.severity} in (${sql.raw(inList(SEVERITIES))})`),
  ],
);

/**
 * The incident change stream (§17): one row per change, placed in the tenant's one order by a
 * position from feed_head, taken in the change's own transaction like an event's
 * (docs/incidents.md, "The change stream"). `incident` is the incident right after the change,
 * as JSON text: a reader resuming later still gets what the change made.
 */
export const incidentChanges = sqliteTable(
  "incident_changes",
  {
    position: integer("position", { mode: "number" }).primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    incidentId: text("incident_id")
      .notNull()
      .references(() => incidents.id, { onDelete: "cascade" }),
    change: text("change", { enum: STREAM_CHANGES }).notNull(),
    occurredAt: millis("occurred_at").notNull(),
    incident: text("incident").notNull(),
  },
  (t) => [
    index("incident_changes_tenant_position_idx").on(t.tenantId, t.position),
    index("incident_changes_service_position_idx").on(t.serviceId, t.position),
    index("incident_changes_incident_idx").on(t.incidentId),
    check("incident_changes_change_check", sql`${t.change} in (${sql.raw(inList(STREAM_CHANGES))})`),
  ],
);

/**
 * Ingest outcomes per service per 5-minute bucket (SPEC §22, docs/search.md "Service stats"):
 * added to by every instance's flush (upsert-add), gone with their service.
 */
export const serviceStats = sqliteTable(
  "service_stats",
  {
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    tenantId: text("tenant_id").notNull(),
    bucketStart: millis("bucket_start").notNull(),
    outcome: text("outcome").notNull(),
    count: integer("count", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.serviceId, t.bucketStart, t.outcome] }),
    // Retention of old buckets.
    index("service_stats_bucket_idx").on(t.bucketStart),
    check("service_stats_outcome_check", sql`${t.outcome} in (${sql.raw(inList(STATS_OUTCOMES))})`),
  ],
);

/**
 * The export to NATS JetStream (SPEC §21, docs/export.md): one row per exporter (`nats`). The
 * lease (`holder` until `lease_expires_at`, epoch ms by the store's clock) picks the one
 * instance that exports; `position` is the feed position up to which JetStream acknowledged
 * every event and incident change. Only the holder moves it.
 */
export const exportState = sqliteTable("export_state", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  leaseExpiresAt: integer("lease_expires_at", { mode: "number" }).notNull(),
  position: integer("position", { mode: "number" }).notNull(),
});
