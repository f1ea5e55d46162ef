/**
 * Scenario 18: what two options cost signed ingest (1 KiB, 128 conns, group commit), each
 * against the same Intake without it, side by side: §18's payload index (INTAKE_EVENT_SEARCH=true
 * vs false, SQLite and PostgreSQL; goal ≥ 0.80×) and §22's per-service stats
 * (INTAKE_SERVICE_STATS=true vs false, SQLite; goal ≥ 0.97×). The search goal has a floor: the
 * independent floor (bench/floor-ingest-bare.ts) with an FTS5 trigram index vs without, side by
 * side too, on each store (on PostgreSQL with pg_trgm's GIN index) — when it misses 0.80× itself,
 * no implementation of the index could meet the goal on this machine (docs/search.md, "What the
 * index costs").
 */
import { join } from "node:path";
import type { Harness, Reference, Target } from "../lib/harness.ts";
import { BENCH_TOLERANCE_SECONDS, bootstrap, type IntakeSpec, type RunningIntake } from "../lib/intake.ts";
import { writePool } from "../lib/pool.ts";
import { createScratchDatabase, type ScratchDatabase } from "../lib/postgres.ts";
import { stop } from "../lib/procs.ts";
import { againstFloor, beside, pairedRatio, type Series } from "../lib/report.ts";

const SEARCH_GOAL = 0.8;
const STATS_GOAL = 0.97;

export async function run(h: Harness): Promise<void> {
  const { settings, rows, workDir, ingestTarget, ingestPairPlan, sideBySide, scenario, probeIngest } = h;
  const { spec, start, stopIntake, startBaseline, serviceOf } = h;
  const floors: Reference[] = [];
  /** The independent floor, with the payload index or not, on a SQLite file or (`url`) a PostgreSQL database. */
  const floor = async (name: string, fts: boolean, url?: string): Promise<Target> => {
    const svc = { id: `svc_${"0f".repeat(16)}`, secret: `whsec_${"b".repeat(32)}` };
    const ref = await startBaseline(
      "bench/floor-ingest-bare.ts",
      {
        ...(url ? { FLOOR_DATABASE_URL: url } : { FLOOR_DATABASE: join(workDir, `${name}.sqlite`) }),
        FLOOR_SERVICE_ID: svc.id,
        FLOOR_SECRET: svc.secret,
        FLOOR_TOLERANCE_SECONDS: BENCH_TOLERANCE_SECONDS,
        ...(fts && { FLOOR_FTS: "1" }),
      },
      name,
    );
    floors.push(ref);
    await probeIngest(`${ref.url}/v1/ingest/${svc.id}`, svc.secret);
    const pool = join(workDir, `${name}.pool`);
    writePool(pool, `/v1/ingest/${svc.id}`, svc.secret, settings.poolSize);
    const index = url ? " + pg_trgm GIN index" : " + FTS5 trigram index";
    return ingestTarget(`independent floor${url ? " on PostgreSQL" : ""}${fts ? index : ""}`, ref.url, pool);
  };
  const stopFloors = async () => {
    for (const ref of floors.splice(0)) await stop(ref.child);
  };
  await scenario(18, "Signed ingest with the payload index and the service stats on vs off", async () => {
    /** A running twin with its own database, service and signed pool. */
    const twin = async (s: IntakeSpec): Promise<{ intake: RunningIntake; target: (label: string) => Target }> => {
      const boot = await bootstrap(s);
      const svc = await serviceOf(s, boot, "bench-options");
      const pool = join(workDir, `${s.name}.pool`);
      writePool(pool, `/v1/ingest/${svc.id}`, svc.secret, settings.poolSize);
      const intake = await start(s);
      return { intake, target: (label) => ingestTarget(label, intake.url, pool) };
    };
    const group = { INTAKE_INGEST_COMMIT: "group" };
    const plain = await twin(spec("options-plain", group));
    const searching = await twin(spec("options-search", { ...group, INTAKE_EVENT_SEARCH: "true" }));
    const uncounted = await twin(spec("options-stats-off", { ...group, INTAKE_SERVICE_STATS: "false" }));
    try {
      const bareFts = await floor("floor-bare-fts", true);
      const bare = await floor("floor-bare-plain", false);
      const [[searchOn, searchOff], [ftsFloor, plainFloor], [statsOn, statsOff]] = (await sideBySide(
        18,
        [
          [searching.target("Intake, INTAKE_EVENT_SEARCH=true"), plain.target("Intake, search off, beside")],
          [bareFts, bare],
          [plain.target("Intake, stats on (default)"), uncounted.target("Intake, INTAKE_SERVICE_STATS=false, beside")],
        ],
        ingestPairPlan,
      )) as [[Series, Series], [Series, Series], [Series, Series]];
      const floorRatio = pairedRatio(ftsFloor, plainFloor);
      rows.push({
        scenario: 18,
        title: "Signed ingest, INTAKE_EVENT_SEARCH=true vs false, SQLite FULL, group commit",
        goal: `≥ ${SEARCH_GOAL.toFixed(2)}×`,
        measured: beside(searchOn, searchOff),
        status: againstFloor([pairedRatio(searchOn, searchOff) >= SEARCH_GOAL, floorRatio >= SEARCH_GOAL]),
      });
      rows.push({
        scenario: 18,
        title: "… its floor: the independent floor with an FTS5 trigram index vs without",
        goal: "(reported)",
        measured: beside(ftsFloor, plainFloor),
        status: "reported",
      });
      rows.push({
        scenario: 18,
        title: "Signed ingest, INTAKE_SERVICE_STATS=true (default) vs false, SQLite FULL, group commit",
        goal: `≥ ${STATS_GOAL.toFixed(2)}×`,
        measured: beside(statsOn, statsOff),
        status: pairedRatio(statsOn, statsOff) >= STATS_GOAL ? "met" : "missed",
      });
    } finally {
      await stopFloors();
      for (const t of [plain, searching, uncounted]) await stopIntake(t.intake);
    }

    // PostgreSQL: Intake with and without the index, and the floor with and without it, each on
    // a scratch database of its own.
    const databases: ScratchDatabase[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const db = await createScratchDatabase();
        if ("unreachable" in db) {
          h.postgresSkipped(18, "Signed ingest, search on vs off, PostgreSQL", "≥ 0.80×", db.unreachable);
          return;
        }
        databases.push(db);
      }
      const [off, on, floorFtsDb, floorPlainDb] = databases as [
        ScratchDatabase,
        ScratchDatabase,
        ScratchDatabase,
        ScratchDatabase,
      ];
      const pgOff = await twin(spec("options-pg-search-off", { ...group, DATABASE_URL: off.url }));
      const pgOn = await twin(
        spec("options-pg-search-on", { ...group, DATABASE_URL: on.url, INTAKE_EVENT_SEARCH: "true" }),
      );
      try {
        const pgFts = await floor("floor-bare-pg-fts", true, floorFtsDb.url);
        const pgPlain = await floor("floor-bare-pg-plain", false, floorPlainDb.url);
        const [[a, b], [ftsFloor, plainFloor]] = (await sideBySide(
          18,
          [
            [
              pgOn.target("Intake on PostgreSQL, INTAKE_EVENT_SEARCH=true"),
              pgOff.target("Intake on PostgreSQL, search off, beside"),
            ],
            [pgFts, pgPlain],
          ],
          ingestPairPlan,
        )) as [[Series, Series], [Series, Series]];
        const floorRatio = pairedRatio(ftsFloor, plainFloor);
        rows.push({
          scenario: 18,
          title: "Signed ingest, INTAKE_EVENT_SEARCH=true vs false, PostgreSQL, group commit",
          goal: `≥ ${SEARCH_GOAL.toFixed(2)}×`,
          measured: beside(a, b),
          status: againstFloor([pairedRatio(a, b) >= SEARCH_GOAL, floorRatio >= SEARCH_GOAL]),
        });
        rows.push({
          scenario: 18,
          title: "… its floor: the independent floor on PostgreSQL with a pg_trgm GIN index vs without",
          goal: "(reported)",
          measured: beside(ftsFloor, plainFloor),
          status: "reported",
        });
      } finally {
        await stopFloors();
        await stopIntake(pgOn.intake);
        await stopIntake(pgOff.intake);
      }
    } finally {
      for (const db of databases) await db.drop();
    }
  });
}
