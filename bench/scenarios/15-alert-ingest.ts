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
 *
 * Each store's goal has a floor, run side by side in the same rounds: the independent floor
 * (bench/floor-ingest-bare.ts, on a SQLite file or, with FLOOR_DATABASE_URL, a database of its
 * own) with FLOOR_ALERTS=1 taking the alert pool vs without taking the plain one. When it misses
 * 0.85× itself, no implementation of §17 could meet the goal on this machine in this run
 * ("floor misses"). Its CPU per event, like Intake's, leaves out PostgreSQL's.
 */
import { join } from "node:path";
import { writeAlertPool } from "../lib/alert-pool.ts";
import { type Harness, type Reference, type Target, withCpu } from "../lib/harness.ts";
import { BENCH_TOLERANCE_SECONDS, bootstrap, type IntakeSpec } from "../lib/intake.ts";
import { readPool, writePool } from "../lib/pool.ts";
import { createScratchDatabase, type ScratchDatabase } from "../lib/postgres.ts";
import { stop } from "../lib/procs.ts";
import { againstFloor, beside, median, pairedRatio, type Row, type Series } from "../lib/report.ts";

const GOAL = 0.85;
const cpuOf = (cpu: number[]) => median(cpu.slice(1)).toFixed(1); // the first entry is the warm-up's

/** Where a floor writes: `FLOOR_DATABASE` (SQLite, named by the floor) or `FLOOR_DATABASE_URL`. */
type FloorStore = { sqlite: true } | { url: string };

/** The independent floor with or without its alert work, started, probed, and its measured target. */
async function floor(
  h: Harness,
  store: FloorStore,
  alerts: boolean,
  cpu: number[],
  refs: Reference[],
): Promise<Target> {
  const name = `floor-${"url" in store ? "postgres" : "sqlite"}-${alerts ? "alerts" : "plain"}`;
  const svc = { id: `svc_${"0f".repeat(16)}`, secret: `whsec_${"b".repeat(32)}` };
  const ref = await h.startBaseline(
    "bench/floor-ingest-bare.ts",
    {
      ...("url" in store ? { FLOOR_DATABASE_URL: store.url } : { FLOOR_DATABASE: join(h.workDir, `${name}.sqlite`) }),
      FLOOR_SERVICE_ID: svc.id,
      FLOOR_SECRET: svc.secret,
      FLOOR_TOLERANCE_SECONDS: BENCH_TOLERANCE_SECONDS,
      ...(alerts && { FLOOR_ALERTS: "1" }),
    },
    name,
  );
  refs.push(ref);
  const pool = join(h.workDir, `${name}.pool`);
  (alerts ? writeAlertPool : writePool)(pool, `/v1/ingest/${svc.id}`, svc.secret, h.settings.poolSize);
  await (alerts ? probeAlert(ref.url, pool) : h.probeIngest(`${ref.url}/v1/ingest/${svc.id}`, svc.secret));
  const label = `independent floor, ${alerts ? "alert" : "plain"} events`;
  return withCpu(h.ingestTarget(label, ref.url, pool), ref.child.pid, cpu);
}

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

async function compareIngest(
  h: Harness,
  store: string,
  plainSpec: IntakeSpec,
  alertSpec: IntakeSpec,
  floorStores?: [alerts: FloorStore, plain: FloorStore],
): Promise<Row[]> {
  const { settings, workDir, ingestTarget, sideBySide, ingestPairPlan, start, stopIntake, serviceOf } = h;
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
  const refs: Reference[] = [];
  try {
    await probeAlert(alert.url, alertPool);
    const plainCpu: number[] = [];
    const alertCpu: number[] = [];
    const floorPlainCpu: number[] = [];
    const floorAlertCpu: number[] = [];
    const pairs: Array<[Target, Target]> = [
      [
        withCpu(ingestTarget(`Intake alert-event ingest, ${store}`, alert.url, alertPool), alert.pid, alertCpu),
        withCpu(ingestTarget(`Intake plain-event ingest, ${store}`, plain.url, plainPool), plain.pid, plainCpu),
      ],
    ];
    if (floorStores) {
      const [alertStore, plainStore] = floorStores;
      pairs.push([
        await floor(h, alertStore, true, floorAlertCpu, refs),
        await floor(h, plainStore, false, floorPlainCpu, refs),
      ]);
    }
    const [[alerts, plains], floorPair] = (await sideBySide(15, pairs, ingestPairPlan)) as [
      [Series, Series],
      [Series, Series]?,
    ];
    const ratio = pairedRatio(alerts, plains);
    const row: Row = {
      scenario: 15,
      title: `Signed alert-event ingest vs plain-event ingest, ${store} (128 conns)`,
      goal: `≥ ${GOAL.toFixed(2)}×`,
      measured: `${beside(alerts, plains)}; Intake's CPU per event ${cpuOf(alertCpu)} vs ${cpuOf(plainCpu)} µs`,
      status: ratio >= GOAL ? "met" : "missed",
    };
    if (!floorPair) return [row];
    const [fa, fp] = floorPair;
    row.status = againstFloor([ratio >= GOAL, pairedRatio(fa, fp) >= GOAL]);
    const floorRow: Row = {
      scenario: 15,
      title: "… floor: alert vs plain, the independent floor (bench/floor-ingest-bare.ts, FLOOR_ALERTS=1 vs without)",
      goal: "(reported)",
      measured: `${beside(fa, fp)}; its CPU per event ${cpuOf(floorAlertCpu)} vs ${cpuOf(floorPlainCpu)} µs`,
      status: "reported",
    };
    return [row, floorRow];
  } finally {
    for (const ref of refs) await stop(ref.child);
    await stopIntake(plain);
    await stopIntake(alert);
  }
}

export async function run(h: Harness): Promise<void> {
  const { rows, scenario, spec } = h;
  await scenario(15, "Signed alert-event ingest vs plain-event ingest (SQLite, PostgreSQL)", async () => {
    rows.push(
      ...(await compareIngest(
        h,
        "SQLite FULL, group commit",
        spec("alerts-sqlite-plain", { INTAKE_INGEST_COMMIT: "group" }),
        spec("alerts-sqlite-alert", { INTAKE_INGEST_COMMIT: "group" }),
        [{ sqlite: true }, { sqlite: true }],
      )),
    );

    const databases: ScratchDatabase[] = [];
    try {
      for (let k = 0; k < 4; k++) {
        const db = await createScratchDatabase();
        if ("unreachable" in db) {
          h.postgresSkipped(
            15,
            "Signed alert-event ingest vs plain-event ingest, PostgreSQL",
            "≥ 0.85×",
            db.unreachable,
          );
          return;
        }
        databases.push(db);
      }
      const [plainDb, alertDb, floorAlertDb, floorPlainDb] = databases as ScratchDatabase[] as [
        ScratchDatabase,
        ScratchDatabase,
        ScratchDatabase,
        ScratchDatabase,
      ];
      rows.push(
        ...(await compareIngest(
          h,
          "PostgreSQL, group commit",
          spec("alerts-postgres-plain", { DATABASE_URL: plainDb.url, INTAKE_INGEST_COMMIT: "group" }),
          spec("alerts-postgres-alert", { DATABASE_URL: alertDb.url, INTAKE_INGEST_COMMIT: "group" }),
          [{ url: floorAlertDb.url }, { url: floorPlainDb.url }],
        )),
      );
    } finally {
      for (const db of databases) await db.drop();
    }
  });
}
