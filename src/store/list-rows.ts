/**
 * The list pages of services, API tokens and audit events, the same on both dialects: constant
 * statement texts (one per combination of filters, every value a parameter, so each is prepared
 * once), reading only the columns a page shows, and rows taken as positional values
 * (bun:sqlite's and Bun SQL's `.values()`) mapped here by hand into the domain's records.
 * A list never reads a sealed secret or a digest, and no per-row mapping of drizzle runs:
 * docs/store.md, "List pages", says why.
 */
import type { AuditAction, AuditActor, AuditChanges, AuditRecord, AuditTargetType } from "../domain/audit-types.ts";
import type { AuditQuery, PageQuery } from "../domain/ports/store.ts";
import type { Role, Scope, ServiceSummary, SignatureScheme, TokenSummary } from "../domain/types.ts";

/** A statement text and its parameters, in order. */
export interface ListStatement {
  text: string;
  params: unknown[];
}

/** SQLite numbers its parameters `?1`, PostgreSQL `$1`. */
export type Placeholder = (n: number) => string;
export const sqlitePlaceholder: Placeholder = (n) => `?${n}`;
export const postgresPlaceholder: Placeholder = (n) => `$${n}`;

const SERVICE_COLUMNS =
  "id, service_name, is_monitored, signing_secret_prefix, previous_secret_expires_at, secret_rotated_at, " +
  "created_at, updated_at, rate_limit_limit, rate_limit_window_seconds, incident_auto_resolve_seconds, signature_scheme";
const TOKEN_COLUMNS = "id, name, scope, role, prefix, created_at, created_by, expires_at, last_used_at, revoked_at";
const AUDIT_COLUMNS = "id, occurred_at, action, actor_type, actor_id, target_type, target_id, request_id, changes";

/**
 * `SELECT <columns> FROM <table> WHERE <column> = <value> AND … [AND <fixed>] [AND id < before]
 * ORDER BY id DESC LIMIT n`: one tenant's keyset page, newest first, on its `(tenant_id, id)`
 * index (or the audit filters' indexes).
 */
function pageStatement(
  placeholder: Placeholder,
  table: string,
  columns: string,
  equal: ReadonlyArray<readonly [column: string, value: unknown]>,
  fixed: string | null,
  query: PageQuery,
): ListStatement {
  const params: unknown[] = [];
  const conditions: string[] = [];
  const bind = (value: unknown) => {
    params.push(value);
    return placeholder(params.length);
  };
  for (const [column, value] of equal) conditions.push(`${column} = ${bind(value)}`);
  if (fixed !== null) conditions.push(fixed);
  if (query.before !== undefined) conditions.push(`id < ${bind(query.before)}`);
  const limit = bind(query.limit);
  return {
    text: `select ${columns} from ${table} where ${conditions.join(" and ")} order by id desc limit ${limit}`,
    params,
  };
}

export function serviceListStatement(placeholder: Placeholder, tenantId: string, query: PageQuery): ListStatement {
  return pageStatement(placeholder, "services", SERVICE_COLUMNS, [["tenant_id", tenantId]], null, query);
}

export function tokenListStatement(
  placeholder: Placeholder,
  tenantId: string,
  query: PageQuery & { includeRevoked: boolean },
): ListStatement {
  const fixed = query.includeRevoked ? null : "revoked_at is null";
  return pageStatement(placeholder, "api_tokens", TOKEN_COLUMNS, [["tenant_id", tenantId]], fixed, query);
}

export function auditListStatement(placeholder: Placeholder, tenantId: string, query: AuditQuery): ListStatement {
  const equal: Array<readonly [string, unknown]> = [["tenant_id", tenantId]];
  if (query.action !== undefined) equal.push(["action", query.action]);
  if (query.target !== undefined) equal.push(["target_id", query.target.id], ["target_type", query.target.type]);
  return pageStatement(placeholder, "audit_events", AUDIT_COLUMNS, equal, null, query);
}

/** Epoch ms: an INTEGER from bun:sqlite, a `bigint` as its decimal text from Bun SQL. */
function ms(value: unknown): number {
  return typeof value === "number" ? value : Number(value);
}

function msOrNull(value: unknown): number | null {
  return value === null ? null : ms(value);
}

/** SQLite stores a boolean as 0/1 (drizzle's boolean mode); PostgreSQL answers a boolean. */
function flag(value: unknown): boolean {
  return value === true || value === 1;
}

/** SQLite keeps `changes` as JSON text, PostgreSQL as `jsonb`, which Bun SQL parses. */
function changesOf(value: unknown): AuditChanges | null {
  if (value === null) return null;
  return (typeof value === "string" ? JSON.parse(value) : value) as AuditChanges;
}

/** One row of `serviceListStatement`, in its column order. */
export function serviceSummary(row: unknown[]): ServiceSummary {
  return {
    id: row[0] as string,
    serviceName: row[1] as string,
    isMonitored: flag(row[2]),
    signingSecretPrefix: row[3] as string,
    previousSecretExpiresAt: msOrNull(row[4]),
    secretRotatedAt: msOrNull(row[5]),
    createdAt: ms(row[6]),
    updatedAt: ms(row[7]),
    rateLimitLimit: row[8] as number | null,
    rateLimitWindowSeconds: row[9] as number | null,
    incidentAutoResolveSeconds: row[10] as number | null,
    signatureScheme: row[11] as SignatureScheme,
  };
}

/** One row of `tokenListStatement`, in its column order. */
export function tokenSummary(row: unknown[]): TokenSummary {
  return {
    id: row[0] as string,
    name: row[1] as string,
    scope: row[2] as Scope,
    role: row[3] as Role,
    prefix: row[4] as string,
    createdAt: ms(row[5]),
    createdBy: row[6] as string | null,
    expiresAt: msOrNull(row[7]),
    lastUsedAt: msOrNull(row[8]),
    revokedAt: msOrNull(row[9]),
  };
}

/** One row of `auditListStatement`, in its column order; the tenant is the one the list was of. */
export function auditRecord(row: unknown[], tenantId: string): AuditRecord {
  const actorType = row[3] as AuditActor["type"];
  const actor: AuditActor =
    actorType === "api_token" ? { type: "api_token", id: (row[4] as string | null) ?? "" } : { type: actorType };
  return {
    id: row[0] as string,
    tenantId,
    occurredAt: ms(row[1]),
    action: row[2] as AuditAction,
    actor,
    target: { type: row[5] as AuditTargetType, id: row[6] as string },
    requestId: row[7] as string | null,
    changes: changesOf(row[8]),
  };
}
