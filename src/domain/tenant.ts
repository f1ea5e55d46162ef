/**
 * The caller's tenant (docs/api.md): read, and rename. permission_mode never changes in v1.
 */

import { type Audit, TENANT_AUDITED_FIELDS, tokenOrigin } from "./audit.ts";
import { DomainError, type FieldIssue, notFound } from "./errors.ts";
import type { Maybe } from "./maybe.ts";
import type { CacheNamespace } from "./ports/cache.ts";
import type { Store } from "./ports/store.ts";
import type { Principal, TenantRecord } from "./types.ts";
import { checkName, throwIfIssues } from "./validation.ts";

export interface TenantDeps {
  store: Store;
  /** Keyed by tenant id; a rename invalidates (on every instance) before it answers. */
  tenantCache: CacheNamespace<TenantRecord>;
  audit: Audit;
}

function existing(tenant: TenantRecord | null): TenantRecord {
  if (!tenant) throw notFound("tenant");
  return tenant;
}

export function createTenants(deps: TenantDeps) {
  const { store, tenantCache } = deps;

  /** Synchronous while the tenant is cached (maybe.ts): every authenticated GET /v1/tenant reads it. */
  function getTenant(principal: Principal): Maybe<TenantRecord> {
    // A store round trip was the largest cost of GET /v1/tenant (bench scenario 2).
    // `!== undefined`, not `??`: a cached "does not exist" (null) is an answer too, and asking
    // getOrLoad again would count one lookup twice (docs/operations.md).
    const peeked = tenantCache.peek(principal.tenantId);
    if (peeked !== undefined) return existing(peeked);
    return tenantCache.getOrLoad(principal.tenantId, () => store.tenants.get(principal.tenantId)).then(existing);
  }

  /** Renaming to the current name writes no audit event (nothing changed). */
  async function renameTenant(
    principal: Principal,
    update: { name?: string | undefined; permissionMode?: string | undefined },
    requestId: string | null,
  ): Promise<TenantRecord> {
    if (update.permissionMode !== undefined) {
      throw new DomainError("permission_mode_immutable", "permission_mode cannot be changed through this endpoint.");
    }
    if (update.name === undefined) return getTenant(principal);
    const issues: FieldIssue[] = [];
    const name = checkName("name", update.name, issues);
    throwIfIssues(issues);
    const event = deps.audit.updateRecord<TenantRecord>(
      principal.tenantId,
      tokenOrigin(principal, requestId),
      "tenant.update",
      { type: "tenant", id: principal.tenantId },
      TENANT_AUDITED_FIELDS,
    );
    const tenant = await store.tenants.rename(principal.tenantId, name, event);
    if (!tenant) throw notFound("tenant");
    await tenantCache.invalidate(principal.tenantId);
    return tenant;
  }

  return { getTenant, renameTenant };
}

export type Tenants = ReturnType<typeof createTenants>;
