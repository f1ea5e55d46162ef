/**
 * Scenario 13: signed ingest during a retention sweep against no retention, SQLite and PostgreSQL.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Harness, sqlitePath, type Target } from "../lib/harness.ts";
import { bootstrap, type IntakeSpec } from "../lib/intake.ts";
import { writePool } from "../lib/pool.ts";
import { createScratchDatabase } from "../lib/postgres.ts";
import { fmtMs, fmtRps, type Row, type Series, summarize } from "../lib/report.ts";
import {
  type ExpiredCounter,
  postgresCounter,
  seedExpiredPostgres,
  seedExpiredSqlite,
  sqliteCounter,
} from "../lib/sweep.ts";

/**
 * Scenario 13, one store: signed ingest on `on` (INTAKE_EVENT_RETENTION_DAYS set, expired rows
 * seeded) against `off` (the same rows, no retention), interleaved. Each run starts its Intake
 * afresh and stops it after, so a sweep runs only while its own process is measured (never
 * stealing CPU from the other's rounds): a fresh `on` process resumes the sweep a second after
 * it starts. The `on` run waits until the expired count drops (the sweep is deleting), warms
 * up, and measures; the count before and after each measured window is how many rows the
 * sweep deleted in it, and a window whose sweep had stopped (nothing deleted, or nothing left
 * at its end) is reported as a problem: it would prove nothing.
 */
async function sweepComparison(
  h: Harness,
  store: string,
  off: IntakeSpec,
  on: IntakeSpec,
  pool: string,
  counter: ExpiredCounter,
): Promise<Row> {
  const { settings, problems, log, ingestTarget, interleave, ratioRow, start, stopIntake } = h;
  const windows: Array<{ deleted: number; left: number }> = [];
  const target = (label: string, s: IntakeSpec, sweeping: boolean): Target => ({
    label,
    async run(durationS) {
      const intake = await start(s);
      try {
        const load = ingestTarget(label, intake.url, pool);
        const initial = sweeping ? await counter.count() : 0;
        // A fresh process: the JIT warms up outside the measured window, on both sides alike
        // (1 s is enough for that and leaves more of the seeded rows to the measured windows).
        // The sweep resumes about a second after the process starts, so it starts during this
        // second rather than in a wait of its own before it.
        await load.run(1);
        if (sweeping) {
          const until = performance.now() + 30_000;
          while ((await counter.count()) >= initial) {
            if (initial === 0 || performance.now() > until)
              throw new Error(`${store}: the retention sweep did not start (${initial} expired rows)`);
            await Bun.sleep(100);
          }
        }
        const before = sweeping ? await counter.count() : 0;
        const sample = await load.run(durationS);
        if (sweeping) {
          const left = await counter.count();
          windows.push({ deleted: before - left, left });
        }
        return sample;
      } finally {
        await stopIntake(intake);
      }
    },
  });
  const [without, during] = (await interleave(13, [
    target(`Intake ingest, ${store}, no retention`, off, false),
    target(`Intake ingest, ${store}, during a retention sweep`, on, true),
  ])) as [Series, Series];
  // The first window is the harness's warm-up run: not measured, so not judged either (its
  // sweep may still be in the long pause after a first batch on a freshly copied file).
  const measured = windows.slice(1);
  for (const w of measured) {
    if (w.deleted <= 0 || w.left === 0)
      problems.push(
        `scenario 13 ${store}: the sweep was not deleting through a measured window (${w.deleted} deleted, ${w.left} left); seed more expired events`,
      );
  }
  const deleted = measured.reduce((sum, w) => sum + w.deleted, 0);
  const seconds = measured.length * settings.durationS;
  log(
    `  ${store}: the sweep deleted ${deleted} expired rows in ${measured.length} measured windows (${fmtRps(deleted / seconds)} rows/s); ${measured.at(-1)?.left ?? "?"} left`,
  );
  const row = ratioRow(
    13,
    `Signed ingest during a retention sweep vs no retention, ${store} (128 conns)`,
    0.8,
    during,
    without,
  );
  const d = summarize(during);
  return {
    ...row,
    measured: `${row.measured}, p99 ${fmtMs(d.p99Us)} vs ${fmtMs(summarize(without).p99Us)} ms; sweep deleted ${deleted.toLocaleString("en-US")} rows in the measured windows (${fmtRps(deleted / seconds)} rows/s), ${(measured.at(-1)?.left ?? 0).toLocaleString("en-US")} still expired at the end`,
  };
}

export async function run(h: Harness): Promise<void> {
  const { settings, rows, log, workDir, scenario, spec, serviceOf } = h;
  await scenario(13, "Signed ingest during a retention sweep vs without retention (SQLite, PostgreSQL)", async () => {
    // SQLite: one data file seeded, copied whole for the twin that sweeps.
    const offSpec = spec("sweep-sqlite-off", { INTAKE_INGEST_COMMIT: "group" });
    const onSpec = spec("sweep-sqlite-on", { INTAKE_INGEST_COMMIT: "group", INTAKE_EVENT_RETENTION_DAYS: "30" });
    const boot = await bootstrap(offSpec);
    const svc = await serviceOf(offSpec, boot, "bench-sweep");
    const seconds = seedExpiredSqlite(sqlitePath(offSpec), {
      tenantId: boot.tenantId,
      serviceId: svc.id.slice("svc_".length),
      count: settings.expiredEvents.sqlite,
    });
    mkdirSync(onSpec.dataDir, { recursive: true, mode: 0o700 });
    copyFileSync(sqlitePath(offSpec), sqlitePath(onSpec));
    log(`  seeded ${settings.expiredEvents.sqlite} expired events (SQLite) in ${seconds.toFixed(1)} s`);
    const file = join(workDir, "sweep-sqlite.pool");
    writePool(file, `/v1/ingest/${svc.id}`, svc.secret, settings.poolSize);
    const counter = sqliteCounter(sqlitePath(onSpec));
    try {
      rows.push(await sweepComparison(h, "SQLite FULL, group commit", offSpec, onSpec, file, counter));
    } finally {
      await counter.close();
    }

    const db = await createScratchDatabase();
    if ("unreachable" in db) {
      h.postgresSkipped(13, "Signed ingest during a retention sweep, PostgreSQL", "≥ 0.80×", db.unreachable);
      return;
    }
    let twin: Awaited<ReturnType<typeof createScratchDatabase>> | null = null;
    try {
      const pgOff = spec("sweep-postgres-off", { DATABASE_URL: db.url, INTAKE_INGEST_COMMIT: "group" });
      const pgBoot = await bootstrap(pgOff);
      const pgSvc = await serviceOf(pgOff, pgBoot, "bench-sweep");
      const pgSeconds = await seedExpiredPostgres(db.url, {
        tenantId: pgBoot.tenantId,
        serviceId: pgSvc.id.slice("svc_".length),
        count: settings.expiredEvents.postgres,
      });
      log(`  seeded ${settings.expiredEvents.postgres} expired events (PostgreSQL) in ${pgSeconds.toFixed(1)} s`);
      twin = await createScratchDatabase(db.url);
      if ("unreachable" in twin) throw new Error(`could not copy the seeded database: ${twin.unreachable}`);
      const pgOn = spec("sweep-postgres-on", {
        DATABASE_URL: twin.url,
        INTAKE_INGEST_COMMIT: "group",
        INTAKE_EVENT_RETENTION_DAYS: "30",
      });
      const pgFile = join(workDir, "sweep-postgres.pool");
      writePool(pgFile, `/v1/ingest/${pgSvc.id}`, pgSvc.secret, settings.poolSize);
      const pgCounter = postgresCounter(twin.url);
      try {
        rows.push(await sweepComparison(h, "PostgreSQL, group commit", pgOff, pgOn, pgFile, pgCounter));
      } finally {
        await pgCounter.close();
      }
    } finally {
      if (twin && !("unreachable" in twin)) await twin.drop();
      await db.drop();
    }
  });
}
