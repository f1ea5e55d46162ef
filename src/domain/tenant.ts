/**
 * The caller's tenant (SPEC §5): read, and rename. permission_mode never changes in v1.
 */
import type { Store } from "../store/ports.ts";
import { DomainError, type FieldIssue, notFound } from "./errors.ts";
import type { Principal, TenantRecord } from "./types.ts";
import { checkName, throwIfIssues } from "./validation.ts";

export function createTenants(deps: { store: Store }) {
  const { store } = deps;

  async function getTenant(principal: Principal): Promise<TenantRecord> {
    const tenant = await store.tenants.get(principal.tenantId);
    if (!tenant) throw notFound("tenant");
    return tenant;
  }

  async function renameTenant(
    principal: Principal,
    update: { name?: string | undefined; permissionMode?: string | undefined },
  ): Promise<TenantRecord> {
    if (update.permissionMode !== undefined) {
      throw new DomainError("permission_mode_immutable", "permission_mode cannot be changed through this endpoint.");
    }
    if (update.name === undefined) return getTenant(principal);
    const issues: FieldIssue[] = [];
    const name = checkName("name", update.name, issues);
    throwIfIssues(issues);
    const tenant = await store.tenants.rename(principal.tenantId, name);
    if (!tenant) throw notFound("tenant");
    return tenant;
  }

  return { getTenant, renameTenant };
}

export type Tenants = ReturnType<typeof createTenants>;
