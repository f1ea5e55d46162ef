/**
 * API tokens (docs/api.md): minting, verification, listing and soft revocation. A tenant's
 * first token and the setup codes that buy one are onboarding (onboarding.ts).
 */

import type { Logger } from "../logger.ts";
import { forbidEscalation } from "./access.ts";
import { type Audit, type ChangeOrigin, tokenOrigin } from "./audit.ts";
import { generateToken, isWellFormedToken, TOKEN_LENGTH, tokenPrefix } from "./credentials.ts";
import { DomainError, type FieldIssue, notFound } from "./errors.ts";
import { parseId } from "./ids.ts";
import { type Page, type PageRequest, pageQuery, toPage } from "./pagination.ts";
import type { CacheNamespace } from "./ports/cache.ts";
import type { Store } from "./ports/store.ts";
import { isRepresentableTime, MAX_TIME_TEXT } from "./time.ts";
import {
  type Clock,
  type PermissionMode,
  type Principal,
  ROLES,
  type Role,
  SCOPES,
  type Scope,
  type TokenRecord,
  type TokenSummary,
} from "./types.ts";
import { checkName, throwIfIssues } from "./validation.ts";

/** What the token cache holds per digest: enough to authorize without the store. */
export interface CachedToken {
  id: string;
  tenantId: string;
  scope: Scope;
  role: Role;
  permissionMode: PermissionMode;
  expiresAt: number | null;
  revokedAt: number | null;
}

export type VerifyResult =
  | { ok: true; principal: Principal }
  | { ok: false; reason: "malformed" | "token_id" | "unknown" | "revoked" | "expired" };

export interface TokenDeps {
  store: Store;
  /** Keyed by token digest; null entries are cached misses. */
  tokenCache: CacheNamespace<CachedToken>;
  clock: Clock;
  newId: () => string;
  hashToken: (token: string) => string;
  logger: Logger;
  audit: Audit;
}

export interface IssueTokenInput {
  name: string;
  scope?: string | undefined;
  role?: string | undefined;
  expiresAt?: number | null | undefined;
}

/** last_used_at is written at most once a minute per token per instance. */
const LAST_USED_INTERVAL_MS = 60_000;
const LAST_USED_FLUSH_DELAY_MS = 1_000;
const PREFIX_ATTEMPTS = 5;

export function createTokens(deps: TokenDeps) {
  const { store, tokenCache, clock } = deps;
  const lastWritten = new Map<string, number>();
  let pendingLastUsed: Array<{ id: string; at: number }> = [];
  let flushTimer: ReturnType<typeof setTimeout> | null = null;

  async function flushLastUsed(): Promise<void> {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    if (pendingLastUsed.length === 0) return;
    const batch = pendingLastUsed;
    pendingLastUsed = [];
    try {
      await store.tokens.touchLastUsed(batch);
    } catch (error) {
      // Bookkeeping only: a failed write must never fail or slow a request.
      deps.logger.warn("last_used_at write failed", { count: batch.length, error });
    }
  }

  function noteUse(tokenId: string, now: number): void {
    const last = lastWritten.get(tokenId);
    if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return;
    lastWritten.set(tokenId, now);
    pendingLastUsed.push({ id: tokenId, at: now });
    flushTimer ??= setTimeout(() => void flushLastUsed(), LAST_USED_FLUSH_DELAY_MS);
    flushTimer.unref?.();
  }

  async function loadByDigest(digest: string): Promise<CachedToken | null> {
    const record = await store.tokens.findByDigest(digest);
    if (!record) return null;
    const tenant = await store.tenants.get(record.tenantId);
    if (!tenant) return null;
    return {
      id: record.id,
      tenantId: record.tenantId,
      scope: record.scope,
      role: record.role,
      permissionMode: tenant.permissionMode,
      expiresAt: record.expiresAt,
      revokedAt: record.revokedAt,
    };
  }

  function judge(entry: CachedToken | null, now: number): VerifyResult {
    if (!entry) return { ok: false, reason: "unknown" };
    if (entry.revokedAt !== null) return { ok: false, reason: "revoked" };
    // Checked on every use, cached or not: a token is dead from its expires_at on.
    if (entry.expiresAt !== null && now >= entry.expiresAt) return { ok: false, reason: "expired" };
    noteUse(entry.id, now);
    return {
      ok: true,
      principal: {
        tokenId: entry.id,
        tenantId: entry.tenantId,
        scope: entry.scope,
        role: entry.role,
        permissionMode: entry.permissionMode,
      },
    };
  }

  function malformed(credential: string): VerifyResult {
    return { ok: false, reason: credential.startsWith("tok_") ? "token_id" : "malformed" };
  }

  /**
   * Negative outcomes are data; only the edge turns them into 401. A token the cache holds a
   * record for is a stored token's digest, so it is well-formed by construction: its shape and
   * checksum are judged only when the cache holds no record (a visible share of an
   * authenticated GET in process: the benchmark's scenario 2). Only credentials of a token's
   * length are hashed.
   */
  function verifyToken(credential: string): VerifyResult | Promise<VerifyResult> {
    if (credential.length !== TOKEN_LENGTH) return malformed(credential);
    const digest = deps.hashToken(credential);
    const hit = tokenCache.peek(digest);
    if (hit) return judge(hit, clock.now());
    if (!isWellFormedToken(credential)) return malformed(credential);
    if (hit === null) return judge(null, clock.now());
    return tokenCache.getOrLoad(digest, () => loadByDigest(digest)).then((entry) => judge(entry, clock.now()));
  }

  function checkIssueInput(input: IssueTokenInput, now: number): { name: string; scope: Scope; role: Role } {
    const issues: FieldIssue[] = [];
    const name = checkName("name", input.name, issues);
    const scope = (input.scope ?? "read_only") as Scope;
    if (!SCOPES.includes(scope)) issues.push({ field: "scope", message: "must be read_only or read_write" });
    const role = (input.role ?? "member") as Role;
    if (!ROLES.includes(role)) issues.push({ field: "role", message: "must be owner, admin or member" });
    if (input.expiresAt != null) {
      // Every transport lands here: REST, Connect and gRPC share this one range check.
      if (!isRepresentableTime(input.expiresAt)) {
        issues.push({ field: "expires_at", message: `must be a time no later than ${MAX_TIME_TEXT}` });
      } else if (input.expiresAt <= now) {
        issues.push({ field: "expires_at", message: "must be in the future" });
      }
    }
    throwIfIssues(issues);
    return { name, scope, role };
  }

  function makeToken(base: Omit<TokenRecord, "prefix" | "digest">): { record: TokenRecord; token: string } {
    const token = generateToken();
    return { record: { ...base, prefix: tokenPrefix(token), digest: deps.hashToken(token) }, token };
  }

  async function insertWithFreshPrefix(
    base: Omit<TokenRecord, "prefix" | "digest">,
    origin: ChangeOrigin,
  ): Promise<{ record: TokenRecord; token: string }> {
    const target = { type: "api_token", id: base.id } as const;
    for (let attempt = 0; attempt < PREFIX_ATTEMPTS; attempt++) {
      const made = makeToken(base);
      const audit = deps.audit.record(base.tenantId, origin, "api_token.create", target);
      if ((await store.tokens.insert(made.record, audit)) === "ok") return made;
    }
    // 62^8 prefixes: reaching this means the random source is broken, not bad luck.
    throw new Error("could not find an unused token prefix");
  }

  /** `requestId`: the API call's, written into the audit event. */
  async function issueToken(
    principal: Principal,
    input: IssueTokenInput,
    requestId: string | null,
  ): Promise<{ record: TokenRecord; token: string }> {
    const now = clock.now();
    const { name, scope, role } = checkIssueInput(input, now);
    forbidEscalation(principal, role, "mint");
    return insertWithFreshPrefix(
      {
        id: deps.newId(),
        tenantId: principal.tenantId,
        name,
        scope,
        role,
        createdAt: now,
        createdBy: principal.tokenId,
        expiresAt: input.expiresAt ?? null,
        lastUsedAt: null,
        revokedAt: null,
      },
      tokenOrigin(principal, requestId),
    );
  }

  async function getToken(principal: Principal, id: string): Promise<TokenRecord> {
    const raw = parseId("tok", id);
    const record = raw ? await store.tokens.get(principal.tenantId, raw) : null;
    if (!record) throw notFound("API token");
    return record;
  }

  async function listTokens(
    principal: Principal,
    request: PageRequest & { includeRevoked?: boolean },
  ): Promise<Page<TokenSummary>> {
    const scope = { list: "api_tokens", tenantId: principal.tenantId };
    const { limit, before } = pageQuery(request, scope);
    const rows = await store.tokens.list(principal.tenantId, {
      limit: limit + 1,
      ...(before !== undefined && { before }),
      includeRevoked: request.includeRevoked ?? false,
    });
    return toPage(rows, limit, scope);
  }

  /** A repeat (already revoked) changes nothing and writes no audit event. */
  async function revokeToken(principal: Principal, id: string, requestId: string | null): Promise<TokenRecord> {
    const target = await getToken(principal, id);
    forbidEscalation(principal, target.role, "revoke");
    const audit = deps.audit.record(principal.tenantId, tokenOrigin(principal, requestId), "api_token.revoke", {
      type: "api_token",
      id: target.id,
    });
    const outcome = await store.tokens.revoke(principal.tenantId, target.id, clock.now(), audit);
    switch (outcome.kind) {
      case "not_found":
        throw notFound("API token");
      case "last_owner":
        throw new DomainError(
          "last_owner_token",
          "This is the tenant's last active owner read_write token (or its last one that does not expire); mint another before revoking it.",
        );
      case "revoked":
      case "already_revoked":
        // Before answering: every instance must refuse the token on the very next request.
        await tokenCache.invalidate(outcome.record.digest);
        return outcome.record;
    }
  }

  function ownerTokenBase(tenantId: string, name: string): Omit<TokenRecord, "prefix" | "digest"> {
    return {
      id: deps.newId(),
      tenantId,
      name,
      scope: "read_write",
      role: "owner",
      createdAt: clock.now(),
      createdBy: null,
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
    };
  }

  /**
   * A tenant's owner read_write token (created_by null), made but not stored: onboarding
   * (onboarding.ts) writes it with the tenant in one transaction.
   */
  function newOwnerToken(tenantId: string, name: string): { record: TokenRecord; token: string } {
    return makeToken(ownerTokenBase(tenantId, name));
  }

  /** An owner read_write token for an existing tenant, stored with its audit record. */
  function insertOwnerToken(tenantId: string, name: string, origin: ChangeOrigin) {
    return insertWithFreshPrefix(ownerTokenBase(tenantId, name), origin);
  }

  return {
    verifyToken,
    issueToken,
    getToken,
    listTokens,
    revokeToken,
    newOwnerToken,
    insertOwnerToken,
    flushLastUsed,
  };
}

export type Tokens = ReturnType<typeof createTokens>;
