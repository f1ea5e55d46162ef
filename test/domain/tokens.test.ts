import { afterEach, describe, expect, test } from "bun:test";
import { createMemoryCache } from "../../src/cache/memory.ts";
import { createAudit } from "../../src/domain/audit.ts";
import { createTokenHasher, generateToken, tokenPrefix } from "../../src/domain/credentials.ts";
import { DomainError } from "../../src/domain/errors.ts";
import { createIdGenerator } from "../../src/domain/ids.ts";
import { type CachedToken, createTokens, type Tokens } from "../../src/domain/tokens.ts";
import type { PermissionMode, Principal, Role, TokenRecord } from "../../src/domain/types.ts";
import { createLogger } from "../../src/logger.ts";
import { type ManualClock, manualClock } from "../support/harness.ts";
import { type CountingStore, countingStore } from "./fakes.ts";

const TENANT = "7a0c2f9e-1b2d-4c3e-8f4a-5b6c7d8e9f00";

interface Setup {
  fake: CountingStore;
  clock: ManualClock;
  tokens: Tokens;
  logs: string[];
  /** Puts a token row in the fake store and returns its credential. */
  seed(fields?: Partial<TokenRecord>): { token: string; record: TokenRecord };
}

let live: Tokens | null = null;
afterEach(async () => {
  // Clears a pending flush timer so no test leaks one into the next.
  await live?.flushLastUsed();
  live = null;
});

function setup(mode: PermissionMode = "role_based"): Setup {
  const fake = countingStore();
  const clock = manualClock();
  const logs: string[] = [];
  const hash = createTokenHasher("pepper-".repeat(6));
  const newId = createIdGenerator(() => clock.now());
  fake.tenants.set(TENANT, { id: TENANT, name: "Acme", permissionMode: mode, createdAt: clock.now() });
  const tokenCache = createMemoryCache({ now: () => clock.now() }).namespace<CachedToken>("tok", {
    ttlMs: 60_000,
    negativeTtlMs: 5_000,
    maxEntries: 1000,
  });
  const tokens = createTokens({
    store: fake.store,
    audit: createAudit({ store: fake.store, clock: manualClock(), newId: createIdGenerator() }),
    tokenCache,
    clock,
    newId,
    hashToken: hash,
    logger: createLogger((line) => logs.push(line)),
  });
  live = tokens;
  return {
    fake,
    clock,
    tokens,
    logs,
    seed(fields = {}) {
      const token = generateToken();
      const record: TokenRecord = {
        id: newId(),
        tenantId: TENANT,
        name: "t",
        scope: "read_write",
        role: "owner",
        prefix: tokenPrefix(token),
        digest: hash(token),
        createdAt: clock.now(),
        createdBy: null,
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null,
        ...fields,
      };
      fake.tokens.set(record.id, record);
      return { token, record };
    },
  };
}

function principal(role: Role, mode: PermissionMode = "role_based"): Principal {
  return { tokenId: "0".repeat(32), tenantId: TENANT, scope: "read_write", role, permissionMode: mode };
}

async function codeOf(run: () => Promise<unknown>): Promise<string | null> {
  try {
    await run();
    return null;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return error.code;
  }
}

describe("verification", () => {
  test("a known token verifies to its principal", async () => {
    const { tokens, seed } = setup();
    const { token, record } = seed({ scope: "read_only", role: "admin" });
    expect(await tokens.verifyToken(token)).toEqual({
      ok: true,
      principal: {
        tokenId: record.id,
        tenantId: TENANT,
        scope: "read_only",
        role: "admin",
        permissionMode: "role_based",
      },
    });
  });

  test("a revoked token is reason revoked", async () => {
    const { tokens, seed, clock } = setup();
    const { token } = seed({ revokedAt: clock.now() - 1 });
    expect(await tokens.verifyToken(token)).toEqual({ ok: false, reason: "revoked" });
  });

  test("expiry boundary: valid 1 ms before expires_at, expired exactly at it, even when cached", async () => {
    const { tokens, seed, clock, fake } = setup();
    const expiresAt = clock.now() + 3_600_000;
    const { token } = seed({ expiresAt });
    clock.set(expiresAt - 1);
    expect((await tokens.verifyToken(token)).ok).toBe(true);
    expect(fake.calls.get("tokens.findByDigest")).toBe(1);
    // Still cached: the answer below comes from the in-process entry, not the store.
    clock.set(expiresAt);
    const cached = tokens.verifyToken(token);
    expect(cached).not.toBeInstanceOf(Promise);
    expect(cached).toEqual({ ok: false, reason: "expired" });
    expect(fake.calls.get("tokens.findByDigest")).toBe(1);
    clock.set(expiresAt + 1);
    expect(await tokens.verifyToken(token)).toEqual({ ok: false, reason: "expired" });
  });

  test("a token already expired on its first lookup is reason expired", async () => {
    const { tokens, seed, clock } = setup();
    const { token } = seed({ expiresAt: clock.now() });
    expect(await tokens.verifyToken(token)).toEqual({ ok: false, reason: "expired" });
  });
});

describe("last_used_at", () => {
  test("verification answers before last_used_at is written: nothing reaches the store on the request path", async () => {
    const { tokens, seed, fake } = setup();
    const { token } = seed();
    const result = await tokens.verifyToken(token);
    expect(result.ok).toBe(true);
    expect(fake.calls.get("tokens.touchLastUsed")).toBeUndefined();
    await tokens.flushLastUsed();
    expect(fake.calls.get("tokens.touchLastUsed")).toBe(1);
  });

  test("a hanging last_used_at write does not hold up verification", async () => {
    const { tokens, seed, fake, clock } = setup();
    const { token } = seed();
    fake.setTouch(() => new Promise(() => {}));
    await tokens.verifyToken(token);
    void tokens.flushLastUsed();
    clock.advance(61_000);
    const started = performance.now();
    expect((await tokens.verifyToken(token)).ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(100);
    fake.setTouch(async () => {});
  });

  test("written at most once a minute per token (manual clock), at the time of use", async () => {
    const { tokens, seed, fake, clock } = setup();
    const a = seed();
    const b = seed();
    const t0 = clock.now();
    await tokens.verifyToken(a.token);
    await tokens.verifyToken(b.token);
    clock.advance(30_000);
    await tokens.verifyToken(a.token);
    clock.advance(29_999);
    await tokens.verifyToken(a.token);
    await tokens.flushLastUsed();
    expect(fake.touches).toEqual([
      [
        { id: a.record.id, at: t0 },
        { id: b.record.id, at: t0 },
      ],
    ]);
    // 60 s after the last write: due again (for a only: b is not used).
    clock.set(t0 + 60_000);
    await tokens.verifyToken(a.token);
    await tokens.verifyToken(a.token);
    await tokens.flushLastUsed();
    expect(fake.touches).toHaveLength(2);
    expect(fake.touches[1]).toEqual([{ id: a.record.id, at: t0 + 60_000 }]);
    // Nothing used since: a flush writes nothing.
    await tokens.flushLastUsed();
    expect(fake.calls.get("tokens.touchLastUsed")).toBe(2);
  });

  test("a pending last_used_at is flushed by itself shortly after use (no flush call)", async () => {
    const { tokens, seed, fake, clock } = setup();
    const { token, record } = seed();
    await tokens.verifyToken(token);
    expect(fake.touches).toEqual([]);
    await Bun.sleep(1_300);
    expect(fake.touches).toEqual([[{ id: record.id, at: clock.now() }]]);
  });

  test("a failed last_used_at write is logged as a warning and verification still succeeds", async () => {
    const { tokens, seed, fake, logs } = setup();
    const { token } = seed();
    fake.setTouch(async () => {
      throw new Error("disk full");
    });
    expect((await tokens.verifyToken(token)).ok).toBe(true);
    await tokens.flushLastUsed();
    expect(logs.some((l) => l.includes("last_used_at write failed"))).toBe(true);
  });
});

describe("minting", () => {
  test("role_escalation when minting above the caller's role; equal is fine", async () => {
    const { tokens } = setup();
    expect(await codeOf(() => tokens.issueToken(principal("member"), { name: "x", role: "admin" }, null))).toBe(
      "role_escalation",
    );
    expect(await codeOf(() => tokens.issueToken(principal("admin"), { name: "x", role: "owner" }, null))).toBe(
      "role_escalation",
    );
    expect(await codeOf(() => tokens.issueToken(principal("admin"), { name: "x", role: "admin" }, null))).toBeNull();
  });

  test("flat mode: a member may mint an owner token", async () => {
    const { tokens } = setup("flat");
    expect(
      await codeOf(() => tokens.issueToken(principal("member", "flat"), { name: "x", role: "owner" }, null)),
    ).toBeNull();
  });

  test("role_escalation is decided on a valid body: a bad body is invalid_request first", async () => {
    const { tokens, fake } = setup();
    expect(await codeOf(() => tokens.issueToken(principal("member"), { name: "", role: "owner" }, null))).toBe(
      "invalid_request",
    );
    expect(fake.total()).toBe(0);
  });

  test("expires_at at or before now is invalid_request on expires_at; 1 ms later is fine", async () => {
    const { tokens, clock } = setup();
    for (const expiresAt of [clock.now(), clock.now() - 1]) {
      try {
        await tokens.issueToken(principal("owner"), { name: "x", expiresAt }, null);
        throw new Error("expected invalid_request");
      } catch (error) {
        expect((error as DomainError).code).toBe("invalid_request");
        expect((error as DomainError).details?.[0]?.field).toBe("expires_at");
      }
    }
    const { record } = await tokens.issueToken(principal("owner"), { name: "x", expiresAt: clock.now() + 1 }, null);
    expect(record.expiresAt).toBe(clock.now() + 1);
  });

  test("defaults: read_only member, created_by the caller; the store keeps only the digest", async () => {
    const { tokens, fake } = setup();
    const caller = principal("owner");
    const { record, token } = await tokens.issueToken(caller, { name: "  ci  " }, null);
    expect(record).toMatchObject({ name: "ci", scope: "read_only", role: "member", createdBy: caller.tokenId });
    const stored = fake.tokens.get(record.id);
    expect(JSON.stringify(stored)).not.toContain(token.slice(13));
    expect(stored?.prefix).toBe(token.slice(0, 21));
  });

  test("a prefix collision is retried with a fresh token", async () => {
    const { tokens, fake } = setup();
    const inserts: string[] = [];
    let first = true;
    fake.override("tokens", "insert", (async (record: TokenRecord) => {
      inserts.push(record.prefix);
      if (first) {
        first = false;
        return "prefix_taken";
      }
      fake.tokens.set(record.id, record);
      return "ok";
    }) as (...args: never[]) => unknown);
    const { record } = await tokens.issueToken(principal("owner"), { name: "x" }, null);
    expect(inserts).toHaveLength(2);
    expect(inserts[1]).toBe(record.prefix);
    expect(inserts[0]).not.toBe(inserts[1]);
  });
});
