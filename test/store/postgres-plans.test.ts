/**
 * The PostgreSQL plans of the event reads that must stay cheap however many events are stored
 * (docs/search.md, docs/store.md): each statement the store builds is explained, not run,
 * against 100,000 analyzed events, and must walk the index meant for it in page order — no
 * scan of `events`, no sort of the rows it walks. SQLite's plans: test/store/sqlite.test.ts.
 */
import { describe, expect, test } from "bun:test";
import type { EventSearchQuery } from "../../src/domain/ports/store.ts";
import { LIST_AFTER, LIST_FIRST } from "../../src/store/postgres/event-reads.ts";
import { createEventSearch } from "../../src/store/postgres/event-search.ts";
import { createExportRepo } from "../../src/store/postgres/exports.ts";
import type { PostgresPool } from "../../src/store/postgres/pool.ts";
import { serviceAvailable } from "../support/services.ts";
import { explain, planDatabase } from "./plan-database.ts";
import { NOW } from "./store-contract.ts";

const ok = await serviceAvailable("postgres");
const EVENTS = 100_000;
const TENANTS = 10;
const SERVICES = 20;

describe.skipIf(!ok)("postgres event read plans on 100,000 events", () => {
  const db = planDatabase({
    prefix: "intake_plans",
    tenants: TENANTS,
    servicesPerTenant: SERVICES / TENANTS,
    eventSearch: true,
    seed: async ({ sql }) => {
      // One event every 10 ms, round robin over the services; ids are UUIDv7-like of received_at
      // (the Store port's invariant), positions in that order as the feed assigns them.
      await sql.unsafe(
        "insert into events (id, service_id, tenant_id, received_at, payload, position, type) " +
          "select lpad(to_hex($1::bigint + g * 10), 12, '0') || lpad(to_hex(g), 20, '0'), " +
          "(s.ids)[g % $2 + 1], (s.tenants)[g % $2 + 1], $1::bigint + g * 10, " +
          "convert_to('{\"type\":\"type.' || (g % 7) || '\",\"n\":\"word-' || g || '\"}', 'UTF8'), g, 'type.' || (g % 7) " +
          "from generate_series(1, $3::int) g, (select array_agg(id order by id) ids, array_agg(tenant_id order by id) tenants from services) s",
        [NOW, SERVICES, EVENTS],
      );
      await sql.unsafe("insert into feed_head (id, head) values (1, $1) on conflict (id) do update set head = $1", [
        EVENTS,
      ]);
      await sql.unsafe("analyze");
    },
  });
  const { tenants, services } = db;

  /** A pool whose client explains each statement instead of running it. */
  function explaining(plans: string[]): PostgresPool {
    return {
      guard: (operation: () => Promise<unknown>) => operation(),
      client: () => ({
        unsafe: (text: string, params: unknown[]) => ({
          values: async () => {
            plans.push(await explain(db.sql, text, params));
            return [];
          },
        }),
      }),
    } as unknown as PostgresPool;
  }

  async function searchPlan(query: Omit<EventSearchQuery, "limit">): Promise<string> {
    const plans: string[] = [];
    await createEventSearch(explaining(plans))(tenants[0] as string, { limit: 21, ...query });
    return plans[0] ?? "";
  }

  /** The plan walks `index` backward (newest first) over `events e`: no scan of events, no sort. */
  function walks(plan: string, index: string): void {
    expect(plan).toContain(`Index Scan Backward using ${index} on events e`);
    expect(plan).not.toMatch(/Seq Scan on events|Sort/);
  }

  /** The plan reads `events e` only through index conditions bounding the position (and `index`, if named). */
  function bounded(plan: string, index?: string): void {
    expect(plan).not.toMatch(/Seq Scan on events/);
    expect(plan).toMatch(/Index Cond: \(.*"position" > COALESCE.*"position" < (LEAST|COALESCE)/);
    if (index !== undefined) expect(plan).toContain(index);
  }

  const service = () => services[0] as string;
  const range = { receivedAfter: NOW + 300_000, receivedBefore: NOW + 900_000 };

  test("§18 pages without q walk (tenant_id, position), (service_id, position) or (service_id, type, position) newest first", async () => {
    walks(await searchPlan({}), "events_tenant_position_idx");
    walks(await searchPlan({ type: "type.3", before: 50_000 }), "events_tenant_position_idx");
    walks(await searchPlan({ serviceId: service() }), "events_service_position_idx");
    walks(await searchPlan({ serviceId: service(), type: "type.3" }), "events_service_type_position_idx");
    // With a time range the walk is bounded by positions; the planner may then collect the
    // few rows of the range (a bitmap of the index, or of the tenant's AND the service's) and
    // sort them instead of walking in order: bounded either way, never a scan.
    bounded(await searchPlan({ serviceId: service(), ...range, before: 60_000 }));
    bounded(await searchPlan({ serviceId: service(), type: "type.3", ...range }), "events_service_type_position_idx");
  });

  test("§18 time bounds are two primary-key seeks, and the walk starts and stops at their positions", async () => {
    const plan = await searchPlan({ ...range });
    walks(plan, "events_tenant_position_idx");
    expect(plan).toMatch(
      /Index Cond: \(\(tenant_id = .*\) AND \("position" > COALESCE.*\) AND \("position" < COALESCE.*\)\)/,
    );
    expect(plan.match(/Index Scan( Backward)? using events_pkey on events/g)).toHaveLength(2);
  });

  test("§18 incident pages read the partial incident index; q reads the trigram index", async () => {
    const incident = await searchPlan({ incidentId: "0".repeat(32) });
    expect(incident).toContain("events_incident_id_idx");
    expect(incident).not.toContain("Seq Scan on events");
    const q = await searchPlan({ terms: ["word-123"], serviceId: service() });
    expect(q).toContain("events_payload_trgm_idx");
    expect(q).not.toContain("Seq Scan on events");
  });

  test("a service's event listing walks (service_id, position) newest first", async () => {
    const first = await explain(db.sql, LIST_FIRST, [service(), 21]);
    const after = await explain(db.sql, LIST_AFTER, [service(), 21, 50_000]);
    for (const plan of [first, after]) {
      expect(plan).toContain("Index Scan Backward using events_service_position_idx on events");
      expect(plan).not.toMatch(/Seq Scan on events|Sort/);
    }
  });

  test("the export's window: a read covers at most 4 × its limit of positions; past a gap it ends below the head, empty", async () => {
    const first = await db.store.exports.read(0, 10);
    expect(first.items.map((item) => item.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(first).toMatchObject({ upTo: 10, head: EVENTS });
    await db.sql.unsafe("delete from events where position between 200 and 400");
    expect(await db.store.exports.read(199, 10)).toEqual({ items: [], upTo: 239, head: EVENTS });
    const resumed = await db.store.exports.read(399, 10);
    expect(resumed.items.map((item) => item.position)).toEqual([401, 402, 403, 404, 405, 406, 407, 408, 409, 410]);
  });

  test("the export reads a window of positions through events_position_brin: no scan of events, at the head or from 0", async () => {
    for (const after of [0, EVENTS - 300]) {
      const plans: string[] = [];
      const pool = explaining(plans);
      const head = { client: () => ({ unsafe: () => ({ values: async () => [[EVENTS]] }) }) };
      await createExportRepo({ ...pool, client: () => withHead(pool, head) } as unknown as PostgresPool).read(
        after,
        500,
      );
      const events = plans.find((plan) => plan.includes("on events")) ?? "";
      expect(events).toContain("Bitmap Index Scan on events_position_brin");
      expect(events).not.toContain("Seq Scan on events");
    }
  });
});

/** The export first reads the head (answered here), then explains its two reads. */
function withHead(pool: PostgresPool, head: { client: () => unknown }) {
  const explain = pool.client() as unknown as { unsafe: (text: string, params?: unknown[]) => unknown };
  const answer = head.client() as { unsafe: () => unknown };
  return {
    unsafe: (text: string, params?: unknown[]) =>
      text.includes("feed_head") ? answer.unsafe() : explain.unsafe(text, params ?? []),
  };
}
