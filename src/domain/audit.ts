/**
 * The audit log (docs/api.md, "Audit log"): one event per successful change, written by the
 * store in the transaction of the change itself, so there is no change without its record and
 * no record without its change. Records name who acted and what changed, never a token,
 * secret, digest or payload: `changes` is built from an allow-list of public fields.
 */

import {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditActor,
  type AuditChanges,
  type AuditRecord,
  type AuditTarget,
  type AuditValue,
} from "./audit-types.ts";
import { DomainError, type FieldIssue } from "./errors.ts";
import { parseId, TENANT_ID } from "./ids.ts";
import { type Page, type PageRequest, pageQuery, toPage } from "./pagination.ts";
import type { AuditQuery, Store } from "./ports/store.ts";
import type { Clock, Principal, ServiceRecord, TenantRecord } from "./types.ts";

export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditActor,
  type AuditChanges,
  type AuditRecord,
  type AuditTarget,
  type AuditTargetType,
  type AuditValue,
} from "./audit-types.ts";

/** Where a change comes from: who made it and, for an API call, the request that carried it. */
export interface ChangeOrigin {
  actor: AuditActor;
  requestId: string | null;
}

/** The CLI's operator commands: no request, no token. */
export const OPERATOR: ChangeOrigin = { actor: { type: "operator" }, requestId: null };

/** A bearer call: the token that made it, and its request id. */
export function tokenOrigin(principal: Principal, requestId: string | null): ChangeOrigin {
  return { actor: { type: "api_token", id: principal.tokenId }, requestId };
}

/**
 * The fields of a record an update may change, by their public (REST) names, each read from
 * the record in its REST form: `changes` is computed from these alone, so a field added to an
 * update lands in the log by being listed here, and anything unlisted (secrets, ciphertexts,
 * bookkeeping times) never can.
 */
export type AuditedFields<R> = Record<string, (record: R) => AuditValue>;

export const SERVICE_AUDITED_FIELDS: AuditedFields<ServiceRecord> = {
  is_monitored: (s) => s.isMonitored,
  // The REST form of the service's own limit (docs/rate-limits.md): both parts or null.
  rate_limit: (s) =>
    s.rateLimitLimit === null || s.rateLimitWindowSeconds === null
      ? null
      : { limit: s.rateLimitLimit, window_seconds: s.rateLimitWindowSeconds },
  incident_auto_resolve_seconds: (s) => s.incidentAutoResolveSeconds,
  signature_scheme: (s) => s.signatureScheme,
};

export const TENANT_AUDITED_FIELDS: AuditedFields<TenantRecord> = {
  name: (t) => t.name,
};

/** The listed fields whose value differs between `before` and `after`; null when none does. */
export function changesBetween<R>(before: R, after: R, fields: AuditedFields<R>): AuditChanges | null {
  const changes: AuditChanges = {};
  for (const [field, read] of Object.entries(fields)) {
    const from = read(before);
    const to = read(after);
    if (!Bun.deepEquals(from, to, true)) changes[field] = { from, to };
  }
  return Object.keys(changes).length > 0 ? changes : null;
}

export interface AuditDeps {
  store: Store;
  clock: Clock;
  newId: () => string;
}

export interface AuditListRequest extends PageRequest {
  action?: string | undefined;
  targetId?: string | undefined;
}

/** A public target id (`tok_…`, `svc_…`, `inc_…`, or the tenant's UUID) as the store keeps it. */
function parseTargetId(id: string): AuditTarget | null {
  const token = parseId("tok", id);
  if (token) return { type: "api_token", id: token };
  const service = parseId("svc", id);
  if (service) return { type: "service", id: service };
  const incident = parseId("inc", id);
  if (incident) return { type: "incident", id: incident };
  return TENANT_ID.test(id) ? { type: "tenant", id } : null;
}

export function createAudit(deps: AuditDeps) {
  const { store, clock, newId } = deps;

  /** A record for a change about to be written; the store writes it in the change's transaction. */
  function record(
    tenantId: string,
    origin: ChangeOrigin,
    action: AuditAction,
    target: AuditTarget,
    changes: AuditChanges | null = null,
  ): AuditRecord {
    return {
      id: newId(),
      tenantId,
      occurredAt: clock.now(),
      action,
      actor: origin.actor,
      target,
      requestId: origin.requestId,
      changes,
    };
  }

  /**
   * For updates: the record is made from the row before and after the change, inside the
   * store's transaction; null (no record) when no audited field changed.
   */
  function updateRecord<R>(
    tenantId: string,
    origin: ChangeOrigin,
    action: "tenant.update" | "service.update",
    target: AuditTarget,
    fields: AuditedFields<R>,
  ): (before: R, after: R) => AuditRecord | null {
    return (before, after) => {
      const changes = changesBetween(before, after, fields);
      return changes ? record(tenantId, origin, action, target, changes) : null;
    };
  }

  async function listAuditEvents(principal: Principal, request: AuditListRequest): Promise<Page<AuditRecord>> {
    const scope = { list: "audit_events", tenantId: principal.tenantId };
    const { limit, before } = pageQuery(request, scope);
    const issues: FieldIssue[] = [];
    if (request.action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(request.action)) {
      issues.push({ field: "action", message: `must be one of ${AUDIT_ACTIONS.join(", ")}` });
    }
    const target = request.targetId === undefined ? undefined : parseTargetId(request.targetId);
    if (target === null) {
      issues.push({ field: "target_id", message: "must be a tok_, svc_ or inc_ id or the tenant id" });
    }
    if (issues.length > 0) throw new DomainError("invalid_request", "The request is invalid.", issues);
    const query: AuditQuery = {
      limit: limit + 1,
      ...(before !== undefined && { before }),
      ...(request.action !== undefined && { action: request.action as AuditAction }),
      ...(target != null && { target }),
    };
    return toPage(await store.audit.list(principal.tenantId, query), limit, scope);
  }

  return { record, updateRecord, listAuditEvents };
}

export type Audit = ReturnType<typeof createAudit>;
