/**
 * The Store port's contract, run against every adapter (SQLite always, PostgreSQL when one
 * answers). Each test gets a fresh, migrated world from `makeStore`, so no test depends on
 * another's rows. Test names state the rule a user would notice if it broke.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  type AuditAction,
  type AuditRecord,
  type AuditTargetType,
  changesBetween,
  SERVICE_AUDITED_FIELDS,
  TENANT_AUDITED_FIELDS,
} from "../../src/domain/audit.ts";
import type { AuditOfUpdate, NewEvent, Store } from "../../src/domain/ports/store.ts";
import type { ServiceRecord, TenantRecord, TokenRecord } from "../../src/domain/types.ts";

export interface StoreWorld {
  store: Store;
  /** Another store on the same database, as a second instance would have (none for :memory:). */
  another?(): Store;
  cleanup(): Promise<void>;
}

export const NOW = 1_800_000_000_000;
const HOUR = 3_600_000;

let sequence = 0;
/** 32 lowercase hex, increasing in creation order like a UUIDv7 (48-bit ms time, then counter, then random). */
export function newId(): string {
  sequence = (sequence + 1) % 0x10000;
  const time = Date.now().toString(16).padStart(12, "0");
  const counter = sequence.toString(16).padStart(4, "0");
  return `${time}${counter}${randomHex(8)}`;
}

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

function randomPrefix(): string {
  return `service_live_${randomHex(4)}`;
}

export function tenantRecord(overrides: Partial<TenantRecord> = {}): TenantRecord {
  return { id: crypto.randomUUID(), name: "Acme", permissionMode: "role_based", createdAt: NOW, ...overrides };
}

export function tokenRecord(tenantId: string, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id: newId(),
    tenantId,
    name: "ci",
    scope: "read_write",
    role: "member",
    prefix: randomPrefix(),
    digest: randomHex(32),
    createdAt: NOW,
    createdBy: null,
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null,
    ...overrides,
  };
}

export function serviceRecord(tenantId: string, overrides: Partial<ServiceRecord> = {}): ServiceRecord {
  return {
    id: newId(),
    tenantId,
    serviceName: `svc-${randomHex(4)}`,
    isMonitored: true,
    secretCiphertext: `sealed-${randomHex(8)}`,
    signingSecretPrefix: "whsec_abcd",
    previousSecretCiphertext: null,
    previousSecretExpiresAt: null,
    secretRotatedAt: null,
    createdAt: NOW,
    updatedAt: NOW,
    rateLimitLimit: null,
    rateLimitWindowSeconds: null,
    incidentAutoResolveSeconds: null,
    signatureScheme: "stripe",
    ...overrides,
  };
}

/** The audit record a change hands the store (actor: a token of the tenant, request id set). */
export function auditOf(
  tenantId: string,
  action: AuditAction,
  targetType: AuditTargetType,
  targetId: string,
): AuditRecord {
  return {
    id: newId(),
    tenantId,
    occurredAt: NOW,
    action,
    actor: { type: "api_token", id: newId() },
    target: { type: targetType, id: targetId },
    requestId: `req_${newId()}`,
    changes: null,
  };
}

export function creationAudit(tenant: TenantRecord, first: TokenRecord): AuditRecord[] {
  return [
    { ...auditOf(tenant.id, "tenant.create", "tenant", tenant.id), actor: { type: "operator" }, requestId: null },
    { ...auditOf(tenant.id, "api_token.create", "api_token", first.id), actor: { type: "operator" }, requestId: null },
  ];
}

export function serviceUpdateAudit(tenantId: string, id: string): AuditOfUpdate<ServiceRecord> {
  return (before, after) => {
    const changes = changesBetween(before, after, SERVICE_AUDITED_FIELDS);
    return changes && { ...auditOf(tenantId, "service.update", "service", id), changes };
  };
}

export function tenantUpdateAudit(tenantId: string): AuditOfUpdate<TenantRecord> {
  return (before, after) => {
    const changes = changesBetween(before, after, TENANT_AUDITED_FIELDS);
    return changes && { ...auditOf(tenantId, "tenant.update", "tenant", tenantId), changes };
  };
}

/** The tenant of each service the tests added: an event carries its service's tenant. */
const tenantOfService = new Map<string, string>();

function newEvent(serviceId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    id: newId(),
    tenantId: tenantOfService.get(serviceId) ?? "no-such-tenant",
    serviceId,
    receivedAt: NOW,
    idempotencyKey: null,
    payload: new TextEncoder().encode(`{"n":"${randomHex(4)}"}`),
    ...overrides,
  };
}

export function runStoreContract(name: string, makeStore: () => Promise<StoreWorld>): void {
  describe(`${name} store contract`, () => {
    let world: StoreWorld;
    let store: Store;

    beforeEach(async () => {
      world = await makeStore();
      store = world.store;
      await store.migrate();
    });

    afterEach(async () => {
      await world.cleanup();
    });

    function insertToken(record: TokenRecord) {
      return store.tokens.insert(record, auditOf(record.tenantId, "api_token.create", "api_token", record.id));
    }

    function insertService(record: ServiceRecord) {
      return store.services.insert(record, auditOf(record.tenantId, "service.create", "service", record.id));
    }

    /** A tenant with its first owner read_write token. */
    async function seedTenant(overrides: Partial<TenantRecord> = {}) {
      const tenant = tenantRecord(overrides);
      const owner = tokenRecord(tenant.id, { role: "owner", scope: "read_write", name: "first" });
      await store.createTenant(tenant, owner, creationAudit(tenant, owner));
      return { tenant, owner };
    }

    /** Revokes as the domain does, with the revocation's audit record. */
    function revoke(tenantId: string, id: string, now = NOW) {
      return store.tokens.revoke(tenantId, id, now, auditOf(tenantId, "api_token.revoke", "api_token", id));
    }

    async function addToken(tenantId: string, overrides: Partial<TokenRecord> = {}) {
      const token = tokenRecord(tenantId, overrides);
      expect(await insertToken(token)).toBe("ok");
      return token;
    }

    async function addService(tenantId: string, overrides: Partial<ServiceRecord> = {}) {
      const service = serviceRecord(tenantId, overrides);
      expect(await insertService(service)).toBe("ok");
      tenantOfService.set(service.id, tenantId);
      return service;
    }

    /** Every page of a keyset listing, following `before` = last id of the previous page. */
    async function allPages<T extends { id: string }>(
      limit: number,
      fetch: (before: string | undefined) => Promise<T[]>,
    ): Promise<string[][]> {
      const pages: string[][] = [];
      let before: string | undefined;
      for (;;) {
        const page = await fetch(before);
        if (page.length === 0) return pages;
        expect(page.length).toBeLessThanOrEqual(limit);
        pages.push(page.map((r) => r.id));
        before = page.at(-1)?.id;
      }
    }

    describe("migrations and tenants", () => {
      test("migrate() is idempotent and keeps existing rows", async () => {
        const { tenant } = await seedTenant();
        await store.migrate();
        expect(await store.tenants.get(tenant.id)).toEqual(tenant);
      });

      test("createTenant stores the tenant and its first token together", async () => {
        const { tenant, owner } = await seedTenant({ name: "Ünïcode Ltd", permissionMode: "flat" });
        expect(await store.tenants.get(tenant.id)).toEqual(tenant);
        expect(await store.tokens.get(tenant.id, owner.id)).toEqual(owner);
      });

      test("a createTenant whose token cannot be stored stores no tenant either", async () => {
        const { owner: existing } = await seedTenant();
        const tenant = tenantRecord();
        const clash = tokenRecord(tenant.id, { role: "owner", prefix: existing.prefix });
        await expect(store.createTenant(tenant, clash, creationAudit(tenant, clash))).rejects.toThrow();
        expect(await store.tenants.get(tenant.id)).toBeNull();
        expect(await store.tokens.get(tenant.id, clash.id)).toBeNull();
      });

      test("a statement the database rejects rejects with an error that quotes none of its values", async () => {
        const { tenant, owner: existing } = await seedTenant();
        // A createTenant (a transaction) and a single INSERT, each refused by a unique index.
        const name = `name-${randomHex(8)}`;
        const other = tenantRecord({ name });
        const attempts = [
          () => {
            const first = tokenRecord(other.id, { name, digest: existing.digest });
            return store.createTenant(other, first, creationAudit(other, first));
          },
          () => insertToken(tokenRecord(tenant.id, { name, digest: existing.digest })),
        ];
        for (const attempt of attempts) {
          const error = await attempt().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(Error);
          // Everything a log line could print of it: name, message and the cause chain.
          const printed: string[] = [];
          for (let e: unknown = error, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
            printed.push(e.name, e.message, JSON.stringify(e));
          }
          const text = printed.join("\n");
          for (const value of [existing.digest, name, other.id, tenant.id, "params:"]) {
            expect(text).not.toContain(value);
          }
        }
      });

      test("tenants.get of an unknown id is null", async () => {
        expect(await store.tenants.get(crypto.randomUUID())).toBeNull();
      });

      test("tenants.rename returns the renamed tenant, null when unknown", async () => {
        const { tenant } = await seedTenant();
        expect(await store.tenants.rename(tenant.id, "Renamed", tenantUpdateAudit(tenant.id))).toEqual({
          ...tenant,
          name: "Renamed",
        });
        expect(await store.tenants.get(tenant.id)).toEqual({ ...tenant, name: "Renamed" });
        expect(await store.tenants.rename(crypto.randomUUID(), "x", tenantUpdateAudit(crypto.randomUUID()))).toBeNull();
      });

      test("tenants.countNamed counts exact, case-sensitive name matches (0 for none)", async () => {
        const name = `Twice ${crypto.randomUUID()}`;
        expect(await store.tenants.countNamed(name)).toBe(0);
        await seedTenant({ name });
        await seedTenant({ name });
        await seedTenant({ name: name.toUpperCase() });
        expect(await store.tenants.countNamed(name)).toBe(2);
      });
    });

    describe("setup codes", () => {
      /** A stored setup code (digest only) that expires an hour after NOW. */
      async function addSetupCode(expiresAt = NOW + HOUR) {
        const digest = randomHex(32);
        await store.setupCodes.insert({ digest, createdAt: NOW, expiresAt });
        return digest;
      }

      function firstTenant() {
        const tenant = tenantRecord({ name: "Set up" });
        return { tenant, owner: tokenRecord(tenant.id, { role: "owner", scope: "read_write", name: "setup" }) };
      }

      test("tenants.any is false on an empty store and true once a tenant exists", async () => {
        expect(await store.tenants.any()).toBe(false);
        await seedTenant();
        expect(await store.tenants.any()).toBe(true);
      });

      test("redeemSetupCode creates the tenant and its first token, and the code works once", async () => {
        const digest = await addSetupCode();
        const first = firstTenant();
        expect(
          await store.redeemSetupCode(digest, NOW, first.tenant, first.owner, creationAudit(first.tenant, first.owner)),
        ).toBe(true);
        expect(await store.tenants.get(first.tenant.id)).toEqual(first.tenant);
        expect(await store.tokens.get(first.tenant.id, first.owner.id)).toEqual(first.owner);

        const again = firstTenant();
        expect(
          await store.redeemSetupCode(digest, NOW, again.tenant, again.owner, creationAudit(again.tenant, again.owner)),
        ).toBe(false);
        expect(await store.tenants.get(again.tenant.id)).toBeNull();
        expect(await store.tokens.get(again.tenant.id, again.owner.id)).toBeNull();
      });

      test("an expired or unknown setup code creates nothing", async () => {
        const digest = await addSetupCode(NOW + 1_000);
        const late = firstTenant();
        expect(
          await store.redeemSetupCode(
            digest,
            NOW + 1_000,
            late.tenant,
            late.owner,
            creationAudit(late.tenant, late.owner),
          ),
        ).toBe(false);
        const unknown = firstTenant();
        expect(
          await store.redeemSetupCode(
            randomHex(32),
            NOW,
            unknown.tenant,
            unknown.owner,
            creationAudit(unknown.tenant, unknown.owner),
          ),
        ).toBe(false);
        expect(await store.tenants.any()).toBe(false);
      });

      test("concurrent redemptions of one setup code: exactly one creates a tenant", async () => {
        const digest = await addSetupCode();
        const attempts = Array.from({ length: 4 }, () => firstTenant());
        const results = await Promise.all(
          attempts.map((a) => store.redeemSetupCode(digest, NOW, a.tenant, a.owner, creationAudit(a.tenant, a.owner))),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const created = await Promise.all(attempts.map((a) => store.tenants.get(a.tenant.id)));
        expect(created.filter((t) => t !== null)).toHaveLength(1);
      });
    });

    describe("api tokens", () => {
      test("findByDigest resolves a token by its digest, null for an unknown digest", async () => {
        const { tenant } = await seedTenant();
        const token = await addToken(tenant.id, { expiresAt: NOW + HOUR, createdBy: newId() });
        expect(await store.tokens.findByDigest(token.digest)).toEqual(token);
        expect(await store.tokens.findByDigest(randomHex(32))).toBeNull();
      });

      test("tokens are tenant-scoped: another tenant's token is invisible via get and list", async () => {
        const a = await seedTenant();
        const b = await seedTenant();
        const bToken = await addToken(b.tenant.id);
        expect(await store.tokens.get(a.tenant.id, bToken.id)).toBeNull();
        expect(await store.tokens.get(a.tenant.id, b.owner.id)).toBeNull();
        const listed = await store.tokens.list(a.tenant.id, { limit: 100, includeRevoked: true });
        expect(listed.map((t) => t.id)).toEqual([a.owner.id]);
      });

      test("list pages newest first with no overlap and no gaps", async () => {
        const { tenant, owner } = await seedTenant();
        const created = [owner.id];
        for (let i = 0; i < 7; i++) created.push((await addToken(tenant.id)).id);
        const pages = await allPages(3, (before) =>
          store.tokens.list(tenant.id, { limit: 3, includeRevoked: false, ...(before ? { before } : {}) }),
        );
        expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
        expect(pages.flat()).toEqual([...created].reverse());
      });

      test("list shows every field of a token but its tenant and digest, as stored", async () => {
        const { tenant, owner } = await seedTenant();
        const child = await addToken(tenant.id, {
          name: "deploy",
          scope: "read_only",
          role: "admin",
          createdBy: owner.id,
          expiresAt: NOW + HOUR,
          lastUsedAt: NOW + 5,
        });
        expect((await revoke(tenant.id, child.id, NOW + 7)).kind).toBe("revoked");
        const summary = ({ tenantId: _tenant, digest: _digest, ...shown }: TokenRecord) => shown;
        expect(await store.tokens.list(tenant.id, { limit: 10, includeRevoked: true })).toStrictEqual([
          summary({ ...child, revokedAt: NOW + 7 }),
          summary(owner),
        ]);
      });

      test("list hides revoked tokens unless includeRevoked is set", async () => {
        const { tenant, owner } = await seedTenant();
        const kept = await addToken(tenant.id);
        const gone = await addToken(tenant.id);
        expect((await revoke(tenant.id, gone.id)).kind).toBe("revoked");
        const active = await store.tokens.list(tenant.id, { limit: 10, includeRevoked: false });
        expect(active.map((t) => t.id)).toEqual([kept.id, owner.id]);
        const all = await store.tokens.list(tenant.id, { limit: 10, includeRevoked: true });
        expect(all.map((t) => t.id)).toEqual([gone.id, kept.id, owner.id]);
        expect(all[0]?.revokedAt).toBe(NOW);
      });

      test("a prefix stays reserved forever: insert returns prefix_taken, even against a revoked token of another tenant", async () => {
        const a = await seedTenant();
        const b = await seedTenant();
        const revoked = await addToken(a.tenant.id);
        await revoke(a.tenant.id, revoked.id);
        const again = tokenRecord(b.tenant.id, { prefix: revoked.prefix });
        expect(await insertToken(again)).toBe("prefix_taken");
        expect(await store.tokens.get(b.tenant.id, again.id)).toBeNull();
        expect(await insertToken(tokenRecord(b.tenant.id))).toBe("ok");
      });

      test("revoke sets revoked_at; a repeat is already_revoked and keeps the first revoked_at", async () => {
        const { tenant } = await seedTenant();
        const token = await addToken(tenant.id);
        const first = await revoke(tenant.id, token.id, NOW + 1);
        expect(first).toEqual({ kind: "revoked", record: { ...token, revokedAt: NOW + 1 } });
        const repeat = await revoke(tenant.id, token.id, NOW + 5_000);
        expect(repeat).toEqual({ kind: "already_revoked", record: { ...token, revokedAt: NOW + 1 } });
        expect((await store.tokens.get(tenant.id, token.id))?.revokedAt).toBe(NOW + 1);
      });

      test("revoke of an unknown token or another tenant's token is not_found and changes nothing", async () => {
        const a = await seedTenant();
        const b = await seedTenant();
        const bToken = await addToken(b.tenant.id);
        expect(await revoke(a.tenant.id, newId())).toEqual({ kind: "not_found" });
        expect(await revoke(a.tenant.id, bToken.id)).toEqual({ kind: "not_found" });
        expect(await revoke(crypto.randomUUID(), bToken.id)).toEqual({ kind: "not_found" });
        expect((await store.tokens.get(b.tenant.id, bToken.id))?.revokedAt).toBeNull();
      });

      test("revoking the last active owner read_write token is refused with last_owner", async () => {
        const { tenant, owner } = await seedTenant();
        // None of these can administer the tenant the way an owner read_write token can.
        await addToken(tenant.id, { role: "owner", scope: "read_only" });
        await addToken(tenant.id, { role: "admin", scope: "read_write" });
        const revokedOwner = await addToken(tenant.id, { role: "owner", scope: "read_write" });
        expect((await revoke(tenant.id, revokedOwner.id)).kind).toBe("revoked");

        expect(await revoke(tenant.id, owner.id)).toEqual({ kind: "last_owner" });
        expect((await store.tokens.get(tenant.id, owner.id))?.revokedAt).toBeNull();
      });

      test("revoking one of two active owner read_write tokens succeeds, then the other is the last owner", async () => {
        const { tenant, owner } = await seedTenant();
        const second = await addToken(tenant.id, { role: "owner", scope: "read_write" });
        expect((await revoke(tenant.id, owner.id)).kind).toBe("revoked");
        expect(await revoke(tenant.id, second.id)).toEqual({ kind: "last_owner" });
      });

      test("an expired owner token does not count as active: it cannot keep the tenant administrable", async () => {
        const { tenant, owner } = await seedTenant();
        const expired = await addToken(tenant.id, { role: "owner", scope: "read_write", expiresAt: NOW - 1 });
        const expiresNow = await addToken(tenant.id, { role: "owner", scope: "read_write", expiresAt: NOW });
        expect(await revoke(tenant.id, owner.id)).toEqual({ kind: "last_owner" });
        // Revoking an expired owner token is always allowed: it was not active.
        expect((await revoke(tenant.id, expired.id)).kind).toBe("revoked");
        expect((await revoke(tenant.id, expiresNow.id)).kind).toBe("revoked");
      });

      test("last_owner for the last owner token that does not expire while the remaining owners all expire", async () => {
        const { tenant, owner } = await seedTenant();
        const expiring = await addToken(tenant.id, { role: "owner", scope: "read_write", expiresAt: NOW + 3_000 });
        expect(await revoke(tenant.id, owner.id)).toEqual({ kind: "last_owner" });
        expect((await store.tokens.get(tenant.id, owner.id))?.revokedAt).toBeNull();
        // The expiring one may go: the permanent owner stays.
        expect((await revoke(tenant.id, expiring.id)).kind).toBe("revoked");
      });

      test("a non-expiring owner token may be revoked while another non-expiring one stays", async () => {
        const { tenant, owner } = await seedTenant();
        await addToken(tenant.id, { role: "owner", scope: "read_write", expiresAt: NOW + 3_000 });
        const second = await addToken(tenant.id, { role: "owner", scope: "read_write" });
        expect((await revoke(tenant.id, owner.id)).kind).toBe("revoked");
        expect(await revoke(tenant.id, second.id)).toEqual({ kind: "last_owner" });
      });

      test("with no non-expiring owner at all, one active owner read_write token must still remain", async () => {
        // A tenant from before the rule: its owners all expire; the older rule still holds.
        const tenant = tenantRecord();
        const first = tokenRecord(tenant.id, { role: "owner", scope: "read_write", expiresAt: NOW + HOUR });
        await store.createTenant(tenant, first, creationAudit(tenant, first));
        const second = await addToken(tenant.id, { role: "owner", scope: "read_write", expiresAt: NOW + 2 * HOUR });
        expect((await revoke(tenant.id, first.id)).kind).toBe("revoked");
        expect(await revoke(tenant.id, second.id)).toEqual({ kind: "last_owner" });
      });

      test("concurrent revocations of the last two owner tokens: exactly one succeeds", async () => {
        // Several tenants at once so that the calls really overlap on a pooled adapter.
        const rounds = await Promise.all(
          Array.from({ length: 5 }, async () => {
            const { tenant, owner } = await seedTenant();
            const second = await addToken(tenant.id, { role: "owner", scope: "read_write" });
            const outcomes = await Promise.all([revoke(tenant.id, owner.id), revoke(tenant.id, second.id)]);
            const active = await store.tokens.list(tenant.id, { limit: 10, includeRevoked: false });
            return { kinds: outcomes.map((o) => o.kind).sort(), active: active.length };
          }),
        );
        for (const round of rounds) {
          expect(round.kinds).toEqual(["last_owner", "revoked"]);
          expect(round.active).toBe(1);
        }
      });

      test("concurrent revocations of the last two non-expiring owner tokens: exactly one succeeds", async () => {
        const rounds = await Promise.all(
          Array.from({ length: 5 }, async () => {
            const { tenant, owner } = await seedTenant();
            const second = await addToken(tenant.id, { role: "owner", scope: "read_write" });
            await addToken(tenant.id, { role: "owner", scope: "read_write", expiresAt: NOW + HOUR });
            const outcomes = await Promise.all([revoke(tenant.id, owner.id), revoke(tenant.id, second.id)]);
            const active = await store.tokens.list(tenant.id, { limit: 10, includeRevoked: false });
            return {
              kinds: outcomes.map((o) => o.kind).sort(),
              permanent: active.filter((t) => t.expiresAt === null).length,
            };
          }),
        );
        for (const round of rounds) {
          expect(round.kinds).toEqual(["last_owner", "revoked"]);
          expect(round.permanent).toBe(1);
        }
      });

      test("touchLastUsed records the time, ignores unknown ids and never moves it backwards", async () => {
        const { tenant, owner } = await seedTenant();
        const other = await addToken(tenant.id);
        await store.tokens.touchLastUsed([]);
        await store.tokens.touchLastUsed([
          { id: owner.id, at: NOW + 60_000 },
          { id: other.id, at: NOW + 1_000 },
          { id: newId(), at: NOW },
        ]);
        expect((await store.tokens.get(tenant.id, owner.id))?.lastUsedAt).toBe(NOW + 60_000);
        expect((await store.tokens.get(tenant.id, other.id))?.lastUsedAt).toBe(NOW + 1_000);

        // A late flush from another instance carries an older time: it must not win.
        await store.tokens.touchLastUsed([
          { id: owner.id, at: NOW + 30_000 },
          { id: other.id, at: NOW + 2_000 },
          { id: other.id, at: NOW + 3_000 },
        ]);
        expect((await store.tokens.get(tenant.id, owner.id))?.lastUsedAt).toBe(NOW + 60_000);
        expect((await store.tokens.findByDigest(other.digest))?.lastUsedAt).toBe(NOW + 3_000);
      });
    });

    describe("services", () => {
      test("service_name is unique per tenant (name_taken), case-sensitive, and free in another tenant", async () => {
        const a = await seedTenant();
        const b = await seedTenant();
        const billing = await addService(a.tenant.id, { serviceName: "Billing" });
        const clash = serviceRecord(a.tenant.id, { serviceName: "Billing" });
        expect(await insertService(clash)).toBe("name_taken");
        expect(await store.services.get(a.tenant.id, clash.id)).toBeNull();
        expect(await insertService(serviceRecord(a.tenant.id, { serviceName: "billing" }))).toBe("ok");
        expect(await insertService(serviceRecord(b.tenant.id, { serviceName: "Billing" }))).toBe("ok");
        expect(await store.services.get(a.tenant.id, billing.id)).toEqual(billing);
      });

      test("services are tenant-scoped: another tenant cannot see, change, rotate or delete them", async () => {
        const a = await seedTenant();
        const b = await seedTenant();
        const service = await addService(b.tenant.id);
        const rotation = { ciphertext: "new", prefix: "whsec_new0", rotatedAt: NOW + 1, previousExpiresAt: NOW + 2 };
        expect(await store.services.get(a.tenant.id, service.id)).toBeNull();
        expect(await store.services.list(a.tenant.id, { limit: 100 })).toEqual([]);
        expect(
          await store.services.update(
            a.tenant.id,
            service.id,
            { isMonitored: false },
            NOW + 1,
            serviceUpdateAudit(a.tenant.id, service.id),
          ),
        ).toBeNull();
        expect(
          await store.services.rotateSecret(
            a.tenant.id,
            service.id,
            rotation,
            auditOf(a.tenant.id, "service.secret_rotate", "service", service.id),
          ),
        ).toBeNull();
        expect(
          await store.services.delete(
            a.tenant.id,
            service.id,
            auditOf(a.tenant.id, "service.delete", "service", service.id),
          ),
        ).toBe(false);
        expect(await store.services.get(b.tenant.id, service.id)).toEqual(service);
      });

      test("getById finds a service without a tenant (ingest), null when unknown", async () => {
        const { tenant } = await seedTenant();
        const service = await addService(tenant.id);
        expect(await store.services.getById(service.id)).toEqual(service);
        expect(await store.services.getById(newId())).toBeNull();
      });

      test("list pages newest first with no overlap and no gaps", async () => {
        const { tenant } = await seedTenant();
        const created: string[] = [];
        for (let i = 0; i < 5; i++) created.push((await addService(tenant.id)).id);
        const pages = await allPages(2, (before) =>
          store.services.list(tenant.id, { limit: 2, ...(before ? { before } : {}) }),
        );
        expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
        expect(pages.flat()).toEqual([...created].reverse());
      });

      test("list shows every field of a service but its tenant and sealed secrets, as stored", async () => {
        const { tenant } = await seedTenant();
        const plain = await addService(tenant.id);
        const rotated = await addService(tenant.id, {
          isMonitored: false,
          previousSecretCiphertext: `sealed-${randomHex(8)}`,
          previousSecretExpiresAt: NOW + HOUR,
          secretRotatedAt: NOW + 3,
          updatedAt: NOW + 3,
          rateLimitLimit: 50,
          rateLimitWindowSeconds: 10,
          signatureScheme: "standard_webhooks",
        });
        const summary = ({
          tenantId: _tenant,
          secretCiphertext: _current,
          previousSecretCiphertext: _previous,
          ...shown
        }: ServiceRecord) => shown;
        expect(await store.services.list(tenant.id, { limit: 10 })).toStrictEqual([summary(rotated), summary(plain)]);
      });

      test("update sets and clears the rate limit as a whole, leaving the other fields", async () => {
        const { tenant } = await seedTenant();
        const service = await addService(tenant.id);
        const limited = await store.services.update(
          tenant.id,
          service.id,
          { rateLimit: { limit: 50, windowSeconds: 10 } },
          NOW + 10,
          serviceUpdateAudit(tenant.id, service.id),
        );
        const expected = { ...service, rateLimitLimit: 50, rateLimitWindowSeconds: 10, updatedAt: NOW + 10 };
        expect(limited).toEqual(expected);
        expect(await store.services.getById(service.id)).toEqual(expected);
        const cleared = await store.services.update(
          tenant.id,
          service.id,
          { rateLimit: null },
          NOW + 20,
          serviceUpdateAudit(tenant.id, service.id),
        );
        expect(cleared).toEqual({ ...service, updatedAt: NOW + 20 });
        expect(await store.services.get(tenant.id, service.id)).toEqual({ ...service, updatedAt: NOW + 20 });
      });

      test("update with signature_scheme changes the scheme and updated_at only, and back", async () => {
        const { tenant } = await seedTenant();
        const service = await addService(tenant.id);
        expect(service.signatureScheme).toBe("stripe");
        const switched = await store.services.update(
          tenant.id,
          service.id,
          { signatureScheme: "standard_webhooks" },
          NOW + 10,
          serviceUpdateAudit(tenant.id, service.id),
        );
        const expected: ServiceRecord = { ...service, signatureScheme: "standard_webhooks", updatedAt: NOW + 10 };
        expect(switched).toEqual(expected);
        expect(await store.services.getById(service.id)).toEqual(expected);
        expect((await store.services.list(tenant.id, { limit: 10 }))[0]?.signatureScheme).toBe("standard_webhooks");
        const back = await store.services.update(
          tenant.id,
          service.id,
          { signatureScheme: "stripe" },
          NOW + 20,
          serviceUpdateAudit(tenant.id, service.id),
        );
        expect(back).toEqual({ ...service, updatedAt: NOW + 20 });
      });

      test("update with is_monitored changes is_monitored and updated_at only", async () => {
        const { tenant } = await seedTenant();
        const service = await addService(tenant.id, { rateLimitLimit: 5, rateLimitWindowSeconds: 60 });
        const paused = await store.services.update(
          tenant.id,
          service.id,
          { isMonitored: false },
          NOW + 10,
          serviceUpdateAudit(tenant.id, service.id),
        );
        expect(paused).toEqual({ ...service, isMonitored: false, updatedAt: NOW + 10 });
        expect(await store.services.getById(service.id)).toEqual({
          ...service,
          isMonitored: false,
          updatedAt: NOW + 10,
        });
      });

      test("rotateSecret moves the current secret to previous; a second rotation retires the oldest", async () => {
        const { tenant } = await seedTenant();
        const service = await addService(tenant.id, {
          secretCiphertext: "sealed-v1",
          signingSecretPrefix: "whsec_v1aa",
        });
        const first = await store.services.rotateSecret(
          tenant.id,
          service.id,
          {
            ciphertext: "sealed-v2",
            prefix: "whsec_v2bb",
            rotatedAt: NOW + 1_000,
            previousExpiresAt: NOW + 1_000 + 86_400_000,
          },
          auditOf(tenant.id, "service.secret_rotate", "service", service.id),
        );
        expect(first).toEqual({
          ...service,
          secretCiphertext: "sealed-v2",
          signingSecretPrefix: "whsec_v2bb",
          previousSecretCiphertext: "sealed-v1",
          previousSecretExpiresAt: NOW + 1_000 + 86_400_000,
          secretRotatedAt: NOW + 1_000,
          updatedAt: NOW + 1_000,
        });
        const second = await store.services.rotateSecret(
          tenant.id,
          service.id,
          {
            ciphertext: "sealed-v3",
            prefix: "whsec_v3cc",
            rotatedAt: NOW + 2_000,
            previousExpiresAt: NOW + 2_000 + 86_400_000,
          },
          auditOf(tenant.id, "service.secret_rotate", "service", service.id),
        );
        expect(second?.secretCiphertext).toBe("sealed-v3");
        expect(second?.previousSecretCiphertext).toBe("sealed-v2");
        expect(second?.previousSecretExpiresAt).toBe(NOW + 2_000 + 86_400_000);
        expect(await store.services.getById(service.id)).toEqual(second);
      });

      test("delete removes the service and all its events, and leaves other services' events", async () => {
        const { tenant } = await seedTenant();
        const doomed = await addService(tenant.id);
        const kept = await addService(tenant.id);
        await store.events.insertBatch([newEvent(doomed.id, { idempotencyKey: "k1" }), newEvent(doomed.id)]);
        const keptEvent = newEvent(kept.id, { idempotencyKey: "k1" });
        await store.events.insertBatch([keptEvent]);

        expect(
          await store.services.delete(tenant.id, doomed.id, auditOf(tenant.id, "service.delete", "service", doomed.id)),
        ).toBe(true);
        expect(await store.services.get(tenant.id, doomed.id)).toBeNull();
        expect(await store.events.list(doomed.id, { limit: 10 })).toEqual([]);
        expect((await store.events.list(kept.id, { limit: 10 })).map((e) => e.id)).toEqual([keptEvent.id]);
        expect(
          await store.services.delete(tenant.id, doomed.id, auditOf(tenant.id, "service.delete", "service", doomed.id)),
        ).toBe(false);
      });

      test("a deleted service's name can be used again", async () => {
        const { tenant } = await seedTenant();
        const first = await addService(tenant.id, { serviceName: "orders" });
        await store.services.delete(tenant.id, first.id, auditOf(tenant.id, "service.delete", "service", first.id));
        expect(await insertService(serviceRecord(tenant.id, { serviceName: "orders" }))).toBe("ok");
      });
    });

    describe("events", () => {
      async function seedService() {
        const { tenant } = await seedTenant();
        return addService(tenant.id);
      }

      test("insertBatch stores every event; list pages newest stored first (position) with no overlap and no gaps", async () => {
        const service = await seedService();
        const other = await addService(service.tenantId);
        // Two batches, the second's ids older than the first's: the list is in commit order.
        const late = Array.from({ length: 4 }, (_, i) => newEvent(service.id, { receivedAt: NOW + i }));
        const early = Array.from({ length: 3 }, (_, i) => newEvent(service.id, { receivedAt: NOW + 4 + i }));
        expect(await store.events.insertBatch(early)).toEqual(early.map(() => ({ kind: "inserted" })));
        expect(await store.events.insertBatch([newEvent(other.id, {})])).toEqual([{ kind: "inserted" }]);
        expect(await store.events.insertBatch(late)).toEqual(late.map(() => ({ kind: "inserted" })));
        const batch = [...early, ...late];
        const pages: string[][] = [];
        let before: number | undefined;
        for (;;) {
          const page = await store.events.list(service.id, { limit: 3, ...(before !== undefined && { before }) });
          if (page.length === 0) break;
          pages.push(page.map((r) => r.id));
          before = page.at(-1)?.position;
        }
        expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
        expect(pages.flat()).toEqual(batch.map((e) => e.id).reverse());
        const [newest] = await store.events.list(service.id, { limit: 1 });
        expect(newest).toMatchObject({
          id: late[3]?.id,
          serviceId: service.id,
          receivedAt: NOW + 3,
          idempotencyKey: null,
        });
      });

      test("payload bytes round-trip exactly, including non-ASCII UTF-8, odd whitespace and large bodies", async () => {
        const service = await seedService();
        const bodies = [
          new TextEncoder().encode('{"msg":"héllo — 日本語 🎉","n":1.0,  "e":"\\u00e9"}\n'),
          // Not valid UTF-8, NUL included: the store keeps bytes, it does not judge them.
          new Uint8Array([0x7b, 0x00, 0xff, 0xfe, 0xc3, 0x28, 0x7d]),
          crypto.getRandomValues(new Uint8Array(262_144)),
        ];
        const batch = bodies.map((payload) => newEvent(service.id, { payload }));
        await store.events.insertBatch(batch);
        const listed = await store.events.list(service.id, { limit: 10 });
        const byId = new Map(listed.map((e) => [e.id, e.payload]));
        for (const event of batch) {
          const stored = byId.get(event.id);
          expect(stored).toBeInstanceOf(Uint8Array);
          expect(stored?.byteLength).toBe(event.payload.byteLength);
          expect(Buffer.from(stored ?? new Uint8Array()).equals(Buffer.from(event.payload))).toBe(true);
        }
      });

      test("a repeated Idempotency-Key within one batch is a duplicate of the first", async () => {
        const service = await seedService();
        const first = newEvent(service.id, { idempotencyKey: "order-1", receivedAt: NOW });
        const plain = newEvent(service.id, { receivedAt: NOW });
        const repeat = newEvent(service.id, { idempotencyKey: "order-1", receivedAt: NOW });
        const results = await store.events.insertBatch([first, plain, repeat]);
        expect(results).toEqual([
          { kind: "inserted" },
          { kind: "inserted" },
          { kind: "duplicate", id: first.id, receivedAt: NOW },
        ]);
        const stored = await store.events.list(service.id, { limit: 10 });
        expect(stored.map((e) => e.id)).toEqual([plain.id, first.id]);
      });

      test("a key used by an earlier batch is a duplicate carrying the first event's id and received_at", async () => {
        const service = await seedService();
        const first = newEvent(service.id, { idempotencyKey: "pay_123", receivedAt: NOW });
        await store.events.insertBatch([first]);
        const later = newEvent(service.id, { idempotencyKey: "pay_123", receivedAt: NOW + 5_000 });
        const fresh = newEvent(service.id, { idempotencyKey: "pay_124", receivedAt: NOW + 5_000 });
        expect(await store.events.insertBatch([later, fresh])).toEqual([
          { kind: "duplicate", id: first.id, receivedAt: NOW },
          { kind: "inserted" },
        ]);
        const stored = await store.events.list(service.id, { limit: 10 });
        expect(stored.map((e) => e.id)).toEqual([fresh.id, first.id]);
        expect(stored[1]?.idempotencyKey).toBe("pay_123");
      });

      test("idempotency keys are per service and events without a key never collide", async () => {
        const a = await seedService();
        const b = await seedService();
        const results = await store.events.insertBatch([
          newEvent(a.id, { idempotencyKey: "same" }),
          newEvent(b.id, { idempotencyKey: "same" }),
          newEvent(a.id),
          newEvent(a.id),
        ]);
        expect(results.map((r) => r.kind)).toEqual(["inserted", "inserted", "inserted", "inserted"]);
        expect(await store.events.list(a.id, { limit: 10 })).toHaveLength(3);
      });

      test("a failing batch rejects and stores nothing of it", async () => {
        const service = await seedService();
        const good = newEvent(service.id, { idempotencyKey: "kept-out" });
        const orphan = newEvent(newId()); // its service does not exist
        expect(await rejection(store.events.insertBatch([good, orphan]))).toBeInstanceOf(Error);
        expect(await store.events.list(service.id, { limit: 10 })).toEqual([]);

        const keyless = newEvent(service.id);
        const sameId = newEvent(service.id, { id: keyless.id });
        expect(await rejection(store.events.insertBatch([keyless, sameId]))).toBeInstanceOf(Error);
        expect(await store.events.list(service.id, { limit: 10 })).toEqual([]);

        // The key was not consumed by the failed batch.
        expect(await store.events.insertBatch([newEvent(service.id, { idempotencyKey: "kept-out" })])).toEqual([
          { kind: "inserted" },
        ]);
      });

      test("a batch too large for one SQL statement is still stored whole, duplicates decided across it", async () => {
        const service = await seedService();
        // 14,000 rows: bound one parameter per column and row, more than one PostgreSQL statement takes.
        const bulk = Array.from({ length: 14_000 }, () =>
          newEvent(service.id, { payload: new Uint8Array([123, 125]) }),
        );
        const bulkResults = await store.events.insertBatch(bulk);
        expect(bulkResults.every((r) => r.kind === "inserted")).toBe(true);

        const keyed = Array.from({ length: 2_000 }, (_, i) => newEvent(service.id, { idempotencyKey: `k-${i}` }));
        const repeats = keyed.slice(0, 100).map((e) => newEvent(service.id, { idempotencyKey: e.idempotencyKey }));
        const results = await store.events.insertBatch([...keyed, ...repeats]);
        expect(results.slice(0, 2_000).every((r) => r.kind === "inserted")).toBe(true);
        expect(results.slice(2_000)).toEqual(
          keyed.slice(0, 100).map((e) => ({ kind: "duplicate", id: e.id, receivedAt: NOW })),
        );

        const orphan = newEvent(newId());
        const failing = [...Array.from({ length: 2_500 }, () => newEvent(service.id)), orphan];
        expect(await rejection(store.events.insertBatch(failing))).toBeInstanceOf(Error);
        const newest = await store.events.list(service.id, { limit: 1 });
        expect(newest[0]?.id).toBe(keyed.at(-1)?.id);
      });

      test("keys spelled like SQL or array syntax (NULL, quotes, backslashes, braces) are stored and matched exactly", async () => {
        const service = await seedService();
        const keys = ["NULL", "null", 'a"b\\c', "{x,y}", "\\N", "'; drop table events; --"];
        const firsts = keys.map((k, i) => newEvent(service.id, { idempotencyKey: k, receivedAt: NOW + i }));
        expect((await store.events.insertBatch(firsts)).map((r) => r.kind)).toEqual(keys.map(() => "inserted"));
        const stored = await store.events.list(service.id, { limit: 10 });
        expect(stored.map((e) => e.idempotencyKey).sort()).toEqual([...keys].sort());

        const repeats = keys.map((k) => newEvent(service.id, { idempotencyKey: k }));
        expect(await store.events.insertBatch(repeats)).toEqual(
          firsts.map((e) => ({ kind: "duplicate", id: e.id, receivedAt: e.receivedAt })),
        );
      });

      test("an empty batch is a no-op", async () => {
        expect(await store.events.insertBatch([])).toEqual([]);
      });

      test("concurrent batches repeating one key store it once; every other copy is a duplicate of it", async () => {
        const service = await seedService();
        const batches = Array.from({ length: 6 }, (_, i) => [
          newEvent(service.id, { idempotencyKey: "race", receivedAt: NOW + i }),
        ]);
        const results = (await Promise.all(batches.map((b) => store.events.insertBatch(b)))).flat();
        const stored = await store.events.list(service.id, { limit: 10 });
        expect(stored).toHaveLength(1);
        const winner = stored[0];
        expect(results.filter((r) => r.kind === "inserted")).toHaveLength(1);
        for (const r of results.filter((x) => x.kind === "duplicate")) {
          expect(r).toEqual({ kind: "duplicate", id: winner?.id ?? "", receivedAt: winner?.receivedAt ?? -1 });
        }
      });
    });

    describe("feed", () => {
      test("feed returns the tenant's events in insertion order, past the cursor, with the filter", async () => {
        const { tenant } = await seedTenant();
        const a = await addService(tenant.id);
        const b = await addService(tenant.id);
        const other = await addService((await seedTenant()).tenant.id);
        const batch = [newEvent(a.id), newEvent(b.id), newEvent(other.id), newEvent(a.id)];
        await store.events.insertBatch(batch);
        await store.events.insertBatch([newEvent(b.id)]);
        const all = await store.events.feed(tenant.id, { after: 0, limit: 10 });
        expect(all.map((e) => e.serviceId)).toEqual([a.id, b.id, a.id, b.id]);
        const positions = all.map((e) => e.position);
        expect([...positions].sort((x, y) => x - y)).toEqual(positions);
        expect(new Set(positions).size).toBe(4);
        const rest = await store.events.feed(tenant.id, { after: positions[1] as number, limit: 10 });
        expect(rest.map((e) => e.id)).toEqual(all.slice(2).map((e) => e.id));
        const onlyA = await store.events.feed(tenant.id, { after: 0, limit: 10, serviceId: a.id });
        expect(onlyA.map((e) => e.id)).toEqual([all[0]?.id as string, all[2]?.id as string]);
        expect(await store.events.feedHead(tenant.id)).toBe(positions[3] as number);
        expect(await store.events.feedHead(crypto.randomUUID())).toBe(0);
        expect(await store.events.get(tenant.id, all[0]?.id as string)).toMatchObject({ id: all[0]?.id });
        expect(await store.events.get(other.tenantId, all[0]?.id as string)).toBeNull();
      });

      test("maxBytes stops a read before the event that would pass it, returns one event however large, and resumes exactly", async () => {
        const { tenant } = await seedTenant();
        const a = await addService(tenant.id);
        const b = await addService(tenant.id);
        const big = (serviceId: string, n: number) =>
          newEvent(serviceId, { payload: new Uint8Array(n).fill(0x61 + (n % 26)) });
        // Sizes 300, 300, 500, 50, 1200 (alone over the budget), 10 — with b's events between.
        const sizes = [300, 300, 500, 50, 1200, 10];
        for (const n of sizes) await store.events.insertBatch([big(a.id, n), big(b.id, 7)]);
        const budget = 1000;
        const read = (after: number, serviceId?: string) =>
          store.events.feed(tenant.id, { after, limit: 100, maxBytes: budget, serviceId });
        const pages: number[][] = [];
        for (let after = 0; ; ) {
          const page = await read(after, a.id);
          if (page.length === 0) break;
          pages.push(page.map((e) => e.payload.length));
          after = (page[page.length - 1] as { position: number }).position;
        }
        expect(pages).toEqual([[300, 300], [500, 50], [1200], [10]]);
        // Unfiltered, b's 7-byte events count too, and nothing is lost or repeated.
        const all: number[] = [];
        for (let after = 0; ; ) {
          const page = await read(after);
          if (page.length === 0) break;
          expect(page.reduce((sum, e) => sum + e.payload.length, 0) <= budget || page.length === 1).toBe(true);
          all.push(...page.map((e) => e.position));
          after = page[page.length - 1]?.position as number;
        }
        const everything = await store.events.feed(tenant.id, { after: 0, limit: 100 });
        expect(all).toEqual(everything.map((e) => e.position));
        // The count limit still holds under the budget.
        expect((await store.events.feed(tenant.id, { after: 0, limit: 3, maxBytes: 1 << 20 })).length).toBe(3);
      });

      test("a position is never reused: events after a deleted service's newest events still sort after every cursor", async () => {
        const { tenant } = await seedTenant();
        const kept = await addService(tenant.id);
        const doomed = await addService(tenant.id);
        await store.events.insertBatch([newEvent(kept.id), newEvent(doomed.id)]);
        const head = await store.events.feedHead(tenant.id);
        await store.services.delete(tenant.id, doomed.id, auditOf(tenant.id, "service.delete", "service", doomed.id));
        const later = newEvent(kept.id);
        await store.events.insertBatch([later]);
        expect((await store.events.feed(tenant.id, { after: head, limit: 10 })).map((e) => e.id)).toEqual([later.id]);
      });

      test("concurrent batches (on two more stores when the database allows) never place an event behind a cursor already handed out", async () => {
        const { tenant } = await seedTenant();
        const service = await addService(tenant.id);
        const others = world.another ? [world.another(), world.another()] : [];
        const stores = [store, ...others];
        const acknowledged: string[] = [];
        let writing = true;
        const writers = stores.map(async (s, w) => {
          for (let round = 0; round < 15; round++) {
            // Several batches in flight per store: they commit in whatever order they manage.
            await Promise.all(
              Array.from({ length: 4 }, async (_, k) => {
                const batch = Array.from({ length: 1 + ((round + k + w) % 7) }, () => newEvent(service.id));
                await s.events.insertBatch(batch);
                for (const e of batch) acknowledged.push(e.id);
              }),
            );
          }
        });
        const done = Promise.all(writers).finally(() => {
          writing = false;
        });
        try {
          // The reader pages with a small limit as fast as it can, through its own store.
          const reader = stores[stores.length - 1] as Store;
          const seen: string[] = [];
          let cursor = 0;
          for (;;) {
            const finished = !writing;
            const page = await reader.events.feed(tenant.id, { after: cursor, limit: 7 });
            for (const e of page) {
              expect(e.position).toBeGreaterThan(cursor);
              seen.push(e.id);
              cursor = e.position;
            }
            if (finished && page.length === 0) break;
            // SQLite reads resolve synchronously: let the writers' replies in.
            if (page.length === 0) await Bun.sleep(0);
          }
          await done;
          expect(new Set(seen).size).toBe(seen.length);
          expect(new Set(seen)).toEqual(new Set(acknowledged));
        } finally {
          await done.catch(() => undefined);
          for (const s of others) await s.close();
        }
      });

      test("deleteOlderThan removes old events in batches, their idempotency keys with them, and keeps the rest", async () => {
        const { tenant } = await seedTenant();
        const service = await addService(tenant.id);
        const DAY = 86_400_000;
        const oldTime = Date.now() - 10 * DAY;
        const oldEvents = Array.from({ length: 5 }, (_, i) => {
          const id = `${(oldTime + i).toString(16).padStart(12, "0")}7000${randomHex(8)}`;
          return newEvent(service.id, { id, receivedAt: oldTime + i, idempotencyKey: `old-${i}` });
        });
        const fresh = newEvent(service.id, { receivedAt: Date.now() });
        await store.events.insertBatch([...oldEvents, fresh]);
        const cutoff = Date.now() - DAY;
        expect(await store.events.deleteOlderThan(cutoff, 2)).toBe(2);
        expect(await store.events.deleteOlderThan(cutoff, 2)).toBe(2);
        expect(await store.events.deleteOlderThan(cutoff, 2)).toBe(1);
        expect(await store.events.deleteOlderThan(cutoff, 2)).toBe(0);
        expect((await store.events.feed(tenant.id, { after: 0, limit: 10 })).map((e) => e.id)).toEqual([fresh.id]);
        // The key went with its event: the same key now stores a new event.
        const again = newEvent(service.id, { idempotencyKey: "old-0" });
        expect(await store.events.insertBatch([again])).toEqual([{ kind: "inserted" }]);
      });
    });
  });
}

/**
 * The rejection of `promise`, or null if it resolved. Used instead of `expect(p).rejects`, which
 * in bun test misses a promise settled from a Worker's message handler (oven-sh/bun#37189):
 * the SQLite file store settles insertBatch that way, and plain awaiting sees it fine.
 */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}
