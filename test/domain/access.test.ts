import { describe, expect, test } from "bun:test";
import { authorize, forbidEscalation } from "../../src/domain/access.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { type PermissionMode, type Principal, ROLES, type Role, type Scope } from "../../src/domain/types.ts";

function principal(scope: Scope, role: Role, permissionMode: PermissionMode = "role_based"): Principal {
  return { tokenId: "0".repeat(32), tenantId: "t", scope, role, permissionMode };
}

function codeOf(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return error.code;
  }
}

const read = { mutating: false, ownerOnly: false };
const write = { mutating: true, ownerOnly: false };
const owner = { mutating: true, ownerOnly: true };

describe("access rules", () => {
  test("read_only may read; 403 token_scope_insufficient on a mutation, whatever the role or mode", () => {
    for (const mode of ["flat", "role_based"] as const) {
      for (const role of ROLES) {
        expect(codeOf(() => authorize(principal("read_only", role, mode), read))).toBeNull();
        expect(codeOf(() => authorize(principal("read_only", role, mode), write))).toBe("token_scope_insufficient");
        expect(codeOf(() => authorize(principal("read_only", role, mode), owner))).toBe("token_scope_insufficient");
      }
    }
  });

  test("403 owner_required for admin and member on owner-only operations in role_based mode", () => {
    expect(codeOf(() => authorize(principal("read_write", "owner"), owner))).toBeNull();
    expect(codeOf(() => authorize(principal("read_write", "admin"), owner))).toBe("owner_required");
    expect(codeOf(() => authorize(principal("read_write", "member"), owner))).toBe("owner_required");
    expect(codeOf(() => authorize(principal("read_write", "member"), write))).toBeNull();
  });

  test("flat mode: no owner_required for any role", () => {
    for (const role of ROLES) expect(codeOf(() => authorize(principal("read_write", role, "flat"), owner))).toBeNull();
  });

  test("403 role_escalation only above the caller's role (owner > admin > member); equal is fine", () => {
    const outcomes: Record<string, string | null> = {};
    for (const caller of ROLES) {
      for (const target of ROLES) {
        for (const action of ["mint", "revoke"] as const) {
          outcomes[`${caller}/${target}/${action}`] = codeOf(() =>
            forbidEscalation(principal("read_write", caller), target, action),
          );
        }
      }
    }
    const escalations = Object.entries(outcomes)
      .filter(([, code]) => code === "role_escalation")
      .map(([key]) => key)
      .sort();
    expect(escalations).toEqual([
      "admin/owner/mint",
      "admin/owner/revoke",
      "member/admin/mint",
      "member/admin/revoke",
      "member/owner/mint",
      "member/owner/revoke",
    ]);
  });

  test("flat mode: no role_escalation, even a member minting or revoking an owner", () => {
    for (const caller of ROLES) {
      for (const target of ROLES) {
        expect(codeOf(() => forbidEscalation(principal("read_write", caller, "flat"), target, "mint"))).toBeNull();
        expect(codeOf(() => forbidEscalation(principal("read_write", caller, "flat"), target, "revoke"))).toBeNull();
      }
    }
  });
});
