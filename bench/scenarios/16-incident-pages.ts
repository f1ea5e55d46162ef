/**
 * Scenario 16 (SPEC §17's cost goal): `GET /v1/incidents?status=open&limit=20` from a tenant
 * with 1,000,000 incidents against the same page from a tenant with 1,000 (goal: costs ≤ 1.2×),
 * on SQLite and on PostgreSQL. Each tenant has a store of its own (so the small one's tables are
 * small too), seeded in bulk SQL (bench/lib/incidents-seed.ts: 100 open incidents spread through
 * a history of resolved ones) before its Intake starts. Read scenario: the two Intakes pinned,
 * side by side (each pair's two halves in one window, see `sideBySide`); the cost ratio is the
 * small tenant's req/s over the large one's, the median of the paired rounds.
 */
import type { Harness } from "../lib/harness.ts";
import { sqlitePath } from "../lib/harness.ts";
import { seedIncidentsPostgres, seedIncidentsSqlite } from "../lib/incidents-seed.ts";
import { type Bootstrapped, bootstrap, type IntakeSpec, type RunningIntake } from "../lib/intake.ts";
import { createScratchDatabase, type ScratchDatabase } from "../lib/postgres.ts";
import { fmtMs, fmtRatio, fmtRps, pairedRatio, type Row, type Series, summarize } from "../lib/report.ts";

const PAGE = "/v1/incidents?status=open&limit=20";

interface Tenant {
  count: number;
  spec: IntakeSpec;
  boot: Bootstrapped;
}

/** The page must be 20 open incidents with a next page: what the load then asks for. */
async function checkPage(intake: RunningIntake, token: string): Promise<void> {
  const res = await fetch(`${intake.url}${PAGE}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  const page = (await res.json()) as { data?: Array<{ status: string }>; next_cursor?: string | null };
  if (
    res.status !== 200 ||
    page.data?.length !== 20 ||
    !page.next_cursor ||
    page.data.some((i) => i.status === "resolved")
  )
    throw new Error(`${intake.name}: the open page is not 20 open incidents and a cursor: ${res.status}`);
}

async function comparePages(h: Harness, store: string, small: Tenant, large: Tenant): Promise<Row> {
  const { pinned, bearerGet, sideBySide, pairPlan, start, stopIntake } = h;
  const smallIntake = await start(small.spec);
  const largeIntake = await start(large.spec);
  try {
    await checkPage(smallIntake, small.boot.token);
    await checkPage(largeIntake, large.boot.token);
    const label = (t: Tenant) => `GET ${PAGE}, ${t.count.toLocaleString("en-US")} incidents, ${store}`;
    let pair: [Series, Series] | undefined;
    await pinned([smallIntake.pid, largeIntake.pid], async () => {
      [pair] = (await sideBySide(
        16,
        [
          [
            bearerGet(label(small), `${smallIntake.url}${PAGE}`, small.boot.token),
            bearerGet(label(large), `${largeIntake.url}${PAGE}`, large.boot.token),
          ],
        ],
        pairPlan,
      )) as [[Series, Series]];
    });
    if (!pair) throw new Error(`${store}: the pages were not measured`);
    const [s, l] = pair;
    const cost = pairedRatio(s, l);
    const [ss, ls] = [summarize(s), summarize(l)];
    return {
      scenario: 16,
      title: `GET ${PAGE}: a tenant with ${large.count.toLocaleString("en-US")} incidents vs ${small.count.toLocaleString("en-US")}, ${store} (32 conns)`,
      goal: "cost ratio ≤ 1.2",
      measured: `${fmtRatio(cost)} side by side (${fmtRps(ls.rps)} vs ${fmtRps(ss.rps)} req/s; p50 ${fmtMs(ls.p50Us)} vs ${fmtMs(ss.p50Us)} ms)`,
      status: cost <= 1.2 ? "met" : "missed",
    };
  } finally {
    await stopIntake(smallIntake);
    await stopIntake(largeIntake);
  }
}

export async function run(h: Harness): Promise<void> {
  const { settings, rows, log, scenario, spec, serviceOf } = h;
  const counts = [settings.incidentsSmall, settings.incidentsLarge];
  await scenario(16, "A page of 20 open incidents: 1M vs 1k incidents in the tenant (SQLite, PostgreSQL)", async () => {
    const sqlite: Tenant[] = [];
    for (const count of counts) {
      const s = spec(`incidents-sqlite-${count}`);
      const boot = await bootstrap(s);
      const svc = await serviceOf(s, boot, "bench-incidents");
      const seconds = seedIncidentsSqlite(sqlitePath(s), {
        tenantId: boot.tenantId,
        serviceId: svc.id.slice("svc_".length),
        count,
      });
      log(`  seeded ${count} incidents (SQLite) in ${seconds.toFixed(1)} s`);
      sqlite.push({ count, spec: s, boot });
    }
    rows.push(await comparePages(h, "SQLite", sqlite[0] as Tenant, sqlite[1] as Tenant));

    const databases: ScratchDatabase[] = [];
    try {
      const postgres: Tenant[] = [];
      for (const count of counts) {
        const db = await createScratchDatabase();
        if ("unreachable" in db) {
          h.postgresSkipped(16, "Open incidents page, PostgreSQL", "cost ratio ≤ 1.2", db.unreachable);
          return;
        }
        databases.push(db);
        const s = spec(`incidents-postgres-${count}`, { DATABASE_URL: db.url });
        const boot = await bootstrap(s);
        const svc = await serviceOf(s, boot, "bench-incidents");
        const seconds = await seedIncidentsPostgres(db.url, {
          tenantId: boot.tenantId,
          serviceId: svc.id.slice("svc_".length),
          count,
        });
        log(`  seeded ${count} incidents (PostgreSQL) in ${seconds.toFixed(1)} s`);
        postgres.push({ count, spec: s, boot });
      }
      rows.push(await comparePages(h, "PostgreSQL", postgres[0] as Tenant, postgres[1] as Tenant));
    } finally {
      for (const db of databases) await db.drop();
    }
  });
}
