/**
 * The audit half of the Store port's contract, run against every adapter: each mutation writes
 * the audit record it is handed in its own transaction — a change that does not happen writes
 * none, and a record that cannot be written undoes the change (docs/api.md, "Audit log").
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { AuditRecord } from "../../src/domain/audit.ts";
import type { Store } from "../../src/domain/ports/store.ts";
import {
  auditOf,
  creationAudit,
  NOW,
  newId,
  type StoreWorld,
  serviceRecord,
  serviceUpdateAudit,
  tenantRecord,
  tenantUpdateAudit,
  tokenRecord,
} from "./store-contract.ts";

const DAY = 86_400_000;

export function runAuditContract(name: string, makeStore: () => Promise<StoreWorld>): void {
  describe(`${name} store audit contract`, () => {
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

    async function seed() {
      const tenant = tenantRecord();
      const owner = tokenRecord(tenant.id, { role: "owner", scope: "read_write" });
      const created = creationAudit(tenant, owner);
      await store.createTenant(tenant, owner, created);
      return { tenant, owner, created };
    }

    const all = (tenantId: string) => store.audit.list(tenantId, { limit: 100 });
    const newestFirst = (records: AuditRecord[]) => [...records].sort((a, b) => (a.id < b.id ? 1 : -1));

    test("every mutation writes exactly the record it is handed, read back unchanged, newest first", async () => {
      const { tenant, owner, created } = await seed();
      const written: AuditRecord[] = [...created];

      const token = tokenRecord(tenant.id);
      const minted = auditOf(tenant.id, "api_token.create", "api_token", token.id);
      expect(await store.tokens.insert(token, minted)).toBe("ok");
      written.push(minted);

      const revoked = auditOf(tenant.id, "api_token.revoke", "api_token", token.id);
      expect((await store.tokens.revoke(tenant.id, token.id, NOW, revoked)).kind).toBe("revoked");
      written.push(revoked);

      const service = serviceRecord(tenant.id);
      const registered = auditOf(tenant.id, "service.create", "service", service.id);
      expect(await store.services.insert(service, registered)).toBe("ok");
      written.push(registered);

      // The update's record is made from the row before and after, inside the transaction.
      let seen: AuditRecord | null = null;
      const paused = serviceUpdateAudit(tenant.id, service.id);
      await store.services.update(tenant.id, service.id, { isMonitored: false }, NOW + 1, (before, after) => {
        seen = paused(before, after);
        return seen;
      });
      expect(seen).not.toBeNull();
      expect((seen as AuditRecord | null)?.changes).toEqual({ is_monitored: { from: true, to: false } });
      written.push(seen as unknown as AuditRecord);

      const rotated = auditOf(tenant.id, "service.secret_rotate", "service", service.id);
      const rotation = { ciphertext: "new", prefix: "whsec_new0", rotatedAt: NOW + 2, previousExpiresAt: NOW + 3 };
      expect(await store.services.rotateSecret(tenant.id, service.id, rotation, rotated)).not.toBeNull();
      written.push(rotated);

      let renamed: AuditRecord | null = null;
      const rename = tenantUpdateAudit(tenant.id);
      await store.tenants.rename(tenant.id, "Renamed", (before, after) => {
        renamed = rename(before, after);
        return renamed;
      });
      expect((renamed as AuditRecord | null)?.changes).toEqual({ name: { from: "Acme", to: "Renamed" } });
      written.push(renamed as unknown as AuditRecord);

      const deleted = auditOf(tenant.id, "service.delete", "service", service.id);
      expect(await store.services.delete(tenant.id, service.id, deleted)).toBe(true);
      written.push(deleted);

      expect(await all(tenant.id)).toEqual(newestFirst(written));
      expect(owner.id).toBe(created[1]?.target.id as string);
    });

    test("a change that does not happen writes no record", async () => {
      const { tenant, owner, created } = await seed();
      const other = await seed();
      const service = serviceRecord(tenant.id, { serviceName: "billing" });
      await store.services.insert(service, auditOf(tenant.id, "service.create", "service", service.id));
      const token = tokenRecord(tenant.id);
      await store.tokens.insert(token, auditOf(tenant.id, "api_token.create", "api_token", token.id));
      await store.tokens.revoke(
        tenant.id,
        token.id,
        NOW,
        auditOf(tenant.id, "api_token.revoke", "api_token", token.id),
      );
      const before = await all(tenant.id);
      expect(before).toHaveLength(created.length + 3);

      const record = (action: AuditRecord["action"], id: string) =>
        auditOf(tenant.id, action, action.startsWith("api_token") ? "api_token" : "service", id);
      // prefix taken, name taken, already revoked, last owner, unknown targets, same values.
      const clash = tokenRecord(tenant.id, { prefix: token.prefix });
      expect(await store.tokens.insert(clash, record("api_token.create", clash.id))).toBe("prefix_taken");
      const twin = serviceRecord(tenant.id, { serviceName: "billing" });
      expect(await store.services.insert(twin, record("service.create", twin.id))).toBe("name_taken");
      expect((await store.tokens.revoke(tenant.id, token.id, NOW + 1, record("api_token.revoke", token.id))).kind).toBe(
        "already_revoked",
      );
      expect((await store.tokens.revoke(tenant.id, owner.id, NOW, record("api_token.revoke", owner.id))).kind).toBe(
        "last_owner",
      );
      expect((await store.tokens.revoke(tenant.id, newId(), NOW, record("api_token.revoke", newId()))).kind).toBe(
        "not_found",
      );
      expect(
        await store.tokens.revoke(tenant.id, other.owner.id, NOW, record("api_token.revoke", other.owner.id)),
      ).toEqual({ kind: "not_found" });
      const ghost = newId();
      expect(
        await store.services.update(
          tenant.id,
          ghost,
          { isMonitored: false },
          NOW,
          serviceUpdateAudit(tenant.id, ghost),
        ),
      ).toBeNull();
      const rotation = { ciphertext: "x", prefix: "whsec_x000", rotatedAt: NOW, previousExpiresAt: NOW };
      expect(
        await store.services.rotateSecret(tenant.id, ghost, rotation, record("service.secret_rotate", ghost)),
      ).toBeNull();
      expect(await store.services.delete(tenant.id, ghost, record("service.delete", ghost))).toBe(false);
      expect(await store.tenants.rename(crypto.randomUUID(), "x", tenantUpdateAudit(tenant.id))).toBeNull();
      // An update that changes no audited field: the record function says null, nothing is written.
      expect(
        await store.services.update(
          tenant.id,
          service.id,
          { isMonitored: true },
          NOW,
          serviceUpdateAudit(tenant.id, service.id),
        ),
      ).not.toBeNull();
      expect(await store.tenants.rename(tenant.id, tenant.name, tenantUpdateAudit(tenant.id))).not.toBeNull();

      expect(await all(tenant.id)).toEqual(before);
    });

    test("a change whose audit record cannot be written is rolled back whole: no change without its record", async () => {
      const { tenant, created } = await seed();
      const service = serviceRecord(tenant.id);
      await store.services.insert(service, auditOf(tenant.id, "service.create", "service", service.id));
      const victim = tokenRecord(tenant.id);
      await store.tokens.insert(victim, auditOf(tenant.id, "api_token.create", "api_token", victim.id));
      const before = await all(tenant.id);
      // A record whose id is already taken fails its insert after the change's own write.
      const taken = (created[0] as AuditRecord).id;
      const clashing = (record: AuditRecord): AuditRecord => ({ ...record, id: taken });

      const token = tokenRecord(tenant.id);
      await expect(
        store.tokens.insert(token, clashing(auditOf(tenant.id, "api_token.create", "api_token", token.id))),
      ).rejects.toThrow();
      expect(await store.tokens.get(tenant.id, token.id)).toBeNull();

      await expect(
        store.tokens.revoke(
          tenant.id,
          victim.id,
          NOW,
          clashing(auditOf(tenant.id, "api_token.revoke", "api_token", victim.id)),
        ),
      ).rejects.toThrow();
      expect((await store.tokens.get(tenant.id, victim.id))?.revokedAt).toBeNull();

      const fresh = serviceRecord(tenant.id);
      await expect(
        store.services.insert(fresh, clashing(auditOf(tenant.id, "service.create", "service", fresh.id))),
      ).rejects.toThrow();
      expect(await store.services.get(tenant.id, fresh.id)).toBeNull();

      const update = serviceUpdateAudit(tenant.id, service.id);
      await expect(
        store.services.update(tenant.id, service.id, { isMonitored: false }, NOW + 5, (b, a) => {
          const record = update(b, a);
          return record && clashing(record);
        }),
      ).rejects.toThrow();
      const rotation = { ciphertext: "new", prefix: "whsec_new0", rotatedAt: NOW + 2, previousExpiresAt: NOW + 3 };
      await expect(
        store.services.rotateSecret(
          tenant.id,
          service.id,
          rotation,
          clashing(auditOf(tenant.id, "service.secret_rotate", "service", service.id)),
        ),
      ).rejects.toThrow();
      await expect(
        store.services.delete(
          tenant.id,
          service.id,
          clashing(auditOf(tenant.id, "service.delete", "service", service.id)),
        ),
      ).rejects.toThrow();
      expect(await store.services.get(tenant.id, service.id)).toEqual(service);

      const rename = tenantUpdateAudit(tenant.id);
      await expect(
        store.tenants.rename(tenant.id, "Renamed", (b, a) => {
          const record = rename(b, a);
          return record && clashing(record);
        }),
      ).rejects.toThrow();
      expect(await store.tenants.get(tenant.id)).toEqual(tenant);

      const newcomer = tenantRecord();
      const first = tokenRecord(newcomer.id, { role: "owner" });
      const [tenantCreated, tokenCreated] = creationAudit(newcomer, first) as [AuditRecord, AuditRecord];
      await expect(store.createTenant(newcomer, first, [tenantCreated, clashing(tokenCreated)])).rejects.toThrow();
      expect(await store.tenants.get(newcomer.id)).toBeNull();
      expect(await store.tokens.findByDigest(first.digest)).toBeNull();

      expect(await all(tenant.id)).toEqual(before);
    });

    test("list is tenant-scoped, filters by action and by target, and pages newest first", async () => {
      const { tenant, owner, created } = await seed();
      const other = await seed();
      const tokens = [];
      for (let i = 0; i < 4; i++) {
        const token = tokenRecord(tenant.id);
        await store.tokens.insert(token, auditOf(tenant.id, "api_token.create", "api_token", token.id));
        tokens.push(token);
      }
      const target = tokens[1] as (typeof tokens)[number];
      await store.tokens.revoke(
        tenant.id,
        target.id,
        NOW,
        auditOf(tenant.id, "api_token.revoke", "api_token", target.id),
      );

      const everything = await all(tenant.id);
      expect(everything).toHaveLength(created.length + 5);
      expect(everything.every((r) => r.tenantId === tenant.id)).toBe(true);
      expect((await all(other.tenant.id)).map((r) => r.id)).toEqual(newestFirst(other.created).map((r) => r.id));

      const creations = await store.audit.list(tenant.id, { limit: 100, action: "api_token.create" });
      expect(creations.map((r) => r.target.id)).toEqual([...tokens.map((t) => t.id)].reverse().concat(owner.id));
      const aboutTarget = await store.audit.list(tenant.id, {
        limit: 100,
        target: { type: "api_token", id: target.id },
      });
      expect(aboutTarget.map((r) => r.action)).toEqual(["api_token.revoke", "api_token.create"]);
      const both = await store.audit.list(tenant.id, {
        limit: 100,
        action: "api_token.revoke",
        target: { type: "api_token", id: target.id },
      });
      expect(both).toHaveLength(1);
      // Another tenant's target id filters to nothing.
      expect(
        await store.audit.list(tenant.id, { limit: 100, target: { type: "api_token", id: other.owner.id } }),
      ).toEqual([]);

      const pages: string[][] = [];
      let before: string | undefined;
      for (;;) {
        const page = await store.audit.list(tenant.id, { limit: 3, ...(before ? { before } : {}) });
        if (page.length === 0) break;
        pages.push(page.map((r) => r.id));
        before = page.at(-1)?.id;
      }
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(pages.flat()).toEqual(everything.map((r) => r.id));
    });

    test("deleteOlderThan deletes at most a batch of the oldest events before the cutoff and keeps the rest", async () => {
      const { tenant, created } = await seed();
      const aged: AuditRecord[] = [];
      for (let age = 5; age >= 1; age--) {
        const token = tokenRecord(tenant.id);
        const record = {
          ...auditOf(tenant.id, "api_token.create", "api_token", token.id),
          occurredAt: NOW - age * DAY,
        };
        await store.tokens.insert(token, record);
        aged.push(record);
      }
      const cutoff = NOW - 2.5 * DAY;
      expect(await store.audit.deleteOlderThan(cutoff, 2)).toBe(2);
      expect(await store.audit.deleteOlderThan(cutoff, 2)).toBe(1);
      expect(await store.audit.deleteOlderThan(cutoff, 2)).toBe(0);
      const kept = await all(tenant.id);
      expect(kept.map((r) => r.id)).toEqual(newestFirst([...created, ...aged.slice(3)]).map((r) => r.id));
      expect(kept.every((r) => r.occurredAt >= cutoff)).toBe(true);
    });
  });
}
