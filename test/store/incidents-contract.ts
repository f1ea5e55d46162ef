/**
 * The incidents half of the Store port's contract (SPEC §17, docs/incidents.md), run against
 * every adapter: the rules as the store applies them, the one-open-incident-per-key index,
 * the change stream's positions, manual changes with their audit records, auto-resolve,
 * service deletion and retention — and, where the database allows a second store, the races
 * of two instances.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Alert, AlertEventInput, IncidentRecord } from "../../src/domain/incident-types.ts";
import type { Store } from "../../src/domain/ports/store.ts";
import type { ServiceRecord } from "../../src/domain/types.ts";
import { runIncidentIngestContract } from "./incidents-ingest-contract.ts";
import {
  auditOf,
  creationAudit,
  NOW,
  newId,
  type StoreWorld,
  serviceRecord,
  serviceUpdateAudit,
  tenantRecord,
  tokenRecord,
} from "./store-contract.ts";

export interface IncidentWorld extends StoreWorld {
  /** Runs one SQL statement on the world's database, bypassing the store. */
  exec(statement: string): Promise<void>;
}

const SECOND = 1000;
const DAY = 86_400_000;

export function runIncidentContract(name: string, makeWorld: () => Promise<IncidentWorld>): void {
  describe(`${name} store incidents contract`, () => {
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

    async function addService(tenantId: string, overrides: Partial<ServiceRecord> = {}): Promise<ServiceRecord> {
      const service = serviceRecord(tenantId, overrides);
      await store.services.insert(service, auditOf(tenantId, "service.create", "service", service.id));
      return service;
    }

    /** Stores the alert event (as ingest does first) and returns it as the store applies it. */
    async function stored(
      service: ServiceRecord,
      alert: Partial<Alert> & Pick<Alert, "action">,
      at = NOW,
      on: Store = store,
    ): Promise<AlertEventInput> {
      const id = newId();
      const full: Alert = {
        dedupKey: "disk/db-1",
        ...(alert.action === "trigger" && { summary: "disk full", source: "db-1", severity: "warning" as const }),
        ...alert,
      };
      const body = { event_action: full.action, dedup_key: full.dedupKey };
      await on.events.insertBatch([
        {
          id,
          tenantId: service.tenantId,
          serviceId: service.id,
          receivedAt: at,
          idempotencyKey: null,
          payload: new TextEncoder().encode(JSON.stringify(body)),
        },
      ]);
      return { eventId: id, tenantId: service.tenantId, serviceId: service.id, receivedAt: at, alert: full };
    }

    const openOf = (tenantId: string) => store.incidents.list(tenantId, { limit: 100, status: "open" });

    test("a trigger opens an incident that get, list and its timeline return, with the 202's extras", async () => {
      const { tenantId, service } = await seed();
      const event = await stored(service, { action: "trigger", summary: "CPU high", severity: "error" });
      const [outcome] = await store.incidents.applyAlerts([event]);
      expect(outcome).toMatchObject({ dedupKey: "disk/db-1", change: "opened" });
      const id = outcome?.incidentId as string;
      const expected: IncidentRecord = {
        id,
        tenantId,
        serviceId: service.id,
        dedupKey: "disk/db-1",
        status: "triggered",
        severity: "error",
        title: "CPU high",
        source: "db-1",
        alertCount: 1,
        createdAt: NOW,
        lastEventAt: NOW,
        acknowledgedAt: null,
        resolvedAt: null,
        acknowledgedBy: null,
        resolvedBy: null,
      };
      expect(await store.incidents.get(tenantId, id)).toEqual(expected);
      expect(await store.incidents.list(tenantId, { limit: 10 })).toEqual([expected]);
      expect((await store.incidents.events(tenantId, id, { limit: 10 })).map((e) => e.id)).toEqual([event.eventId]);
      // Another tenant sees none of it.
      const other = await seed();
      expect(await store.incidents.get(other.tenantId, id)).toBeNull();
      expect(await store.incidents.events(other.tenantId, id, { limit: 10 })).toEqual([]);
    });

    test("triggers join, acknowledge and resolve close; the next trigger opens a new incident", async () => {
      const { tenantId, service } = await seed();
      const first = await stored(service, { action: "trigger" }, NOW);
      const [opened] = await store.incidents.applyAlerts([first]);
      const id = opened?.incidentId as string;
      const joins = [
        await stored(service, { action: "trigger", severity: "info" }, NOW + 1),
        await stored(service, { action: "trigger", severity: "critical" }, NOW + 2),
        await stored(service, { action: "acknowledge" }, NOW + 3),
        await stored(service, { action: "trigger" }, NOW + 4),
      ];
      expect((await store.incidents.applyAlerts(joins)).map((o) => [o.incidentId, o.change])).toEqual([
        [id, "joined"],
        [id, "severity_raised"],
        [id, "acknowledged"],
        [id, "joined"],
      ]);
      expect(await store.incidents.get(tenantId, id)).toMatchObject({
        status: "acknowledged",
        severity: "critical",
        alertCount: 5,
        lastEventAt: NOW + 4,
        acknowledgedAt: NOW + 3,
        acknowledgedBy: { type: "event", id: joins[2]?.eventId },
      });
      const resolve = await stored(service, { action: "resolve" }, NOW + 5);
      const [resolved] = await store.incidents.applyAlerts([resolve]);
      expect(resolved).toMatchObject({ incidentId: id, change: "resolved" });
      expect(await openOf(tenantId)).toEqual([]);

      const [nothing] = await store.incidents.applyAlerts([await stored(service, { action: "resolve" }, NOW + 6)]);
      expect(nothing).toEqual({ dedupKey: "disk/db-1", incidentId: null, change: "none" });
      const [again] = await store.incidents.applyAlerts([await stored(service, { action: "trigger" }, NOW + 7)]);
      expect(again?.change).toBe("opened");
      expect(again?.incidentId).not.toBe(id);

      // The timeline: the alert events that touched it, oldest first, paged by cursor.
      const timeline = [first, ...joins, resolve].map((e) => e.eventId);
      const page1 = await store.incidents.events(tenantId, id, { limit: 4 });
      const page2 = await store.incidents.events(tenantId, id, { limit: 4, after: page1[3]?.id as string });
      expect([...page1, ...page2].map((e) => e.id)).toEqual(timeline);
    });

    test("one open incident per (service, dedup_key) is enforced by the store itself", async () => {
      const { service } = await seed();
      const [opened] = await store.incidents.applyAlerts([await stored(service, { action: "trigger" })]);
      const columns =
        "id, tenant_id, service_id, dedup_key, status, severity, title, source, alert_count, created_at, last_event_at";
      const row = (id: string, status: string) =>
        `insert into incidents (${columns}) values ('${id}', '${service.tenantId}', '${service.id}', 'disk/db-1', '${status}', 'info', 't', 's', 1, 1, 1)`;
      const refused = await world.exec(row(newId(), "acknowledged")).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(Error);
      // Resolved ones are not open: any number of them may share the key.
      await world.exec(row(newId(), "resolved"));
      await world.exec(row(newId(), "resolved"));
      expect(opened?.change).toBe("opened");
    });

    test("list pages newest first with status, service and severity filters", async () => {
      const { tenantId, service } = await seed();
      const other = await addService(tenantId);
      const outcomes = [];
      for (let i = 0; i < 5; i++) {
        const on = i % 2 === 0 ? service : other;
        const severity = i === 4 ? ("critical" as const) : ("warning" as const);
        outcomes.push(
          ...(await store.incidents.applyAlerts([
            await stored(on, { action: "trigger", dedupKey: `k${i}`, severity }, NOW + i),
          ])),
        );
      }
      const ids = outcomes.map((o) => o.incidentId) as string[];
      await store.incidents.applyAlerts([await stored(service, { action: "resolve", dedupKey: "k0" }, NOW + 9)]);
      await store.incidents.applyAlerts([await stored(other, { action: "acknowledge", dedupKey: "k1" }, NOW + 9)]);
      const listed = async (query: Parameters<Store["incidents"]["list"]>[1]): Promise<Array<string | undefined>> =>
        (await store.incidents.list(tenantId, query)).map((i) => i.id);
      const newest = [...ids].reverse();
      expect(await listed({ limit: 10 })).toEqual(newest);
      const firstPage = await listed({ limit: 2 });
      expect(firstPage).toEqual(newest.slice(0, 2));
      expect(await listed({ limit: 10, before: firstPage[1] as string })).toEqual(newest.slice(2));
      expect(await listed({ limit: 10, status: "open" })).toEqual([ids[4], ids[3], ids[2], ids[1]]);
      expect(await listed({ limit: 10, status: "triggered" })).toEqual([ids[4], ids[3], ids[2]]);
      expect(await listed({ limit: 10, status: "acknowledged" })).toEqual([ids[1]]);
      expect(await listed({ limit: 10, status: "resolved" })).toEqual([ids[0]]);
      expect(await listed({ limit: 10, serviceId: other.id })).toEqual([ids[3], ids[1]]);
      expect(await listed({ limit: 10, severity: "critical" })).toEqual([ids[4]]);
      expect(await listed({ limit: 10, status: "open", serviceId: service.id, severity: "warning" })).toEqual([ids[2]]);
      expect(await store.incidents.countOpen()).toEqual({ critical: 1, error: 0, warning: 3, info: 0 });
    });

    test("every change is in the tenant's change stream once, in commit order, with the incident right after it", async () => {
      const { tenantId, service } = await seed();
      const other = await addService(tenantId);
      expect(await store.incidents.changesHead(tenantId)).toBe(0);
      const [opened] = await store.incidents.applyAlerts([
        await stored(service, { action: "trigger" }, NOW),
        await stored(service, { action: "trigger" }, NOW + 1),
        await stored(service, { action: "trigger", severity: "error" }, NOW + 2),
      ]);
      const id = opened?.incidentId as string;
      await store.incidents.applyAlerts([await stored(other, { action: "trigger", dedupKey: "other" }, NOW + 3)]);
      const ack = await store.incidents.acknowledge(
        tenantId,
        id,
        { type: "api_token", id: newId() },
        NOW + 4,
        auditOf(tenantId, "incident.acknowledge", "incident", id),
      );
      expect(ack.kind).toBe("changed");
      await store.incidents.applyAlerts([await stored(service, { action: "resolve" }, NOW + 5)]);

      const changes = await store.incidents.changes(tenantId, { after: 0, limit: 100 });
      expect(changes.map((c) => [c.change, c.incident.status, c.incident.severity, c.incident.alertCount])).toEqual([
        ["opened", "triggered", "warning", 1],
        ["severity_raised", "triggered", "error", 3],
        ["opened", "triggered", "warning", 1],
        ["acknowledged", "acknowledged", "error", 3],
        ["resolved", "resolved", "error", 4],
      ]);
      const positions = changes.map((c) => c.position);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      expect(new Set(positions).size).toBe(positions.length);
      expect(await store.incidents.changesHead(tenantId)).toBe(positions[4] as number);
      // Resuming from a cursor gives exactly what follows; the service filter keeps tenant positions.
      const rest = await store.incidents.changes(tenantId, { after: positions[1] as number, limit: 100 });
      expect(rest.map((c) => c.position)).toEqual(positions.slice(2));
      const ofOther = await store.incidents.changes(tenantId, { after: 0, limit: 100, serviceId: other.id });
      expect(ofOther.map((c) => c.position)).toEqual(positions.slice(2, 3));
      // Another tenant's stream is empty.
      expect(await store.incidents.changes((await seed()).tenantId, { after: 0, limit: 100 })).toEqual([]);
    });

    test("acknowledge and resolve by hand: audited when they change, 200 unchanged otherwise, 409 on a resolved ack", async () => {
      const { tenantId, service } = await seed();
      const [opened] = await store.incidents.applyAlerts([await stored(service, { action: "trigger" })]);
      const id = opened?.incidentId as string;
      const token = { type: "api_token" as const, id: newId() };
      const audits = async () =>
        (await store.audit.list(tenantId, { limit: 100 })).filter((a) => a.target.type === "incident");

      const ackAudit = auditOf(tenantId, "incident.acknowledge", "incident", id);
      const acked = await store.incidents.acknowledge(tenantId, id, token, NOW + 1, ackAudit);
      expect(acked).toMatchObject({
        kind: "changed",
        incident: { status: "acknowledged", acknowledgedBy: token, acknowledgedAt: NOW + 1 },
      });
      const again = await store.incidents.acknowledge(
        tenantId,
        id,
        token,
        NOW + 2,
        auditOf(tenantId, "incident.acknowledge", "incident", id),
      );
      expect(again.kind).toBe("unchanged");
      expect(await audits()).toEqual([ackAudit]);

      const resolveAudit = auditOf(tenantId, "incident.resolve", "incident", id);
      const resolved = await store.incidents.resolve(tenantId, id, token, NOW + 3, resolveAudit);
      expect(resolved).toMatchObject({ kind: "changed", incident: { status: "resolved", resolvedBy: token } });
      expect((await store.incidents.resolve(tenantId, id, token, NOW + 4, resolveAudit)).kind).toBe("unchanged");
      expect(
        await store.incidents.acknowledge(
          tenantId,
          id,
          token,
          NOW + 5,
          auditOf(tenantId, "incident.acknowledge", "incident", id),
        ),
      ).toEqual({ kind: "incident_resolved" });
      expect((await audits()).map((a) => a.action)).toEqual(["incident.resolve", "incident.acknowledge"]);

      const stranger = await seed();
      expect(
        await store.incidents.resolve(
          stranger.tenantId,
          id,
          token,
          NOW,
          auditOf(stranger.tenantId, "incident.resolve", "incident", id),
        ),
      ).toEqual({ kind: "not_found" });
    });

    test("auto-resolve resolves open incidents past their service's deadline once; paused services keep theirs", async () => {
      const { tenantId, service } = await seed();
      const paused = await addService(tenantId);
      const never = await addService(tenantId);
      for (const s of [service, paused]) {
        await store.services.update(
          tenantId,
          s.id,
          { incidentAutoResolveSeconds: 60 },
          NOW,
          serviceUpdateAudit(tenantId, s.id),
        );
      }
      const [due] = await store.incidents.applyAlerts([
        await stored(service, { action: "trigger", dedupKey: "a" }, NOW),
      ]);
      const [fresh] = await store.incidents.applyAlerts([
        await stored(service, { action: "trigger", dedupKey: "b" }, NOW + 30 * SECOND),
      ]);
      const [pausedOne] = await store.incidents.applyAlerts([await stored(paused, { action: "trigger" }, NOW)]);
      const [neverOne] = await store.incidents.applyAlerts([await stored(never, { action: "trigger" }, NOW)]);
      await store.services.update(
        tenantId,
        paused.id,
        { isMonitored: false },
        NOW,
        serviceUpdateAudit(tenantId, paused.id),
      );

      expect(await store.incidents.autoResolveDue(NOW + 59 * SECOND, 100)).toEqual([]);
      const resolved = await store.incidents.autoResolveDue(NOW + 60 * SECOND, 100);
      expect(resolved.map((i) => i.id)).toEqual([due?.incidentId as string]);
      expect(resolved[0]).toMatchObject({
        status: "resolved",
        resolvedAt: NOW + 60 * SECOND,
        resolvedBy: { type: "auto" },
      });
      expect(await store.incidents.autoResolveDue(NOW + 60 * SECOND, 100)).toEqual([]);
      expect((await openOf(tenantId)).map((i) => i.id).sort()).toEqual(
        [fresh?.incidentId, pausedOne?.incidentId, neverOne?.incidentId].sort() as string[],
      );
      const told = await store.incidents.changes(tenantId, { after: 0, limit: 100 });
      expect(told.filter((c) => c.change === "resolved").map((c) => c.incident.id)).toEqual([
        due?.incidentId as string,
      ]);
    });

    test("deleting a service deletes its incidents and their changes; other services keep theirs", async () => {
      const { tenantId, service } = await seed();
      const other = await addService(tenantId);
      const [gone] = await store.incidents.applyAlerts([await stored(service, { action: "trigger" })]);
      const [kept] = await store.incidents.applyAlerts([await stored(other, { action: "trigger" })]);
      expect(
        await store.services.delete(tenantId, service.id, auditOf(tenantId, "service.delete", "service", service.id)),
      ).toBe(true);
      expect(await store.incidents.get(tenantId, gone?.incidentId as string)).toBeNull();
      expect((await store.incidents.list(tenantId, { limit: 10 })).map((i) => i.id)).toEqual([
        kept?.incidentId as string,
      ]);
      const changes = await store.incidents.changes(tenantId, { after: 0, limit: 10 });
      expect(changes.map((c) => c.incident.id)).toEqual([kept?.incidentId as string]);
    });

    test("incident retention deletes resolved incidents resolved before the cutoff, in batches; open ones stay", async () => {
      const { tenantId, service } = await seed();
      const old = NOW - 10 * DAY;
      const resolvedIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const [o] = await store.incidents.applyAlerts([
          await stored(service, { action: "trigger", dedupKey: `r${i}` }, old),
        ]);
        await store.incidents.applyAlerts([await stored(service, { action: "resolve", dedupKey: `r${i}` }, old + i)]);
        resolvedIds.push(o?.incidentId as string);
      }
      const [recent] = await store.incidents.applyAlerts([
        await stored(service, { action: "trigger", dedupKey: "new" }, NOW),
      ]);
      await store.incidents.applyAlerts([await stored(service, { action: "resolve", dedupKey: "new" }, NOW)]);
      const [open] = await store.incidents.applyAlerts([
        await stored(service, { action: "trigger", dedupKey: "open" }, old),
      ]);
      const cutoff = NOW - DAY;
      expect(await store.incidents.deleteResolvedBefore(cutoff, 2)).toBe(2);
      expect(await store.incidents.deleteResolvedBefore(cutoff, 2)).toBe(1);
      expect(await store.incidents.deleteResolvedBefore(cutoff, 2)).toBe(0);
      const left = (await store.incidents.list(tenantId, { limit: 10 })).map((i) => i.id).sort();
      expect(left).toEqual([recent?.incidentId, open?.incidentId].sort() as string[]);
    });

    test("concurrent triggers on one key, from two stores when the database allows, make one incident with alert_count N", async () => {
      const { tenantId, service } = await seed();
      const stores = world.another ? [store, world.another()] : [store];
      try {
        const N = 200;
        const events = await Promise.all(
          Array.from({ length: N }, (_, i) =>
            stored(service, { action: "trigger" }, NOW + i, stores[i % stores.length]),
          ),
        );
        const outcomes = (
          await Promise.all(events.map((e, i) => (stores[i % stores.length] as Store).incidents.applyAlerts([e])))
        ).flat();
        const incidentIds = new Set(outcomes.map((o) => o.incidentId));
        expect(incidentIds.size).toBe(1);
        expect(outcomes.filter((o) => o.change === "opened")).toHaveLength(1);
        const [incident] = await store.incidents.list(tenantId, { limit: 10 });
        expect(incident?.alertCount).toBe(N);
        expect(await store.incidents.list(tenantId, { limit: 10, status: "resolved" })).toEqual([]);
      } finally {
        for (const s of stores.slice(1)) await s.close();
      }
    });

    test("concurrent changes from two stores are never placed behind a change-stream cursor already handed out", async () => {
      const { tenantId, service } = await seed();
      const stores = world.another ? [store, world.another()] : [store];
      const committed: string[] = [];
      let writing = true;
      const writers = stores.map(async (s, w) => {
        for (let round = 0; round < 10; round++) {
          await Promise.all(
            Array.from({ length: 3 }, async (_, k) => {
              // Each opens a new incident and resolves it: two changes per key, in two commits.
              const key = `w${w}-r${round}-k${k}`;
              const [opened] = await s.incidents.applyAlerts([
                await stored(service, { action: "trigger", dedupKey: key }, NOW, s),
              ]);
              committed.push(`${opened?.incidentId}:opened`);
              await s.incidents.applyAlerts([await stored(service, { action: "resolve", dedupKey: key }, NOW, s)]);
              committed.push(`${opened?.incidentId}:resolved`);
            }),
          );
        }
      });
      const done = Promise.all(writers).finally(() => {
        writing = false;
      });
      try {
        const reader = stores[stores.length - 1] as Store;
        const seen: string[] = [];
        let cursor = 0;
        for (;;) {
          const finished = !writing;
          const page = await reader.incidents.changes(tenantId, { after: cursor, limit: 5 });
          for (const change of page) {
            expect(change.position).toBeGreaterThan(cursor);
            seen.push(`${change.incident.id}:${change.change}`);
            cursor = change.position;
          }
          if (finished && page.length === 0) break;
          if (page.length === 0) await Bun.sleep(0);
        }
        await done;
        expect(new Set(seen).size).toBe(seen.length);
        expect(new Set(seen)).toEqual(new Set(committed));
      } finally {
        await done.catch(() => undefined);
        for (const s of stores.slice(1)) await s.close();
      }
    });

    test("interleaved concurrent resolves and triggers never leave two open incidents, and count every event once", async () => {
      const { tenantId, service } = await seed();
      const stores = world.another ? [store, world.another()] : [store];
      try {
        const actions = Array.from({ length: 120 }, (_, i) => (i % 3 === 2 ? "resolve" : "trigger") as Alert["action"]);
        const events = await Promise.all(
          actions.map((action, i) => stored(service, { action }, NOW + i, stores[i % stores.length])),
        );
        const outcomes = (
          await Promise.all(
            events.map(async (e, i) => {
              // Some alone, some two at a time: batches of every shape race.
              const s = stores[i % stores.length] as Store;
              return s.incidents.applyAlerts([e]);
            }),
          )
        ).flat();
        const open = await openOf(tenantId);
        expect(open.length).toBeLessThanOrEqual(1);
        const all = await store.incidents.list(tenantId, { limit: 100 });
        const touched = outcomes.filter((o) => o.incidentId !== null).length;
        expect(all.reduce((sum, i) => sum + i.alertCount, 0)).toBe(touched);
        expect(all.filter((i) => i.status === "resolved")).toHaveLength(
          outcomes.filter((o) => o.change === "resolved").length,
        );
        // Every trigger counted: each one opened or joined an incident.
        expect(outcomes.filter((o, i) => actions[i] === "trigger" && o.incidentId === null)).toEqual([]);
      } finally {
        for (const s of stores.slice(1)) await s.close();
      }
    });
  });

  runIncidentIngestContract(name, makeWorld);
}
