/**
 * Onboarding (docs/console.md, docs/operations.md): how a tenant comes to exist and how an
 * operator gets an owner back. The CLI's `bootstrap` (a new tenant and its first owner
 * read_write token, or a recovery token for an existing tenant), its `setup-link` (a one-time
 * setup code), and the console's setup page redeeming such a code for a new tenant.
 */

import { type Audit, type ChangeOrigin, OPERATOR } from "./audit.ts";
import { generateSetupCode, isWellFormedSetupCode } from "./credentials.ts";
import { DomainError, type FieldIssue, notFound } from "./errors.ts";
import { newTenantId, TENANT_ID } from "./ids.ts";
import type { Store } from "./ports/store.ts";
import type { Tokens } from "./tokens.ts";
import { type Clock, PERMISSION_MODES, type PermissionMode } from "./types.ts";
import { checkName, throwIfIssues } from "./validation.ts";

export interface OnboardingDeps {
  store: Store;
  tokens: Tokens;
  clock: Clock;
  /** The token hasher: a setup code is stored as its keyed digest, like a token. */
  hashToken: (credential: string) => string;
  audit: Audit;
}

export function createOnboarding(deps: OnboardingDeps) {
  const { store, tokens, clock } = deps;

  /** A new tenant's two events: `tenant.create`, then `api_token.create` of its first token. */
  function creationAudit(tenantId: string, tokenId: string, origin: ChangeOrigin) {
    return [
      deps.audit.record(tenantId, origin, "tenant.create", { type: "tenant", id: tenantId }),
      deps.audit.record(tenantId, origin, "api_token.create", { type: "api_token", id: tokenId }),
    ];
  }

  /**
   * Operator command (CLI `bootstrap`): a new tenant with its first owner read_write token in
   * one transaction; created_by is null. Audited as `tenant.create` and `api_token.create` of
   * the first token, in that transaction.
   */
  async function bootstrapTenant(
    input: { name: string; permissionMode: PermissionMode },
    origin: ChangeOrigin = OPERATOR,
  ) {
    const issues: FieldIssue[] = [];
    const name = checkName("tenant_name", input.name, issues);
    throwIfIssues(issues);
    const tenant = { id: newTenantId(), name, permissionMode: input.permissionMode, createdAt: clock.now() };
    const { record, token } = tokens.newOwnerToken(tenant.id, "bootstrap");
    // Allowed, but the operator is told (a second bootstrap by mistake is the usual cause).
    const sameName = await store.tenants.countNamed(name);
    await store.createTenant(tenant, record, creationAudit(tenant.id, record.id, origin));
    return { tenant, record, token, sameName };
  }

  /** CLI `bootstrap --tenant-id`: a recovery owner token for an existing tenant. */
  async function mintRecoveryToken(tenantId: string) {
    const tenant = TENANT_ID.test(tenantId) ? await store.tenants.get(tenantId) : null;
    if (!tenant) throw notFound("tenant");
    const { record, token } = await tokens.insertOwnerToken(tenant.id, "recovery", OPERATOR);
    return { tenant, record, token };
  }

  /**
   * CLI `setup-link`: a one-time code for the console's setup page (docs/console.md). Only its
   * digest is stored; the code itself is returned once and never logged.
   */
  async function issueSetupCode(input: { expiresInSeconds: number }): Promise<{ code: string; expiresAt: number }> {
    const code = generateSetupCode();
    const now = clock.now();
    const expiresAt = now + input.expiresInSeconds * 1000;
    await store.setupCodes.insert({ digest: deps.hashToken(code), createdAt: now, expiresAt });
    return { code, expiresAt };
  }

  /**
   * `POST /v1/setup`: a setup code buys one new tenant and its first owner read_write token.
   * The body is judged first (400 leaves the code unused), then the code (401 for one that is
   * malformed, unknown, used or expired — one answer for all, as for tokens). The route has
   * no token and no rate limit, so a refused code costs the store a read, never a write
   * (Store.redeemSetupCode).
   */
  async function redeemSetupCode(
    input: { code: string; tenantName: string; permissionMode?: string | undefined },
    requestId: string | null,
  ) {
    const issues: FieldIssue[] = [];
    const name = checkName("tenant_name", input.tenantName, issues);
    const permissionMode = (input.permissionMode ?? "role_based") as PermissionMode;
    if (!PERMISSION_MODES.includes(permissionMode)) {
      issues.push({ field: "permission_mode", message: "must be flat or role_based" });
    }
    throwIfIssues(issues);
    const refused = new DomainError("invalid_setup_code", "The setup code is unknown, already used or expired.");
    if (!isWellFormedSetupCode(input.code)) throw refused;
    const now = clock.now();
    const tenant = { id: newTenantId(), name, permissionMode, createdAt: now };
    const { record, token } = tokens.newOwnerToken(tenant.id, "setup");
    // Audited like the CLI's bootstrap, as the setup link's (docs/api.md, "Audit log").
    const audit = creationAudit(tenant.id, record.id, { actor: { type: "setup_link" }, requestId });
    if (!(await store.redeemSetupCode(deps.hashToken(input.code), now, tenant, record, audit))) throw refused;
    return { tenant, record, token };
  }

  return { bootstrapTenant, mintRecoveryToken, issueSetupCode, redeemSetupCode };
}

export type Onboarding = ReturnType<typeof createOnboarding>;
