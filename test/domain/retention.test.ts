/**
 * Retention at the domain level (docs/feed.md, "Retention"; docs/api.md, "Audit log"): what a
 * reader finds after a sweep — through domain.retention (as app.ts composes it from the
 * configuration) on a real in-memory SQLite store, with the manual clock standing in for days.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createRetentionSweeper } from "../../src/domain/retention.ts";
import { createLogger } from "../../src/logger.ts";
import { createDomainWorld, type DomainWorld } from "../support/domain.ts";

let world: DomainWorld;
afterEach(() => world?.close());

const DAY_MS = 86_400_000;

async function feedIds(w: DomainWorld, after?: string): Promise<string[]> {
  return (await w.domain.feed.listFeed(w.owner, { limit: 1000, after })).events.map((e) => e.id);
}

async function auditActions(w: DomainWorld): Promise<string[]> {
  return (await w.domain.audit.listAuditEvents(w.owner, { limit: 100 })).items.map((e) => e.action);
}

describe("events (INTAKE_EVENT_RETENTION_DAYS)", () => {
  test("a sweep deletes events received longer ago than the horizon and keeps the rest, on every read", async () => {
    world = await createDomainWorld({ INTAKE_EVENT_RETENTION_DAYS: "7" });
    const s = await world.createService("s");
    await world.ingest(s, '{"old":1}');
    world.clock.advance(2 * DAY_MS);
    const recent = await world.ingest(s, '{"recent":1}');
    world.clock.advance(5 * DAY_MS + 1);

    expect(await world.domain.retention.sweep()).toMatchObject({ events: 1 });
    expect(await feedIds(world)).toEqual([recent.id]);
    const listed = await world.domain.ingest.listEvents(world.owner, s.id, {});
    expect(listed.items.map((e) => e.id)).toEqual([recent.id]);
  });

  test("an event exactly at the horizon is kept; one millisecond past it goes", async () => {
    world = await createDomainWorld({ INTAKE_EVENT_RETENTION_DAYS: "1" });
    const s = await world.createService("s");
    const event = await world.ingest(s, "{}");
    world.clock.advance(DAY_MS);
    await world.domain.retention.sweep();
    expect(await feedIds(world)).toEqual([event.id]);
    world.clock.advance(1);
    await world.domain.retention.sweep();
    expect(await feedIds(world)).toEqual([]);
  });

  test("a deleted event's Idempotency-Key is free again: the same key stores a new event", async () => {
    world = await createDomainWorld({ INTAKE_EVENT_RETENTION_DAYS: "1" });
    const s = await world.createService("s");
    const first = await world.ingest(s, '{"n":1}', { idempotencyKey: "order-1" });
    world.clock.advance(2 * DAY_MS);
    await world.domain.retention.sweep();
    const again = await world.ingest(s, '{"n":2}', { idempotencyKey: "order-1" });
    expect(again.duplicate).toBe(false);
    expect(again.id).not.toBe(first.id);
  });

  test("a cursor handed out before a sweep resumes at the oldest event still kept", async () => {
    world = await createDomainWorld({ INTAKE_EVENT_RETENTION_DAYS: "1" });
    const s = await world.createService("s");
    await world.ingest(s, '{"n":1}');
    const cursor = (await world.domain.feed.listFeed(world.owner, {})).nextCursor;
    await world.ingest(s, '{"n":2}');
    world.clock.advance(2 * DAY_MS);
    const kept = await world.ingest(s, '{"n":3}');
    await world.domain.retention.sweep();
    expect(await feedIds(world, cursor)).toEqual([kept.id]);
  });

  test("without INTAKE_EVENT_RETENTION_DAYS events are kept however old", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    const event = await world.ingest(s, "{}");
    world.clock.advance(3650 * DAY_MS);
    const swept = await world.domain.retention.sweep();
    expect(swept).not.toHaveProperty("events");
    expect(await feedIds(world)).toEqual([event.id]);
  });
});

describe("audit events (INTAKE_AUDIT_RETENTION_DAYS)", () => {
  test("audit events older than the horizon go; later ones stay", async () => {
    world = await createDomainWorld({ INTAKE_AUDIT_RETENTION_DAYS: "30" });
    // The bootstrap wrote tenant.create and api_token.create at the start.
    world.clock.advance(20 * DAY_MS);
    await world.createService("s");
    world.clock.advance(10 * DAY_MS + 1);
    const swept = await world.domain.retention.sweep();
    expect(swept).toMatchObject({ audit_events: 2 });
    expect(await auditActions(world)).toEqual(["service.create"]);
  });
});

describe("the sweeper", () => {
  test("deletes in batches until nothing older is left, pausing between them", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    for (let n = 0; n < 7; n++) await world.ingest(s, `{"n":${n}}`);
    world.clock.advance(2 * DAY_MS);
    const kept = await world.ingest(s, '{"new":1}');
    const batches: number[] = [];
    const sweeper = createRetentionSweeper({
      tables: [
        {
          name: "events",
          days: 1,
          deleteOlderThan: async (cutoff, batch) => {
            const n = await world.store.events.deleteOlderThan(cutoff, batch);
            batches.push(n);
            return n;
          },
        },
      ],
      clock: world.clock,
      logger: createLogger(() => {}),
      batchSize: 3,
      pauseMs: 0,
    });
    expect(await sweeper.sweep()).toEqual({ events: 7 });
    expect(batches).toEqual([3, 3, 1]);
    expect(await feedIds(world)).toEqual([kept.id]);
  });

  test("a sweep that deleted something says so in the log, with the table and the count", async () => {
    world = await createDomainWorld({ INTAKE_EVENT_RETENTION_DAYS: "1" });
    const s = await world.createService("s");
    await world.ingest(s, "{}");
    await world.ingest(s, "{}", { idempotencyKey: "k" });
    world.clock.advance(2 * DAY_MS);
    await world.domain.retention.sweep();
    const line = world.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "retention sweep" && l.table === "events");
    expect(line).toMatchObject({ table: "events", deleted: 2 });
  });
});
