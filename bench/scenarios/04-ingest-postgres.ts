/**
 * Scenario 4: signed ingest on PostgreSQL, group commit, against 20,000 events/s and its floor
 * (bench/floor-ingest.ts on the same database).
 */
import { join } from "node:path";
import type { Harness, Reference } from "../lib/harness.ts";
import { bootstrap, createService } from "../lib/intake.ts";
import { writePool } from "../lib/pool.ts";
import { createScratchDatabase } from "../lib/postgres.ts";
import { stop } from "../lib/procs.ts";
import { fmtMs, fmtRatio, fmtRps, pairedRatio, type Series, summarize } from "../lib/report.ts";

export async function run(h: Harness): Promise<void> {
  const {
    settings,
    rows,
    workDir,
    ingestTarget,
    interleave,
    scenario,
    againstFloor,
    probeIngest,
    spec,
    start,
    stopIntake,
    startIngestFloor,
    INGEST_FLOOR_LABEL,
  } = h;
  await scenario(4, "Signed ingest on PostgreSQL (128 conns)", async () => {
    const db = await createScratchDatabase();
    if ("unreachable" in db) {
      h.postgresSkipped(4, "Signed ingest on PostgreSQL", "≥ 20k events/s", db.unreachable);
      return;
    }
    try {
      const pgSpec = spec("ingest-postgres", { DATABASE_URL: db.url, INTAKE_INGEST_COMMIT: "group" });
      const boot = await bootstrap(pgSpec);
      const intake = await start(pgSpec);
      let floor: Reference | null = null;
      try {
        const svc = await createService(intake.url, boot.token, "bench-ingest");
        const file = join(workDir, "ingest-postgres.pool");
        writePool(file, `/v1/ingest/${svc.id}`, svc.secret, settings.poolSize);
        await probeIngest(`${intake.url}/v1/ingest/${svc.id}`, svc.secret);
        // The least work the contract requires, hand-written on the same database.
        floor = await startIngestFloor(db.url, svc);
        const [floorSeries, pg] = (await interleave(4, [
          ingestTarget(INGEST_FLOOR_LABEL, floor.url, file),
          ingestTarget("Intake ingest on PostgreSQL, group commit", intake.url, file),
        ])) as [Series, Series];
        const s = summarize(pg);
        const f = summarize(floorSeries);
        rows.push({
          scenario: 4,
          title: "Signed ingest on PostgreSQL, group commit (128 conns)",
          goal: "≥ 20,000 events/s",
          measured: `${fmtRps(s.rps)} events/s, p99 ${fmtMs(s.p99Us)} ms`,
          status: againstFloor([s.rps >= 20_000, f.rps >= 20_000]),
        });
        rows.push({
          scenario: 4,
          title: "… the hand-written floor on the same database (bench/floor-ingest.ts)",
          goal: "(reported)",
          measured: `${fmtRps(f.rps)} events/s, p99 ${fmtMs(f.p99Us)} ms; Intake vs floor ${fmtRatio(pairedRatio(pg, floorSeries))}`,
          status: "reported",
        });
      } finally {
        if (floor) await stop(floor.child);
        await stopIntake(intake);
      }
    } finally {
      await db.drop();
    }
  });
}
