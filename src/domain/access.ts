import { DomainError } from "./errors.ts";
import type { Principal, Role, TokenRecord } from "./types.ts";

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1 };

/** What an operation demands of its caller, beyond a valid token. */
export interface AccessRule {
  /** POST/PATCH/DELETE: needs a read_write token. */
  mutating: boolean;
  /** Owner only in role_based mode (DELETE service, PATCH tenant). */
  ownerOnly: boolean;
  /** Owner or admin in role_based mode (reading the audit log): a member is 403 admin_required. */
  adminOnly?: boolean;
}

/** 403 token_scope_insufficient, then 403 owner_required / admin_required (docs/api.md, check order). */
export function authorize(principal: Principal, rule: AccessRule): void {
  if (rule.mutating && principal.scope !== "read_write") {
    throw new DomainError("token_scope_insufficient", "This operation needs a read_write token.");
  }
  if (rule.ownerOnly && principal.permissionMode === "role_based" && principal.role !== "owner") {
    throw new DomainError("owner_required", "Only an owner token may do this.");
  }
  if (rule.adminOnly && principal.permissionMode === "role_based" && principal.role === "member") {
    throw new DomainError("admin_required", "Only an owner or admin token may do this.");
  }
}

/** 403 role_escalation when `target` outranks the caller; flat tenants have no role rules. */
export function forbidEscalation(principal: Principal, target: Role, action: "mint" | "revoke"): void {
  if (principal.permissionMode === "flat") return;
  if (RANK[target] > RANK[principal.role]) {
    throw new DomainError("role_escalation", `A ${principal.role} token cannot ${action} a token of role ${target}.`);
  }
}

/**
 * A token that keeps the tenant administrable: owner, read_write, not revoked, not expired at
 * `now`. Stores use it inside the revocation transaction (409 last_owner_token).
 */
export function isActiveOwner(token: TokenRecord, now: number): boolean {
  return (
    token.role === "owner" &&
    token.scope === "read_write" &&
    token.revokedAt === null &&
    (token.expiresAt === null || token.expiresAt > now)
  );
}

/**
 * What must remain after revoking `target` (docs/api.md, "The last owner token"), or null when
 * revoking it cannot leave the tenant without an owner: another active owner read_write token
 * and, when `target` never expires, another that never expires either, so that the tenant
 * cannot be left with owners that all lapse. Stores evaluate it inside the revocation's
 * transaction, under the lock that serializes revocations of one tenant.
 */
export function ownerToKeep(target: TokenRecord, now: number): { nonExpiring: boolean } | null {
  if (!isActiveOwner(target, now)) return null;
  return { nonExpiring: target.expiresAt === null };
}
