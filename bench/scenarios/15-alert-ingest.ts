/**
 * Scenario 15 (SPEC §17's cost goal): signed alert-event ingest against signed plain-event
 * ingest, SQLite FULL and PostgreSQL, group commit, 1 KiB events, 128 connections (goal ≥ 0.85×
 * on each store). An alert event costs what a plain one does plus its incident effect in the
 * same commit (docs/incidents.md, "Wiring as built"): the open incidents of the batch's keys read,
 * the incidents, their change rows and the events' `incident_id` written. The alert pool
 * (bench/lib/alert-pool.ts) opens, joins, raises and resolves incidents on 100 keys all the time.
 *
 * Two Intakes per store, each on a store of its own, one taking plain events and one alert
 * events, side by side (a variant of itself: see `sideBySide`), with each process's CPU per event
 * over the rounds reported beside the ratio (on PostgreSQL that leaves out the database's).
 */
import { join } from "node:path";
import { writeAlertPool } from "../lib/alert-pool.ts";
import { type Harness, withCpu } from "../lib/harness.ts";
import { bootstrap, type IntakeSpec } from "../lib/intake.ts";
import { readPool, writePool } from "../lib/pool.ts";
import { createScratchDatabase, type ScratchDatabase } from "../lib/postgres.ts";
import { median, type Row, type Series } from "../lib/report.ts";

/** The pool's first alert event must be answered 202 with its incident before the load. */
async function probeAlert(url: string, pool: string): Promise<void> {
  const [first] = readPool(pool);
  if (!first?.signature) throw new Error("empty alert pool");
  const res = await fetch(`${url}${first.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-signature": first.signature },
    body: first.body,
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { incident_id?: unknown };
  if (res.status !== 202 || typeof body.incident_id !== "string")
    throw new Error(`alert probe: expected 202 with an incident_id, got ${res.status} ${JSON.stringify(body)}`);
}

async function compareIngest(h: Harness, store: string, plainSpec: IntakeSpec, alertSpec: IntakeSpec): Promise<Row> {
  const { settings, workDir, ingestTarget, sideBySide, ingestPairPlan, besideRow, start, stopIntake, serviceOf } = h;
  const plainBoot = await bootstrap(plainSpec);
  const alertBoot = await bootstrap(alertSpec);
  const plainSvc = await serviceOf(plainSpec, plainBoot, "bench-plain");
  const alertSvc = await serviceOf(alertSpec, alertBoot, "bench-alerts");
  const plainPool = join(workDir, `${plainSpec.name}.pool`);
  const alertPool = join(workDir, `${alertSpec.name}.pool`);
  writePool(plainPool, `/v1/ingest/${plainSvc.id}`, plainSvc.secret, settings.poolSize);
  writeAlertPool(alertPool, `/v1/ingest/${alertSvc.id}`, alertSvc.secret, settings.poolSize);
  const plain = await start(plainSpec);
  const alert = await start(alertSpec);
  try {
    await probeAlert(alert.url, alertPool);
    const plainCpu: number[] = [];
    const alertCpu: number[] = [];
    const [[alerts, plains]] = (await sideBySide(
      15,
      [
        [
          withCpu(ingestTarget(`Intake alert-event ingest, ${store}`, alert.url, alertPool), alert.pid, alertCpu),
          withCpu(ingestTarget(`Intake plain-event ingest, ${store}`, plain.url, plainPool), plain.pid, plainCpu),
        ],
      ],
      ingestPairPlan,
    )) as [[Series, Series]];
    const row = besideRow(
      15,
      `Signed alert-event ingest vs plain-event ingest, ${store} (128 conns)`,
      0.85,
      alerts,
      plains,
    );
    // The first entry of each is the warm-up's.
    const [a, p] = [median(alertCpu.slice(1)), median(plainCpu.slice(1))];
    return { ...row, measured: `${row.measured}; Intake's CPU per event ${a.toFixed(1)} vs ${p.toFixed(1)} µs` };
  } finally {
    await stopIntake(plain);
    await stopIntake(alert);
  }
}

export async function run(h: Harness): Promise<void> {
  const { rows, log, scenario, spec } = h;
  await scenario(15, "Signed alert-event ingest vs plain-event ingest (SQLite, PostgreSQL)", async () => {
    rows.push(
      await compareIngest(
        h,
        "SQLite FULL, group commit",
        spec("alerts-sqlite-plain", { INTAKE_INGEST_COMMIT: "group" }),
        spec("alerts-sqlite-alert", { INTAKE_INGEST_COMMIT: "group" }),
      ),
    );

    const databases: ScratchDatabase[] = [];
    try {
      for (let k = 0; k < 2; k++) {
        const db = await createScratchDatabase();
        if ("unreachable" in db) {
          const why = `PostgreSQL at 127.0.0.1:5432 unreachable (${db.unreachable})`;
          log(`  SKIPPED (PostgreSQL): ${why}`);
          rows.push({
            scenario: 15,
            title: "Signed alert-event ingest vs plain-event ingest, PostgreSQL",
            goal: "≥ 0.85×",
            measured: why,
            status: "skipped",
          });
          return;
        }
        databases.push(db);
      }
      const [plainDb, alertDb] = databases as [ScratchDatabase, ScratchDatabase];
      rows.push(
        await compareIngest(
          h,
          "PostgreSQL, group commit",
          spec("alerts-postgres-plain", { DATABASE_URL: plainDb.url, INTAKE_INGEST_COMMIT: "group" }),
          spec("alerts-postgres-alert", { DATABASE_URL: alertDb.url, INTAKE_INGEST_COMMIT: "group" }),
        ),
      );
    } finally {
      for (const db of databases) await db.drop();
    }
  });
}
