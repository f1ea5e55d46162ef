/**
 * The processes scenarios 1, 2 and 6 share: one Intake on a SQLite file with the in-process
 * cache (10,100 services seeded for 6), and for 2 its variants (INTAKE_METRICS=false, an API
 * rate limit configured but unspent) and a second floor process. The variants serve copies of
 * the same data: one `serve` holds a SQLite store (src/serving.ts).
 */
import { Database } from "bun:sqlite";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Harness, type Reference, sqlitePath, UNSPENT_LIMIT } from "../lib/harness.ts";
import { type Bootstrapped, bootstrap, type IntakeSpec, type RunningIntake } from "../lib/intake.ts";
import { stop } from "../lib/procs.ts";
import { seedServices } from "../lib/seed.ts";

export interface ReadProcesses {
  baseline: Reference | null;
  boot: Bootstrapped;
  /** The seeded services' ids, newest first (scenario 6). */
  idsNewestFirst: string[];
  intake: RunningIntake;
  metricsOff: RunningIntake | null;
  limited: RunningIntake | null;
  /** Scenario 2's floor served from a process running Intake's app (--floor-in-intake). */
  floorInIntake: Reference | null;
  /** A second floor process: the floor with the RateLimit fields runs beside the floor without. */
  floorBeside: Reference | null;
  /** Every server of the read scenarios, to pin. */
  readPids: number[];
  stop(): Promise<void>;
}

/** `spec` with a data dir of its own holding a copy of `from`'s store (checkpointed first). */
function copyOf(from: IntakeSpec, spec: IntakeSpec): IntakeSpec {
  const db = new Database(sqlitePath(from));
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  mkdirSync(spec.dataDir, { recursive: true, mode: 0o700 });
  copyFileSync(sqlitePath(from), sqlitePath(spec));
  return spec;
}

export async function startReadProcesses(h: Harness, baseline: Reference | null): Promise<ReadProcesses> {
  const { settings, wanted, keys, log, spec, start, stopIntake, startBaseline } = h;
  const readSpec = spec("read");
  const boot = await bootstrap(readSpec);
  let idsNewestFirst: string[] = [];
  if (wanted(6)) {
    const seeded = seedServices({
      path: sqlitePath(readSpec),
      tenantId: boot.tenantId,
      count: settings.servicesSeeded,
      secretsKey: keys.secretsKey,
    });
    idsNewestFirst = seeded.idsNewestFirst;
    log(`seeded ${settings.servicesSeeded} services in ${seeded.seconds.toFixed(1)} s`);
  }
  const variant = (name: string, env: Record<string, string>) =>
    start(copyOf(readSpec, { ...readSpec, name, dataDir: join(h.workDir, name), env: { ...readSpec.env, ...env } }));
  // Copied before Intake starts on it, the store's file is at rest.
  // The same data, served with INTAKE_METRICS=false: the cost of metrics (scenario 2).
  const metricsOff = wanted(2) ? await variant("read-metrics-off", { INTAKE_METRICS: "false" }) : null;
  // The same data with INTAKE_RATE_LIMIT_API configured but unspent: the cost of rate limits (2).
  const limited = wanted(2) ? await variant("read-limited", { INTAKE_RATE_LIMIT_API: UNSPENT_LIMIT }) : null;
  const intake = await start(readSpec);
  // Off by default: the full table's 15 minutes have no room for it.
  const floorInIntake =
    wanted(2) && settings.floorInIntake
      ? await startBaseline("bench/baseline.ts", { FLOOR_IN_INTAKE: "1" }, "floor-in-intake")
      : null;
  // Each floor in a process of its own, as Intake's pairs are (see `sideBySide`).
  const floorBeside = wanted(2) ? await startBaseline("bench/baseline.ts", {}, "baseline-beside") : null;
  const readPids = [
    baseline?.child.pid,
    floorBeside?.child.pid,
    intake.pid,
    metricsOff?.pid,
    limited?.pid,
    floorInIntake?.child.pid,
  ].filter((pid): pid is number => pid !== undefined);
  return {
    baseline,
    boot,
    idsNewestFirst,
    intake,
    metricsOff,
    limited,
    floorInIntake,
    floorBeside,
    readPids,
    async stop() {
      await stopIntake(intake);
      if (metricsOff) await stopIntake(metricsOff);
      if (limited) await stopIntake(limited);
      if (floorInIntake) await stop(floorInIntake.child);
      if (floorBeside) await stop(floorBeside.child);
    },
  };
}
