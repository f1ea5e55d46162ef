/**
 * Who the signed-in token is, from the public API alone: the tenant (its permission mode) and
 * the token's own record, found among the tenant's tokens by its public prefix (the credential's
 * first 21 characters). The console uses it only to explain, beforehand, what the server would
 * refuse anyway; the server decides every call.
 */
import { useEffect, useState } from "preact/hooks";
import type { ApiToken } from "../../gen/intake/v1/api_tokens_pb.ts";
import type { Tenant } from "../../gen/intake/v1/tenant_pb.ts";
import { api } from "./api.ts";

export interface Identity {
  tenant: Tenant;
  /** Null when the token could not be found (the console then disables nothing). */
  self: ApiToken | null;
}

const ROLE_RANK: Record<string, number> = { member: 0, admin: 1, owner: 2 };

async function findSelf(token: string): Promise<ApiToken | null> {
  const prefix = token.slice(0, "service_live_".length + 8);
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await api.tokens.listApiTokens({ limit: 100, cursor, includeRevoked: false });
    const found = res.data.find((t) => t.prefix === prefix);
    if (found) return found;
    if (!res.nextCursor) return null;
    cursor = res.nextCursor;
  }
  return null;
}

export async function loadIdentity(token: string): Promise<Identity> {
  const [tenant, self] = await Promise.all([api.tenant.getTenant({}), findSelf(token)]);
  if (!tenant.tenant) throw new Error("GetTenant answered no tenant");
  return { tenant: tenant.tenant, self };
}

/** Reloaded when the token changes or `generation` moves (after a rename, say). */
export function useIdentity(token: string | null, generation: number): Identity | null {
  const [identity, setIdentity] = useState<Identity | null>(null);
  useEffect(() => {
    if (!token) {
      setIdentity(null);
      return;
    }
    let current = true;
    loadIdentity(token).then(
      (loaded) => current && setIdentity(loaded),
      () => current && setIdentity(null),
    );
    return () => {
      current = false;
    };
  }, [token, generation]);
  return identity;
}

/** Why a change is refused for this token, or null when it may try. */
export function cannotChange(identity: Identity | null): string | null {
  if (identity?.self?.scope === "read_only") return "This token is read_only: it can look, not change.";
  return null;
}

/** Why an owner-only change is refused (role_based tenants), or null. */
export function cannotOwn(identity: Identity | null): string | null {
  const scope = cannotChange(identity);
  if (scope) return scope;
  if (identity?.tenant.permissionMode === "role_based" && identity.self && identity.self.role !== "owner") {
    return `Only an owner token can do this; this token is ${identity.self.role}.`;
  }
  return null;
}

/** Whether this token may mint or revoke a token of `role` (no escalation in role_based tenants). */
export function mayHandleRole(identity: Identity | null, role: string): boolean {
  if (!identity?.self || identity.tenant.permissionMode === "flat") return true;
  return (ROLE_RANK[role] ?? 0) <= (ROLE_RANK[identity.self.role] ?? 0);
}

/** Why this token may not read the audit log (a member token of a role_based tenant), or null. */
export function cannotReadAudit(identity: Identity | null): string | null {
  if (identity?.tenant.permissionMode === "role_based" && identity.self?.role === "member") {
    return "Only an owner or admin token can read the audit log; this token is member.";
  }
  return null;
}
