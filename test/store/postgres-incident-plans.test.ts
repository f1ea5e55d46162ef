/**
 * The PostgreSQL plans of the incident reads that must stay index-driven (docs/incidents.md,
 * "Indexes" and "Cost"): ingest's read of a batch's open incidents and auto-resolve's read of
 * the due ones, on a table that has never been analyzed (a fresh deployment, bench scenario 15)
 * as on an analyzed one; and the list pages, each walking the index meant for its filter in
 * page order. Each statement is explained, not run. The event reads: postgres-plans.test.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { IncidentQuery } from "../../src/domain/ports/store.ts";
import { incidentListStatement } from "../../src/store/incident-rows.ts";
import { postgresPlaceholder } from "../../src/store/list-rows.ts";
import { DUE, OPEN_BY_KEYS } from "../../src/store/postgres/incidents.ts";
import { serviceAvailable } from "../support/services.ts";
import { explain, planDatabase } from "./plan-database.ts";
import { NOW } from "./store-contract.ts";

const ok = await serviceAvailable("postgres");

describe.skipIf(!ok)("postgres incident read plans", () => {
  const db = planDatabase({
    prefix: "intake_incplans",
    tenants: 10,
    servicesPerTenant: 2,
    service: { incidentAutoResolveSeconds: 3_600 },
    // As a bench's or a new deployment's table: a few thousand rows, never analyzed.
    seed: () => seed(1, 5_000),
  });
  const { tenants, services } = db;

  /** `count` incidents round robin over the services, one in ten open, from number `from` on. */
  async function seed(from: number, count: number): Promise<void> {
    await db.sql.unsafe(
      "insert into incidents (id, tenant_id, service_id, dedup_key, status, severity, title, source, alert_count, " +
        "created_at, last_event_at, resolved_at, resolved_by_type) " +
        "select lpad(to_hex($1::bigint + g), 12, '0') || lpad(to_hex(g), 20, '0'), s.tenants[g % $2 + 1], s.ids[g % $2 + 1], " +
        "'key-' || g, case when g % 10 = 0 then 'triggered' else 'resolved' end, " +
        "(array['info','warning','error','critical'])[g % 4 + 1], 'title', 'source', 1, $1::bigint + g, $1::bigint + g, " +
        "case when g % 10 = 0 then null else $1::bigint + g end, case when g % 10 = 0 then null else 'auto' end " +
        "from generate_series($3::int, $4::int) g, " +
        "(select array_agg(id order by id) ids, array_agg(tenant_id order by id) tenants from services) s",
      [NOW, services.length, from, from + count - 1],
    );
  }

  const plan = (text: string, params: unknown[]) => explain(db.sql, text, params);

  /** 100 keys of a batch (the bench's), and the open incidents' probe for them. */
  async function openByKeysPlan(): Promise<string> {
    const keys = Array.from({ length: 100 }, (_, i) => i * 10);
    return plan(OPEN_BY_KEYS, [keys.map((g) => services[g % services.length]), keys.map((g) => `key-${g}`)]);
  }

  async function expectIndexDriven(): Promise<void> {
    const open = await openByKeysPlan();
    expect(open).toContain("Index Scan using incidents_open_key_unique on incidents");
    expect(open).not.toContain("Seq Scan on incidents");
    // Per service: its open incidents (a bitmap of the index, or the index itself), sorted by
    // deadline. The sort is of one service's open incidents, not of the table.
    const due = await plan(DUE, [NOW + 10 * 3_600_000, 100]);
    expect(due).toMatch(/Index Scan (using|on) incidents_open_key_unique/);
    expect(due).toContain("Index Cond: (service_id = s.id)");
    expect(due).not.toContain("Seq Scan on incidents");
  }

  test("§17 ingest's open-incident probe and auto-resolve's read use incidents_open_key_unique on a never-analyzed table", async () => {
    await expectIndexDriven();
  });

  describe("with 100,000 analyzed incidents", () => {
    beforeAll(async () => {
      await seed(5_001, 95_000);
      await db.sql.unsafe("analyze incidents");
    }, 120_000);

    test("§17 ingest's open-incident probe and auto-resolve's read still use incidents_open_key_unique", async () => {
      await expectIndexDriven();
    });

    test("§17 incident pages walk the index of their filter newest first: no scan of incidents, no sort", async () => {
      const tenant = tenants[0] as string;
      const service = services[0] as string;
      const cases: Array<[Omit<IncidentQuery, "limit">, string]> = [
        [{}, "incidents_tenant_id_idx"],
        [{ status: "open" }, "incidents_tenant_open_idx"],
        [{ status: "resolved" }, "incidents_tenant_status_idx"],
        [{ severity: "critical" }, "incidents_tenant_severity_idx"],
        [{ serviceId: service }, "incidents_service_id_idx"],
        [{ status: "open", before: "ffffffffffff" }, "incidents_tenant_open_idx"],
      ];
      for (const [query, index] of cases) {
        const { text, params } = incidentListStatement(postgresPlaceholder, tenant, { limit: 21, ...query });
        const page = await plan(text, params);
        // The index of the filter, or the primary key walked newest first when the planner
        // finds the filter's rows dense enough: either way the page's rows in page order.
        expect(page).toMatch(new RegExp(`Index Scan Backward using (${index}|incidents_pkey) on incidents`));
        expect(page).not.toMatch(/Seq Scan on incidents|Sort/);
      }
    });
  });
});
