/**
 * §17's rules as ingest applies them: alert events handed to `events.insertBatch`, which
 * decides each one's effect in the batch's own transaction and writes the event with its
 * `incident_id` (docs/incidents.md, "Wiring as built"). Run by runIncidentContract on every
 * adapter, with a second store racing the first where the database allows one.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Alert } from "../../src/domain/incident-types.ts";
import type { InsertEventResult, NewEvent, Store } from "../../src/domain/ports/store.ts";
import type { ServiceRecord } from "../../src/domain/types.ts";
import type { IncidentWorld } from "./incidents-contract.ts";
import { auditOf, creationAudit, NOW, newId, serviceRecord, tenantRecord, tokenRecord } from "./store-contract.ts";

const trigger = (dedupKey = "disk/db-1", severity: Alert["severity"] = "warning"): Alert => ({
  action: "trigger",
  dedupKey,
  summary: "disk full",
  source: "db-1",
  severity,
});

function alertEvent(service: ServiceRecord, alert: Alert | null, at: number, idempotencyKey: string | null = null) {
  const body = alert ? { event_action: alert.action, dedup_key: alert.dedupKey } : { plain: true };
  return {
    id: newId(),
    tenantId: service.tenantId,
    serviceId: service.id,
    receivedAt: at,
    idempotencyKey,
    payload: new TextEncoder().encode(JSON.stringify(body)),
    alert,
  } satisfies NewEvent;
}

const incidentOf = (result: InsertEventResult | undefined) =>
  result?.kind === "inserted" ? (result.incident ?? null) : undefined;

export function runIncidentIngestContract(name: string, makeWorld: () => Promise<IncidentWorld>): void {
  describe(`${name} store incidents at ingest`, () => {
    let world: IncidentWorld;
    let store: Store;

    beforeEach(async () => {
      world = await makeWorld();
      store = world.store;
      await store.migrate();
    });

    afterEach(async () => {
      await world.cleanup();
    });

    async function seed(): Promise<{ tenantId: string; service: ServiceRecord }> {
      const tenant = tenantRecord();
      const owner = tokenRecord(tenant.id, { role: "owner" });
      await store.createTenant(tenant, owner, creationAudit(tenant, owner));
      const service = serviceRecord(tenant.id);
      await store.services.insert(service, auditOf(tenant.id, "service.create", "service", service.id));
      return { tenantId: tenant.id, service };
    }

    test("a batch's alert events change incidents in its commit, each event pointing at its incident; duplicates change nothing", async () => {
      const { tenantId, service } = await seed();
      const first = alertEvent(service, trigger(), NOW, "once");
      const plain = alertEvent(service, null, NOW + 1);
      const repeatInBatch = alertEvent(service, trigger("disk/db-1", "critical"), NOW + 2, "once");
      const nothingOpen = alertEvent(service, { action: "resolve", dedupKey: "elsewhere" }, NOW + 3);
      const results = await store.events.insertBatch([first, plain, repeatInBatch, nothingOpen]);
      const opened = incidentOf(results[0]);
      expect(opened).toMatchObject({ dedupKey: "disk/db-1", change: "opened" });
      expect(results[1]).toEqual({ kind: "inserted" });
      expect(results[2]).toEqual({ kind: "duplicate", id: first.id, receivedAt: NOW });
      expect(incidentOf(results[3])).toEqual({ dedupKey: "elsewhere", incidentId: null, change: "none" });
      const id = opened?.incidentId as string;

      // A stored key's repeat is a duplicate too; the key's next trigger joins and raises.
      const again = alertEvent(service, trigger("disk/db-1", "critical"), NOW + 4, "once");
      const raise = alertEvent(service, trigger("disk/db-1", "critical"), NOW + 5);
      const [repeat, raised] = await store.events.insertBatch([again, raise]);
      expect(repeat).toEqual({ kind: "duplicate", id: first.id, receivedAt: NOW });
      expect(incidentOf(raised)).toEqual({ dedupKey: "disk/db-1", incidentId: id, change: "severity_raised" });

      expect(await store.incidents.get(tenantId, id)).toMatchObject({
        status: "triggered",
        severity: "critical",
        alertCount: 2,
        lastEventAt: NOW + 5,
      });
      const timeline = await store.incidents.events(tenantId, id, { limit: 10 });
      expect(timeline.map((e) => [e.id, e.incidentId])).toEqual([
        [first.id, id],
        [raise.id, id],
      ]);
      expect((await store.events.get(tenantId, plain.id))?.incidentId).toBeNull();
      expect((await store.events.get(tenantId, nothingOpen.id))?.incidentId).toBeNull();

      // Events and changes share the tenant's one order: every position once.
      const feed = await store.events.feed(tenantId, { after: 0, limit: 100 });
      const changes = await store.incidents.changes(tenantId, { after: 0, limit: 100 });
      expect(changes.map((c) => c.change)).toEqual(["opened", "severity_raised"]);
      const positions = [...feed.map((e) => e.position), ...changes.map((c) => c.position)];
      expect(new Set(positions).size).toBe(positions.length);
    });

    test("a batch that resolves an open incident and triggers its key again opens the next one", async () => {
      const { tenantId, service } = await seed();
      const [first] = await store.events.insertBatch([alertEvent(service, trigger(), NOW)]);
      const before = incidentOf(first)?.incidentId as string;
      const results = await store.events.insertBatch([
        alertEvent(service, trigger(), NOW + 1),
        alertEvent(service, { action: "resolve", dedupKey: "disk/db-1" }, NOW + 2),
        alertEvent(service, trigger(), NOW + 3),
        alertEvent(service, { action: "acknowledge", dedupKey: "disk/db-1" }, NOW + 4),
      ]);
      expect(results.map((r) => incidentOf(r)?.change)).toEqual(["joined", "resolved", "opened", "acknowledged"]);
      const after = incidentOf(results[2])?.incidentId as string;
      expect(after).not.toBe(before);
      expect(await store.incidents.get(tenantId, before)).toMatchObject({ status: "resolved", alertCount: 3 });
      expect(await store.incidents.get(tenantId, after)).toMatchObject({ status: "acknowledged", alertCount: 2 });
      const open = await store.incidents.list(tenantId, { limit: 10, status: "open" });
      expect(open.map((i) => i.id)).toEqual([after]);
    });

    test("concurrent ingest batches on one key, from two stores when the database allows, make one incident counting every event", async () => {
      const { tenantId, service } = await seed();
      const stores = world.another ? [store, world.another()] : [store];
      try {
        // 120 triggers in batches of 1 to 4, each store sending its share at once.
        const batches = Array.from({ length: 48 }, (_, b) =>
          Array.from({ length: 1 + (b % 4) }, (_, i) => alertEvent(service, trigger(), NOW + b * 10 + i)),
        );
        const results = (
          await Promise.all(batches.map((batch, b) => (stores[b % stores.length] as Store).events.insertBatch(batch)))
        ).flat();
        const outcomes = results.map(incidentOf);
        expect(new Set(outcomes.map((o) => o?.incidentId)).size).toBe(1);
        expect(outcomes.filter((o) => o?.change === "opened")).toHaveLength(1);
        const [incident] = await store.incidents.list(tenantId, { limit: 10 });
        expect(incident?.alertCount).toBe(results.length);
        const timeline = await store.incidents.events(tenantId, incident?.id as string, { limit: 1000 });
        expect(timeline).toHaveLength(results.length);
      } finally {
        for (const s of stores.slice(1)) await s.close();
      }
    });
  });
}
