/**
 * §18's search and §22's stats halves of the Store port's contract (docs/search.md), run
 * against every adapter: the substring semantics of `q` answered by the store's own index,
 * the filters, the keyset order, tenant isolation, the index following deletes, the index
 * turned off and rebuilt, and stats summed across instances.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createIdGenerator } from "../../src/domain/ids.ts";
import type { Store } from "../../src/domain/ports/store.ts";
import { createServiceStats, createStatsAggregator } from "../../src/domain/stats.ts";
import type { FoundEvent, Principal, ServiceRecord } from "../../src/domain/types.ts";
import { createLogger } from "../../src/logger.ts";
import {
  auditOf,
  creationAudit,
  NOW,
  newId,
  type StoreWorld,
  serviceRecord,
  tenantRecord,
  tokenRecord,
} from "./store-contract.ts";

export interface SearchWorld extends StoreWorld {
  /** Runs one SQL statement on the world's database, bypassing the store. */
  exec(statement: string): Promise<void>;
  /** A second store on the same database opened with this INTAKE_EVENT_SEARCH (not yet migrated). */
  reopen(eventSearch: boolean): Store;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

export function runSearchContract(name: string, makeWorld: () => Promise<SearchWorld>): void {
  describe(`${name} store search and stats contract`, () => {
    let world: SearchWorld;
    let store: Store;
    const opened: Store[] = [];

    beforeEach(async () => {
      world = await makeWorld();
      store = world.store;
      await store.migrate();
    });

    afterEach(async () => {
      for (const other of opened.splice(0)) await other.close();
      await world.cleanup();
    });

    async function seedTenant(): Promise<{ tenantId: string; service: ServiceRecord }> {
      const tenant = tenantRecord();
      const owner = tokenRecord(tenant.id, { role: "owner" });
      await store.createTenant(tenant, owner, creationAudit(tenant, owner));
      const service = await addService(tenant.id);
      return { tenantId: tenant.id, service };
    }

    async function addService(tenantId: string): Promise<ServiceRecord> {
      const service = serviceRecord(tenantId);
      await store.services.insert(service, auditOf(tenantId, "service.create", "service", service.id));
      return service;
    }

    async function ingest(service: ServiceRecord, payload: unknown, receivedAt = NOW, on: Store = store) {
      // The Store port's invariant: an event's id is a UUIDv7 of its receipt time.
      const id = createIdGenerator(() => receivedAt)();
      const [result] = await on.events.insertBatch([
        {
          id,
          tenantId: service.tenantId,
          serviceId: service.id,
          receivedAt,
          idempotencyKey: null,
          payload: encode(payload),
        },
      ]);
      expect(result).toEqual({ kind: "inserted" });
      return id;
    }

    const ids = (rows: FoundEvent[]) => rows.map((r) => r.id);
    const q = (tenantId: string, ...terms: string[]) => store.events.search(tenantId, { terms, limit: 100 });

    test("q finds cus_123, an e-mail in another case and invoice.pa as substrings of the payload, and nothing else", async () => {
      const { tenantId, service } = await seedTenant();
      const customer = await ingest(service, { customer: "cus_123", email: "A@Example.com", type: "invoice.paid" });
      // `_` is one character, not a wildcard: cusX123 is not cus_123.
      const lookalike = await ingest(service, { customer: "cusX123", email: "b@example.org", type: "charge.failed" });
      expect(ids(await q(tenantId, "cus_123"))).toEqual([customer]);
      expect(ids(await q(tenantId, "a@example.com"))).toEqual([customer]);
      expect(ids(await q(tenantId, "A@EXAMPLE.COM"))).toEqual([customer]);
      expect(ids(await q(tenantId, "invoice.pa"))).toEqual([customer]);
      expect(ids(await q(tenantId, "ICE.PAI"))).toEqual([customer]);
      expect(ids(await q(tenantId, "cusX123"))).toEqual([lookalike]);
      expect(ids(await q(tenantId, "cus_124"))).toEqual([]);
      expect(ids(await q(tenantId, "100%"))).toEqual([]);
      // The payload's text, keys and punctuation included.
      expect(ids(await q(tenantId, '"customer":"cus_'))).toEqual([customer]);
      const row = (await q(tenantId, "cus_123"))[0];
      expect(row).toMatchObject({
        id: customer,
        tenantId,
        serviceId: service.id,
        receivedAt: NOW,
        type: null,
        incidentId: null,
      });
      expect(new TextDecoder().decode(row?.payload)).toContain('"cus_123"');
    });

    test("bytes that are not UTF-8 text (the store keeps them unjudged) are stored, and searching beside them works", async () => {
      const { tenantId, service } = await seedTenant();
      const [raw] = await store.events.insertBatch([
        {
          id: createIdGenerator(() => NOW)(),
          tenantId,
          serviceId: service.id,
          receivedAt: NOW,
          idempotencyKey: null,
          payload: new Uint8Array([0x7b, 0x00, 0xff, 0xfe, 0x61, 0x62, 0x63, 0x7d]),
        },
      ]);
      expect(raw).toEqual({ kind: "inserted" });
      const text = await ingest(service, { word: "plain-text" });
      expect(ids(await q(tenantId, "plain-text"))).toEqual([text]);
      expect((await store.events.search(tenantId, { limit: 10 })).length).toBe(2);
    });

    test("every term must occur (AND), in any order and anywhere in the payload", async () => {
      const { tenantId, service } = await seedTenant();
      const both = await ingest(service, { a: "alpha-one", b: { c: "gamma-two" } });
      await ingest(service, { a: "alpha-one" });
      await ingest(service, { b: "gamma-two" });
      expect(ids(await q(tenantId, "gamma-two", "alpha-one"))).toEqual([both]);
      expect(ids(await q(tenantId, "alpha", "gamma", "two", "one"))).toEqual([both]);
      expect((await q(tenantId, "alpha")).length).toBe(2);
    });

    test("another tenant's events are never found, by q or by any filter", async () => {
      const mine = await seedTenant();
      const theirs = await seedTenant();
      const own = await ingest(mine.service, { secret: "shared-word" });
      await ingest(theirs.service, { secret: "shared-word" });
      expect(ids(await q(mine.tenantId, "shared-word"))).toEqual([own]);
      // Naming their service from my tenant finds nothing.
      expect(await store.events.search(mine.tenantId, { serviceId: theirs.service.id, limit: 100 })).toEqual([]);
      expect(
        await store.events.search(mine.tenantId, { serviceId: theirs.service.id, terms: ["shared-word"], limit: 100 }),
      ).toEqual([]);
      expect(ids(await store.events.search(mine.tenantId, { limit: 100 }))).toEqual([own]);
    });

    test("filters combine with AND; received_after is inclusive, received_before exclusive; newest first", async () => {
      const { tenantId, service } = await seedTenant();
      const other = await addService(tenantId);
      const e1 = await ingest(service, { n: 1, word: "needle" }, NOW);
      const e2 = await ingest(service, { n: 2 }, NOW + MINUTE);
      const e3 = await ingest(other, { n: 3, word: "needle" }, NOW + 2 * MINUTE);
      const e4 = await ingest(service, { n: 4, word: "needle" }, NOW + 3 * MINUTE);
      // The ingest wiring sets `type` from the payload at insert; set it here the same way.
      await world.exec(`update events set type = 'invoice.paid' where id in ('${e1}', '${e3}', '${e4}')`);
      await world.exec(`update events set type = 'charge.failed' where id = '${e2}'`);
      const incident = newId();
      await world.exec(`update events set incident_id = '${incident}' where id = '${e4}'`);
      const search = (query: Omit<Parameters<Store["events"]["search"]>[1], "limit">) =>
        store.events.search(tenantId, { limit: 100, ...query }).then(ids);

      expect(await search({})).toEqual([e4, e3, e2, e1]);
      expect(await search({ serviceId: service.id })).toEqual([e4, e2, e1]);
      expect(await search({ serviceId: service.id, type: "invoice.paid" })).toEqual([e4, e1]);
      expect(await search({ type: "invoice.paid" })).toEqual([e4, e3, e1]);
      expect(await search({ incidentId: incident })).toEqual([e4]);
      expect(await search({ receivedAfter: NOW + MINUTE })).toEqual([e4, e3, e2]);
      expect(await search({ receivedBefore: NOW + 3 * MINUTE })).toEqual([e3, e2, e1]);
      expect(
        await search({
          serviceId: service.id,
          type: "invoice.paid",
          receivedAfter: NOW,
          receivedBefore: NOW + 3 * MINUTE,
        }),
      ).toEqual([e1]);
      expect(await search({ terms: ["needle"], serviceId: service.id })).toEqual([e4, e1]);
      expect(await search({ terms: ["needle"], receivedBefore: NOW + 3 * MINUTE, type: "invoice.paid" })).toEqual([
        e3,
        e1,
      ]);
      expect(await search({ terms: ["needle"], incidentId: incident })).toEqual([e4]);
    });

    test("keyset pages by position walk every match once, newest stored first, with and without q", async () => {
      const { tenantId, service } = await seedTenant();
      const made: string[] = [];
      // Two events per millisecond, and a clock stepping back: the page order is the commit order.
      for (let i = 0; i < 9; i++) made.push(await ingest(service, { word: "paged", i }, NOW + 5 - Math.floor(i / 2)));
      const expected = [...made].reverse();
      for (const terms of [undefined, ["paged"]]) {
        const seen: string[] = [];
        let before: number | undefined;
        for (;;) {
          const page = await store.events.search(tenantId, {
            limit: 4,
            ...(terms && { terms }),
            ...(before !== undefined && { before }),
          });
          seen.push(...ids(page));
          if (page.length < 4) break;
          before = (page[page.length - 1] as FoundEvent).position;
        }
        expect(seen).toEqual(expected);
      }
    });

    test("a time range finds every event inside it and none outside, however many events lie around it", async () => {
      const { tenantId, service } = await seedTenant();
      const other = await seedTenant();
      const at = (minutes: number) => NOW + minutes * MINUTE;
      // Around the range by more than the slack the walk is bounded by, and right at its edges.
      await ingest(service, { n: "long before" }, at(-60));
      await ingest(other.service, { n: "another tenant, before" }, at(-30));
      const first = await ingest(service, { n: "at received_after" }, at(0));
      const inside = await ingest(service, { n: "inside" }, at(5));
      const last = await ingest(service, { n: "just before received_before" }, at(20) - 1);
      await ingest(service, { n: "at received_before" }, at(20));
      await ingest(other.service, { n: "another tenant, after" }, at(40));
      await ingest(service, { n: "long after" }, at(90));
      const range = { receivedAfter: at(0), receivedBefore: at(20) };
      expect(ids(await store.events.search(tenantId, { limit: 100, ...range }))).toEqual([last, inside, first]);
      expect(ids(await store.events.search(tenantId, { limit: 100, ...range, serviceId: service.id }))).toEqual([
        last,
        inside,
        first,
      ]);
      const page = await store.events.search(tenantId, { limit: 2, ...range });
      const rest = await store.events.search(tenantId, {
        limit: 100,
        ...range,
        before: (page[1] as FoundEvent).position,
      });
      expect([...ids(page), ...ids(rest)]).toEqual([last, inside, first]);
      expect(ids(await store.events.search(tenantId, { limit: 100, receivedAfter: at(89) }))).toHaveLength(1);
      expect(ids(await store.events.search(tenantId, { limit: 100, receivedBefore: at(-59) }))).toHaveLength(1);
    });

    test("a deleted service's events leave the index: a later event never matches their words", async () => {
      const { tenantId, service } = await seedTenant();
      await ingest(service, { gone: "vanishing-word" });
      await store.services.delete(tenantId, service.id, auditOf(tenantId, "service.delete", "service", service.id));
      const next = await addService(tenantId);
      const later = await ingest(next, { kept: "other-words" });
      expect(await q(tenantId, "vanishing-word")).toEqual([]);
      expect(ids(await q(tenantId, "other-words"))).toEqual([later]);
    });

    test("retention's deletes leave the index too", async () => {
      const { tenantId, service } = await seedTenant();
      await ingest(service, { old: "expired-word" }, Date.now() - 10 * HOUR);
      const fresh = await ingest(service, { fresh: "expired-word" }, Date.now());
      expect((await q(tenantId, "expired-word")).length).toBe(2);
      // Retention selects by id floor and received_at; the ids are made at the receipt times.
      expect(await store.events.deleteOlderThan(Date.now() + MINUTE, 100)).toBe(2);
      const after = await ingest(service, { fresh: "something-else" }, Date.now());
      expect(await q(tenantId, "expired-word")).toEqual([]);
      expect(ids(await q(tenantId, "something-else"))).toEqual([after]);
      expect(fresh).not.toBe(after);
    });

    test("INTAKE_EVENT_SEARCH=false keeps no index; turned back on, migrate() rebuilds it over every stored event", async () => {
      const { tenantId, service } = await seedTenant();
      const before = await ingest(service, { word: "rebuilt-word" });
      const off = world.reopen(false);
      opened.push(off);
      await off.migrate();
      const during = await ingest(service, { word: "rebuilt-word", while: "off" }, NOW + 1, off);
      const on = world.reopen(true);
      opened.push(on);
      await on.migrate();
      const found = await on.events.search(tenantId, { terms: ["rebuilt-word"], limit: 10 });
      expect(ids(found)).toEqual([during, before]);
    });

    describe("service stats", () => {
      const logger = createLogger(() => {});
      const principalOf = (tenantId: string): Principal => ({
        tokenId: newId(),
        tenantId,
        scope: "read_only",
        role: "member",
        permissionMode: "flat",
      });

      test("two instances' aggregators flushing the same buckets into one store sum", async () => {
        const { tenantId, service } = await seedTenant();
        const second = world.another?.() ?? store;
        if (second !== store) opened.push(second);
        const clock = { now: () => NOW };
        const a = createStatsAggregator({ store, clock, logger });
        const b = createStatsAggregator({ store: second, clock, logger });
        const publicId = `svc_${service.id}`;
        for (let i = 0; i < 3; i++) a.record(publicId, "accepted");
        for (let i = 0; i < 2; i++) b.record(publicId, "accepted");
        a.record(publicId, "invalid_signature", "timestamp_outside_tolerance");
        b.record(publicId, "invalid_signature", "no_matching_signature");
        b.record(publicId, "duplicate");
        await Promise.all([a.flush(), b.flush()]);
        // A second round adds to the stored rows rather than replacing them.
        a.record(publicId, "accepted");
        b.record(publicId, "invalid_signature", "timestamp_outside_tolerance");
        await Promise.all([a.flush(), b.flush()]);
        const stats = await createServiceStats({ store, clock }).serviceStats(principalOf(tenantId), publicId, "24h");
        expect(stats.totals).toEqual({
          accepted: 6,
          duplicate: 1,
          timestamp_outside_tolerance: 2,
          no_matching_signature: 1,
        });
        expect(stats.buckets.length).toBe(288);
        expect(stats.buckets.filter((bucket) => Object.keys(bucket.counts).length > 0)).toEqual([
          { start: NOW - (NOW % 300_000), counts: stats.totals },
        ]);
      });

      test("stop() (the drain) writes what is held; an unknown service's outcome is not counted", async () => {
        const { tenantId, service } = await seedTenant();
        let now = NOW;
        const clock = { now: () => now };
        const aggregator = createStatsAggregator({ store, clock, logger, flushMs: 3_600_000 });
        aggregator.start();
        const publicId = `svc_${service.id}`;
        aggregator.record(publicId, "accepted");
        now += 2 * HOUR;
        aggregator.record(publicId, "rate_limited");
        aggregator.record(publicId, "invalid_signature", "unknown_service");
        aggregator.record(`svc_${newId()}`, "accepted");
        await aggregator.stop();
        const read = createServiceStats({ store, clock });
        const day = await read.serviceStats(principalOf(tenantId), publicId, "24h");
        expect(day.totals).toEqual({ accepted: 1, rate_limited: 1 });
        const week = await read.serviceStats(principalOf(tenantId), publicId, "7d");
        expect(week.bucketMs).toBe(HOUR);
        expect(week.buckets.length).toBe(168);
        const counted = week.buckets.filter((bucket) => Object.keys(bucket.counts).length > 0);
        expect(counted).toEqual([
          { start: NOW - (NOW % HOUR), counts: { accepted: 1 } },
          { start: NOW - (NOW % HOUR) + 2 * HOUR, counts: { rate_limited: 1 } },
        ]);
      });

      test("a deleted service's stats go with it; another tenant reads them as not found", async () => {
        const { tenantId, service } = await seedTenant();
        const stranger = await seedTenant();
        const clock = { now: () => NOW };
        const aggregator = createStatsAggregator({ store, clock, logger });
        aggregator.record(`svc_${service.id}`, "accepted");
        await aggregator.flush();
        const range = { from: NOW - HOUR, to: NOW + HOUR, bucketMs: 300_000 };
        expect(await store.stats.read(tenantId, service.id, range)).toHaveLength(1);
        expect(await store.stats.read(stranger.tenantId, service.id, range)).toEqual([]);
        const read = createServiceStats({ store, clock });
        expect(read.serviceStats(principalOf(stranger.tenantId), `svc_${service.id}`, "24h")).rejects.toMatchObject({
          code: "not_found",
        });
        await store.services.delete(tenantId, service.id, auditOf(tenantId, "service.delete", "service", service.id));
        expect(await store.stats.read(tenantId, service.id, range)).toEqual([]);
        // Counts still held for it when it went are dropped at the next flush, not an error.
        aggregator.record(`svc_${service.id}`, "accepted");
        await aggregator.flush();
        expect(await store.stats.read(tenantId, service.id, range)).toEqual([]);
      });

      test("retention deletes buckets before the cutoff only", async () => {
        const { tenantId, service } = await seedTenant();
        await store.stats.add([
          { serviceId: service.id, bucketStart: NOW - 9 * 24 * HOUR, outcome: "accepted", count: 4 },
          { serviceId: service.id, bucketStart: NOW, outcome: "accepted", count: 5 },
        ]);
        expect(await store.stats.deleteOlderThan(NOW - 8 * 24 * HOUR, 100)).toBe(1);
        expect(await store.stats.read(tenantId, service.id, { from: 0, to: NOW + HOUR, bucketMs: 300_000 })).toEqual([
          { bucketStart: NOW, outcome: "accepted", count: 5 },
        ]);
      });
    });
  });
}
