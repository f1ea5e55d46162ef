import type { AuditAction, AuditRecord, AuditTarget } from "../audit-types.ts";
import type {
  Alert,
  AlertEventInput,
  AlertOutcome,
  IncidentActor,
  IncidentChangeRecord,
  IncidentRecord,
  IncidentStatus,
  Severity,
} from "../incident-types.ts";
import type { StatsCount, StatsRow } from "../stats-types.ts";
import type {
  EventRecord,
  FoundEvent,
  ServiceRecord,
  ServiceSummary,
  SignatureScheme,
  TenantRecord,
  TokenRecord,
  TokenSummary,
} from "../types.ts";
import type { RateLimit } from "./rate-limiter.ts";

/**
 * Keyset page request: rows strictly older (smaller id) than `before`, newest first.
 * Callers ask for one row more than they show to learn whether a next page exists.
 */
export interface PageQuery {
  limit: number;
  before?: string;
}

/** A page of a list in feed position order, newest first: rows with position < `before`. */
export interface PositionPageQuery {
  limit: number;
  before?: number;
}

/**
 * The audit record of an update, made from the row before and after it inside the update's
 * transaction (so `changes` is what this transaction changed); null writes no record.
 */
export type AuditOfUpdate<R> = (before: R, after: R) => AuditRecord | null;

export interface TenantRepo {
  get(id: string): Promise<TenantRecord | null>;
  /** Whether the store holds any tenant (`serve` on an empty store says how to set one up). */
  any(): Promise<boolean>;
  /**
   * Returns the updated tenant, or null when it does not exist. The audit record is written
   * in the same transaction.
   */
  rename(id: string, name: string, audit: AuditOfUpdate<TenantRecord>): Promise<TenantRecord | null>;
  /** How many tenants carry exactly this name (names need not be unique; the CLI warns). */
  countNamed(name: string): Promise<number>;
}

export type RevokeOutcome =
  | { kind: "revoked"; record: TokenRecord }
  /** Already revoked: the record keeps its first revoked_at. */
  | { kind: "already_revoked"; record: TokenRecord }
  | { kind: "not_found" }
  /**
   * Revoking the target would leave the tenant without an active owner read_write token, or
   * without one that never expires (domain/access.ts `ownerToKeep`); nothing changed.
   */
  | { kind: "last_owner" };

export interface TokenRepo {
  findByDigest(digest: string): Promise<TokenRecord | null>;
  get(tenantId: string, id: string): Promise<TokenRecord | null>;
  list(tenantId: string, query: PageQuery & { includeRevoked: boolean }): Promise<TokenSummary[]>;
  /**
   * `prefix_taken` when the prefix (unique over all rows ever) is already used: then nothing,
   * the audit record neither, is written. Otherwise the token and its audit record, in one transaction.
   */
  insert(record: TokenRecord, audit: AuditRecord): Promise<"ok" | "prefix_taken">;
  /**
   * Atomically: revoke unless already revoked, refusing (`last_owner`) when the target is
   * active, owner and read_write and no other such token of the tenant is active at `now`, or
   * when the target never expires and no other such token that never expires is active.
   * Concurrent revocations of the last two (non-expiring) owner tokens cannot both succeed. The audit
   * record is written, in the same transaction, only when the outcome is `revoked`.
   */
  revoke(tenantId: string, id: string, now: number, audit: AuditRecord): Promise<RevokeOutcome>;
  /** Best-effort bookkeeping, called off the request path. */
  touchLastUsed(updates: ReadonlyArray<{ id: string; at: number }>): Promise<void>;
}

export interface SecretRotation {
  ciphertext: string;
  prefix: string;
  rotatedAt: number;
  previousExpiresAt: number;
}

/** The updatable fields of a service (PATCH /v1/services/{id}). */
export interface ServiceChanges {
  isMonitored?: boolean;
  rateLimit?: RateLimit | null;
  /** §17: null = never; else 60..2592000, validated by the domain. */
  incidentAutoResolveSeconds?: number | null;
  signatureScheme?: SignatureScheme;
}

/**
 * Every mutation takes its audit record and writes it in its own transaction: neither is ever
 * written without the other (docs/api.md, "Audit log").
 */
export interface ServiceRepo {
  /** `name_taken` when (tenant, service_name) exists; case-sensitive. Nothing is written then. */
  insert(record: ServiceRecord, audit: AuditRecord): Promise<"ok" | "name_taken">;
  get(tenantId: string, id: string): Promise<ServiceRecord | null>;
  /** Tenant-less lookup for ingest, where the caller is a sender, not a token. */
  getById(id: string): Promise<ServiceRecord | null>;
  list(tenantId: string, query: PageQuery): Promise<ServiceSummary[]>;
  /**
   * Applies the given fields (absent ones stay as they are) and sets `updated_at`; returns the
   * updated row, or null when it does not exist. `rateLimit: null` clears the service's own limit.
   * The audit record is made from the row before and after, in the same transaction.
   */
  update(
    tenantId: string,
    id: string,
    changes: ServiceChanges,
    now: number,
    audit: AuditOfUpdate<ServiceRecord>,
  ): Promise<ServiceRecord | null>;
  /** In one statement: current secret becomes previous, the new one current. */
  rotateSecret(
    tenantId: string,
    id: string,
    rotation: SecretRotation,
    audit: AuditRecord,
  ): Promise<ServiceRecord | null>;
  /** Deletes the service with all its events, incidents and stats; false when it did not exist (and no record is written). */
  delete(tenantId: string, id: string, audit: AuditRecord): Promise<boolean>;
}

export interface NewEvent {
  id: string;
  /** The service's tenant: the feed the event is placed in. */
  tenantId: string;
  serviceId: string;
  receivedAt: number;
  idempotencyKey: string | null;
  payload: Uint8Array;
  /** §18: `eventType(body)`, written to `events.type`; absent = null. */
  type?: string | null;
  /** §17: the validated alert of an alert event (applied in the batch's transaction); absent = none. */
  alert?: Alert | null;
}

export type InsertEventResult =
  /** `incident`: what an alert event did (only for an alert event). */
  | { kind: "inserted"; incident?: AlertOutcome }
  /** Idempotency-Key already used in this service: the first event's id and time. */
  | { kind: "duplicate"; id: string; receivedAt: number };

export interface EventRepo {
  /**
   * Inserts a batch in ONE transaction and commits durably before resolving (group commit).
   * Results are positional. A repeated idempotency key (even within the batch) is a
   * `duplicate` of the first, decided by a unique index, never read-then-write.
   * If the transaction fails, the promise rejects and nothing of the batch is stored.
   * The alert effects of the `inserted` alert events (§17) are applied in the same
   * transaction, in batch order; a duplicate applies nothing.
   *
   * Invariant the callers keep (docs/search.md, "Time bounds"): an event's id is a UUIDv7 of
   * its `receivedAt` (domain/ids.ts, the same clock) give or take ID_TIME_SLACK_MS, and the
   * batch commits within that slack of its events' receipt. §18's time bounds and retention
   * find events by id through the primary key instead of an index on `received_at`.
   */
  insertBatch(events: ReadonlyArray<NewEvent>): Promise<InsertEventResult[]>;
  /** A service's events, newest stored first (position descending, docs/api.md "Pagination"). */
  list(serviceId: string, query: PositionPageQuery): Promise<EventRecord[]>;
  /**
   * The feed (docs/feed.md): the tenant's committed events with position > `after`, in
   * position order. Positions are assigned by insertBatch in commit order, so what a read
   * returns is always a prefix of the final order: nothing can later appear before it.
   */
  feed(tenantId: string, query: FeedQuery): Promise<EventRecord[]>;
  /** The tenant's highest committed position; 0 when it has no events. */
  feedHead(tenantId: string): Promise<number>;
  get(tenantId: string, id: string): Promise<EventRecord | null>;
  /**
   * Retention: deletes at most `batch` events received before `cutoff` (epoch ms), their
   * idempotency keys with them, in one short transaction; resolves with how many went.
   */
  deleteOlderThan(cutoff: number, batch: number): Promise<number>;
  /**
   * §18 (docs/search.md): the tenant's events matching every filter given, newest stored first
   * (position descending), with position < `before`. `terms` (validated by
   * domain/search.ts) must each occur, case-insensitively, as a substring of the payload text,
   * answered from the store's own text index; never pass terms while the store was opened
   * with `eventSearch: false` (there is no index then, and the domain answers search_disabled).
   * The time bounds are exact filters on `receivedAt`; the store may also bound the walk by
   * positions found through the ids, which relies on the invariant of `insertBatch` above.
   */
  search(tenantId: string, query: EventSearchQuery): Promise<FoundEvent[]>;
}

/** §18's filters, each optional and ANDed; ids raw, times epoch ms. */
export interface EventSearchQuery {
  serviceId?: string | undefined;
  type?: string | undefined;
  incidentId?: string | undefined;
  /** Inclusive. */
  receivedAfter?: number | undefined;
  /** Exclusive. */
  receivedBefore?: number | undefined;
  /** 1..8 terms of at least 3 characters each (domain/search.ts). */
  terms?: readonly string[] | undefined;
  limit: number;
  /** Keyset: only events with a lower position (the previous page's last row's). */
  before?: number | undefined;
}

/**
 * Ingest outcomes per service per bucket (SPEC §22, docs/search.md "Service stats"). Written by
 * each instance's in-memory aggregator on an interval, never per request.
 */
export interface ServiceStatsRepo {
  /**
   * Adds the counts (upsert-add: instances flushing the same bucket sum), in one transaction.
   * Counts of a service that does not exist (never did, or deleted since) are dropped.
   */
  add(counts: ReadonlyArray<StatsCount>): Promise<void>;
  /**
   * The service's counts with `from <= bucket_start < to`, summed into buckets of `bucketMs`
   * (a multiple of the stored bucket) aligned to the epoch, oldest first; nothing for a
   * service of another tenant. Buckets without counts are absent.
   */
  read(tenantId: string, serviceId: string, range: { from: number; to: number; bucketMs: number }): Promise<StatsRow[]>;
  /** Retention: deletes at most `batch` buckets starting before `cutoff`; resolves with how many went. */
  deleteOlderThan(cutoff: number, batch: number): Promise<number>;
}

export interface FeedQuery {
  after: number;
  limit: number;
  /**
   * At most this many payload bytes in all (docs/feed.md, "Byte budget"): the read stops before
   * the event that would pass it, but always returns the first event however large. The store
   * decides where to stop from the payloads' lengths alone, so it never holds more than that.
   */
  maxBytes?: number | undefined;
  /** Only this service's events (raw id). */
  serviceId?: string | undefined;
}

/** A one-time setup code: only its keyed digest is stored, like a token's. */
export interface SetupCodeRecord {
  digest: string;
  createdAt: number;
  expiresAt: number;
}

export interface SetupCodeRepo {
  insert(record: SetupCodeRecord): Promise<void>;
}

/** Keyset page of a tenant's audit events, newest first, optionally filtered. */
export interface AuditQuery extends PageQuery {
  action?: AuditAction;
  target?: AuditTarget;
}

/** Audit events are written only by the mutations above, never on their own. */
export interface AuditRepo {
  list(tenantId: string, query: AuditQuery): Promise<AuditRecord[]>;
  /**
   * Retention: deletes at most `batchSize` events with `occurredAt < cutoff` (oldest first) and
   * returns how many it deleted; a sweeper calls it until it returns less than `batchSize`.
   */
  deleteOlderThan(cutoff: number, batchSize: number): Promise<number>;
}

/** Keyset page of a tenant's incidents, newest first; every filter optional, combined with AND. */
export interface IncidentQuery extends PageQuery {
  /** `open` = triggered or acknowledged. */
  status?: "open" | IncidentStatus;
  /** Raw id. */
  serviceId?: string;
  severity?: Severity;
}

/** Keyset page of an incident's alert events, oldest first: rows with a larger id than `after`. */
export interface IncidentEventsQuery {
  limit: number;
  after?: string;
}

/** A page of the incident change stream: the tenant's committed changes past `after`, in order. */
export interface IncidentChangeQuery {
  after: number;
  limit: number;
  /** Only this service's incidents (raw id); the position stays a tenant position. */
  serviceId?: string | undefined;
}

export type IncidentActionOutcome =
  | { kind: "changed"; incident: IncidentRecord }
  /** Already in the asked-for state: nothing written, the audit record neither. */
  | { kind: "unchanged"; incident: IncidentRecord }
  /** Acknowledging a resolved incident (409 incident_resolved); nothing written. */
  | { kind: "incident_resolved" }
  | { kind: "not_found" };

/**
 * Incidents (SPEC §17, docs/incidents.md). Every change an incident goes through is written
 * with its row in `incident_changes`, placed by a feed_head position taken in the change's own
 * transaction, so the change stream has the feed's guarantee.
 */
export interface IncidentRepo {
  /**
   * Applies alert events that are already stored (their rows exist; duplicates excluded) in
   * ONE transaction of its own, in order: the incidents, their change rows, and each event's
   * `incident_id`. The ingest batch does the same INSIDE its own transaction through the
   * dialect's `applyAlertBatch` (src/store/sqlite/incidents.ts, src/store/postgres/incidents.ts),
   * which is what makes an effect commit with its event; this method is that function in a
   * transaction of its own. Results are positional.
   */
  applyAlerts(events: ReadonlyArray<AlertEventInput>): Promise<AlertOutcome[]>;
  get(tenantId: string, id: string): Promise<IncidentRecord | null>;
  list(tenantId: string, query: IncidentQuery): Promise<IncidentRecord[]>;
  /** The alert events that touched it (those retention has not deleted), oldest first. */
  events(tenantId: string, incidentId: string, query: IncidentEventsQuery): Promise<EventRecord[]>;
  /**
   * By hand: triggered → acknowledged, in one transaction with its change row and the audit
   * record (written only when the outcome is `changed`).
   */
  acknowledge(
    tenantId: string,
    id: string,
    by: IncidentActor,
    now: number,
    audit: AuditRecord,
  ): Promise<IncidentActionOutcome>;
  /** By hand: open → resolved; like acknowledge. Never `incident_resolved`. */
  resolve(
    tenantId: string,
    id: string,
    by: IncidentActor,
    now: number,
    audit: AuditRecord,
  ): Promise<IncidentActionOutcome>;
  /**
   * Resolves (by `auto`) at most `limit` open incidents of monitored services whose
   * `incident_auto_resolve_seconds` has passed since their last alert event, in one
   * transaction; concurrent sweeps on several instances resolve each incident once.
   * Returns the incidents it resolved.
   */
  autoResolveDue(now: number, limit: number): Promise<IncidentRecord[]>;
  /** The change stream (§17): committed changes with position > `after`, in position order. */
  changes(tenantId: string, query: IncidentChangeQuery): Promise<IncidentChangeRecord[]>;
  /** The tenant's highest committed change position; 0 when it has none. */
  changesHead(tenantId: string): Promise<number>;
  /** How many open incidents per severity, across the deployment (the `intake_incidents_open` gauge). */
  countOpen(): Promise<Record<Severity, number>>;
  /**
   * Retention (INTAKE_INCIDENT_RETENTION_DAYS): deletes at most `batch` incidents resolved
   * before `cutoff`, oldest first, with their change rows; resolves with how many went.
   */
  deleteResolvedBefore(cutoff: number, batch: number): Promise<number>;
}

/** One thing the export publishes (SPEC §21): a committed event or incident change, at its feed position. */
export type ExportItem =
  | { kind: "event"; position: number; event: EventRecord }
  | { kind: "change"; position: number; tenantId: string; change: IncidentChangeRecord };

/** A page of the export's read: `items` in position order, all of them at positions up to `upTo`. */
export interface ExportPage {
  items: ExportItem[];
  /**
   * Every committed event and change with a position in (after, upTo] is in `items`: the next
   * read starts here (gaps included). Equals `after` when nothing new was committed.
   */
  upTo: number;
  /** The feed head as committed when the page was read (the lag is head minus what is acknowledged). */
  head: number;
}

/**
 * The export's state (docs/export.md): a lease that picks the one exporting instance, by the
 * store's own clock (instances' clocks may disagree), and the position JetStream acknowledged.
 */
export interface ExportRepo {
  /**
   * Takes the lease `name` for `holder` until `ttlMs` from now, or renews it, unless another
   * holder's is unexpired. Returns the stored position when `holder` holds it, else null.
   * The first claim ever starts at position 0 (every retained event is exported).
   */
  claim(name: string, holder: string, ttlMs: number): Promise<number | null>;
  /**
   * Stores `position` and renews the lease, only while `holder` still holds it (fencing: an
   * instance that lost its lease never moves the position). False when it no longer does.
   */
  advance(name: string, holder: string, position: number, ttlMs: number): Promise<boolean>;
  /** Lets the lease go at once (a clean stop): another instance takes over without waiting. */
  release(name: string, holder: string): Promise<void>;
  /**
   * Every tenant's committed events and incident changes with position > `after`, in
   * position order, at most `limit` of them. Positions are assigned in commit order (docs/feed.md),
   * so nothing can later be committed at or below `upTo`.
   */
  read(after: number, limit: number): Promise<ExportPage>;
}

export interface Store {
  readonly dialect: "sqlite" | "postgres";
  tenants: TenantRepo;
  tokens: TokenRepo;
  services: ServiceRepo;
  events: EventRepo;
  setupCodes: SetupCodeRepo;
  audit: AuditRepo;
  incidents: IncidentRepo;
  stats: ServiceStatsRepo;
  exports: ExportRepo;
  /**
   * Creates a tenant and its first token in one transaction, with their audit records
   * (`tenant.create`, then `api_token.create`; actor operator for the CLI).
   */
  createTenant(tenant: TenantRecord, firstToken: TokenRecord, audit: ReadonlyArray<AuditRecord>): Promise<void>;
  /**
   * In one transaction: claims the setup code (unused and `expires_at > now`; marked used, once)
   * and creates the tenant and its first token, with their audit records (actor setup_link).
   * `false`, with nothing written, when the code is unknown, used or expired. Of two concurrent
   * redemptions of one code, one gets `true`.
   */
  redeemSetupCode(
    digest: string,
    now: number,
    tenant: TenantRecord,
    firstToken: TokenRecord,
    audit: ReadonlyArray<AuditRecord>,
  ): Promise<boolean>;
  /** Applies committed migrations; idempotent. */
  migrate(): Promise<void>;
  close(): Promise<void>;
}
