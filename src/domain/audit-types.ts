/**
 * The audit log's record types (docs/api.md, "Audit log"): what the store port persists and
 * the domain (audit.ts) builds. Their own module, so that the port imports no domain logic.
 */

export const AUDIT_ACTIONS = [
  "tenant.create",
  "tenant.update",
  "api_token.create",
  "api_token.revoke",
  "service.create",
  "service.update",
  "service.delete",
  "service.secret_rotate",
  "incident.acknowledge",
  "incident.resolve",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who made a change: a bearer token (its raw id), a person redeeming a setup link, or an
 * operator at the CLI (`bootstrap`).
 */
export type AuditActor = { type: "api_token"; id: string } | { type: "setup_link" } | { type: "operator" };

export type AuditTargetType = "tenant" | "api_token" | "service" | "incident";

/** Raw ids, as the store keeps them: 32 hex for tokens and services, the UUID for the tenant. */
export interface AuditTarget {
  type: AuditTargetType;
  id: string;
}

/** A field's value in its public (REST) form: `changes` is shown as it is stored. */
export type AuditValue = string | number | boolean | null | AuditValue[] | { [key: string]: AuditValue };
export type AuditChanges = Record<string, { from: AuditValue; to: AuditValue }>;

export interface AuditRecord {
  /** 32 hex, time ordered like every other id: `ORDER BY id DESC` is newest first. */
  id: string;
  tenantId: string;
  occurredAt: number;
  action: AuditAction;
  actor: AuditActor;
  target: AuditTarget;
  /** `req_…` of the API call that made the change; null for the CLI. */
  requestId: string | null;
  /** Only for updates: the fields that changed. */
  changes: AuditChanges | null;
}
