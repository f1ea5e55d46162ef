/**
 * PostgreSQL tables. Times are epoch milliseconds in `bigint` (exactly the domain's numbers,
 * no driver Date parsing or session time zone involved); ids are `text COLLATE "C"` so that
 * btree order is byte order, which for 32 lowercase hex equals the UUIDv7 time order that
 * keyset pagination relies on, whatever the database's default collation.
 */

import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  unique,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { AUDIT_ACTIONS, type AuditChanges } from "../../domain/audit-types.ts";
import { INCIDENT_STATUSES, SEVERITIES, STREAM_CHANGES } from "../../domain/incident-types.ts";
import { STATS_OUTCOMES } from "../../domain/stats-types.ts";
import { PERMISSION_MODES, ROLES, SCOPES } from "../../domain/types.ts";

/** Byte-ordered text: the order of `ORDER BY id DESC` / `id < $before` is the hex string order. */
const idText = customType<{ data: string; driverData: string }>({
  dataType: () => 'text COLLATE "C"',
});

/** The exact bytes received; Bun's client hands `bytea` back as a Buffer, narrowed to a plain view. */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (value) => new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
});

const millis = (name: string) => bigint(name, { mode: "number" });

function inList(values: readonly string[]): string {
  return values.map((v) => `'${v}'`).join(", ");
}

export const tenants = pgTable(
  "tenants",
  {
    id: idText("id").primaryKey(),
    name: text("name").notNull(),
    permissionMode: text("permission_mode", { enum: PERMISSION_MODES }).notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (t) => [check("tenants_permission_mode_check", sql`${t.permissionMode} in (${sql.raw(inList(PERMISSION_MODES))})`)],
);

export const apiTokens = pgTable(
  "api_tokens",
  {
    id: idText("id").primaryKey(),
    tenantId: idText("tenant_id")
      .notNull()
      .references(() => tenants.id),
    name: text("name").notNull(),
    scope: text("scope", { enum: SCOPES }).notNull(),
    role: text("role", { enum: ROLES }).notNull(),
    prefix: text("prefix").notNull(),
    digest: text("digest").notNull(),
    createdAt: millis("created_at").notNull(),
    createdBy: idText("created_by"),
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

export const services = pgTable(
  "services",
  {
    id: idText("id").primaryKey(),
    tenantId: idText("tenant_id")
      .notNull()
      .references(() => tenants.id),
    serviceName: text("service_name").notNull(),
    isMonitored: boolean("is_monitored").notNull(),
    secretCiphertext: text("secret_ciphertext").notNull(),
    signingSecretPrefix: text("signing_secret_prefix").notNull(),
    previousSecretCiphertext: text("previous_secret_ciphertext"),
    previousSecretExpiresAt: millis("previous_secret_expires_at"),
    secretRotatedAt: millis("secret_rotated_at"),
    createdAt: millis("created_at").notNull(),
    updatedAt: millis("updated_at").notNull(),
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
    // A service's own rate limit is whole or absent (absent: the deployment's default).
    check("services_rate_limit_check", sql`(${t.rateLimitLimit} is null) = (${t.rateLimitWindowSeconds} is null)`),
    // Deterministic collation: equality is byte equality, so "Billing" and "billing" are two names.
    unique("services_tenant_name_unique").on(t.tenantId, t.serviceName),
    index("services_tenant_id_idx").on(t.tenantId, t.id),
  ],
);

export const events = pgTable(
  "events",
  {
    id: idText("id").primaryKey(),
    serviceId: idText("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    // Denormalized from the service: the feed is read per tenant, in position order. The
    // default exists only so the column can be added to existing rows, which the
    // 0004_feed_backfill migration then fills; every insert sets it.
    tenantId: idText("tenant_id").notNull().default(""),
    receivedAt: millis("received_at").notNull(),
    idempotencyKey: text("idempotency_key"),
    payload: bytea("payload").notNull(),
    /** Feed position: assigned under feed_head's row lock, so in commit order (docs/feed.md). */
    position: bigint("position", { mode: "number" }).notNull().default(0),
    /** §18: the payload's top-level `type` (1..255 characters), else null. */
    type: text("type"),
    /** §17: the incident this alert event opened or changed (docs/incidents.md), else null. */
    incidentId: idText("incident_id"),
  },
  (t) => [
    // NULL keys are distinct, so events without an Idempotency-Key never collide.
    unique("events_service_idempotency_key_unique").on(t.serviceId, t.idempotencyKey),
    index("events_tenant_position_idx").on(t.tenantId, t.position),
    // A service's listing (newest stored first), its feed filter, §18's service pages, and
    // the services cascade all walk this one; no (service_id, id): each index costs every insert.
    index("events_service_position_idx").on(t.serviceId, t.position),
    // The export (docs/export.md) reads every tenant's events past one position, in order.
    // BRIN, not a B-tree: positions follow the heap's append order, so a block range's
    // min/max finds the tail the export reads at a fraction of a B-tree's upkeep per insert
    // (docs/export.md, "Indexes").
    index("events_position_brin").using("brin", t.position),
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
export const setupCodes = pgTable("setup_codes", {
  digest: text("digest").primaryKey(),
  createdAt: millis("created_at").notNull(),
  expiresAt: millis("expires_at").notNull(),
  usedAt: millis("used_at"),
  /** The tenant the redemption created (no foreign key: the code is claimed before the tenant is written). */
  tenantId: idText("tenant_id"),
});

/**
 * One row (id 1): the last feed position handed out. Every event batch bumps it as its first
 * write; the row lock it takes is held to commit, so batches commit in position order and a
 * reader only ever sees a prefix of the positions (docs/feed.md).
 */
export const feedHead = pgTable("feed_head", {
  id: bigint("id", { mode: "number" }).primaryKey(),
  head: bigint("head", { mode: "number" }).notNull(),
});

/**
 * The audit log (docs/api.md, "Audit log"): written only in the transaction of the change it
 * records. Actor and target are flat columns so the list filters are plain indexed equality.
 */
export const auditEvents = pgTable(
  "audit_events",
  {
    id: idText("id").primaryKey(),
    tenantId: idText("tenant_id")
      .notNull()
      .references(() => tenants.id),
    occurredAt: millis("occurred_at").notNull(),
    action: text("action", { enum: AUDIT_ACTIONS }).notNull(),
    actorType: text("actor_type", { enum: ["api_token", "setup_link", "operator"] }).notNull(),
    actorId: idText("actor_id"),
    targetType: text("target_type", { enum: ["tenant", "api_token", "service", "incident"] }).notNull(),
    targetId: idText("target_id").notNull(),
    requestId: text("request_id"),
    changes: jsonb("changes").$type<AuditChanges>(),
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
export const incidents = pgTable(
  "incidents",
  {
    id: idText("id").primaryKey(),
    tenantId: idText("tenant_id")
      .notNull()
      .references(() => tenants.id),
    serviceId: idText("service_id")
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
    acknowledgedById: idText("acknowledged_by_id"),
    resolvedByType: text("resolved_by_type"),
    resolvedById: idText("resolved_by_id"),
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
    // incident changes only those, so on PostgreSQL its new row version is a HOT update (same
    // page, no index entry; the table's fillfactor, set by hand in migration 0013, leaves the
    // page room for it) and on SQLite it rewrites no index (bench scenario 15). Auto-resolve
    // reads a service's open incidents through `incidents_open_key_unique` instead.
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
export const incidentChanges = pgTable(
  "incident_changes",
  {
    position: bigint("position", { mode: "number" }).primaryKey(),
    tenantId: idText("tenant_id")
      .notNull()
      .references(() => tenants.id),
    serviceId: idText("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    incidentId: idText("incident_id")
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
export const serviceStats = pgTable(
  "service_stats",
  {
    serviceId: idText("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    tenantId: idText("tenant_id").notNull(),
    bucketStart: millis("bucket_start").notNull(),
    outcome: text("outcome").notNull(),
    count: bigint("count", { mode: "number" }).notNull(),
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
 * lease (`holder` until `lease_expires_at`, epoch ms by the database's clock) picks the one
 * instance that exports; `position` is the feed position up to which JetStream acknowledged
 * every event and incident change. Only the holder moves it.
 */
export const exportState = pgTable("export_state", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  leaseExpiresAt: millis("lease_expires_at").notNull(),
  position: bigint("position", { mode: "number" }).notNull(),
});
