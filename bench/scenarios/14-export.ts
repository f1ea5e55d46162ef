/**
 * Scenario 14 (SPEC §21, docs/export.md): signed ingest with the export to NATS JetStream on
 * against the same Intake with it off, SQLite and PostgreSQL (goal ≥ 0.90×), and how far the
 * export runs behind at that full rate: the p99 of the seconds between an event's `received_at`
 * and its message reaching NATS (every tenth message seen by a subscriber of `intake.*.events.>`
 * during the measured windows), and the time the export takes to catch up once the load stops
 * (read from `intake_export_lag_events`; a run that does not reach 0 in 60 s is a problem).
 *
 * NATS is a `nats-server -js` of the scenario's own (a free port, a store directory in the run's
 * work dir), so the machine's shared one and any stream on it stay untouched. Each run starts its
 * Intake afresh and stops it after, like scenario 13: the `on` twin's export keeps its position
 * (and its stream) from run to run.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import type { Subprocess } from "bun";
import type { Harness, Target } from "../lib/harness.ts";
import { bootstrap, type IntakeSpec } from "../lib/intake.ts";
import { writePool } from "../lib/pool.ts";
import { createScratchDatabase } from "../lib/postgres.ts";
import { freePort, sleep, stop, track } from "../lib/procs.ts";
import { fmtMs, type Row, type Series, summarize } from "../lib/report.ts";

const NATS_SERVER = process.env.INTAKE_NATS_SERVER ?? "/usr/sbin/nats-server";

async function startNats(dir: string): Promise<{ url: string; child: Subprocess }> {
  mkdirSync(dir, { recursive: true });
  const port = freePort();
  const child = track(
    Bun.spawn([NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir], {
      stdout: "ignore",
      stderr: "ignore",
    }),
  );
  const url = `nats://127.0.0.1:${port}`;
  const until = performance.now() + 10_000;
  for (;;) {
    try {
      const nc = await connect({ servers: url, timeout: 1_000 });
      await nc.close();
      return { url, child };
    } catch (error) {
      if (performance.now() > until) throw new Error(`nats-server did not start: ${String(error)}`);
      await sleep(100);
    }
  }
}

/** Seconds behind of every tenth event message NATS delivers while `recording`. */
async function lagSampler(url: string) {
  const nc = await connect({ servers: url });
  const lags: number[] = [];
  const decoder = new TextDecoder();
  let recording = false;
  let seen = 0;
  nc.subscribe("intake.*.events.>", {
    callback: (_error, message) => {
      if (!recording || seen++ % 10 !== 0) return;
      const at = /"received_at":"([^"]+)"/.exec(decoder.decode(message.data.subarray(0, 256)))?.[1];
      if (at) lags.push((Date.now() - Date.parse(at)) / 1000);
    },
  });
  return {
    lags,
    record(on: boolean) {
      recording = on;
    },
    close: () => nc.close(),
  };
}

async function exportLag(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const value = /^intake_export_lag_events (\S+)$/m.exec(text)?.[1];
  return value === undefined ? Number.NaN : Number(value);
}

function p99(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] as number;
}

async function exportComparison(
  h: Harness,
  store: string,
  off: IntakeSpec,
  on: IntakeSpec,
  pools: { off: string; on: string },
  natsUrl: string,
): Promise<Row> {
  const { problems, log, ingestTarget, interleave, ratioRow, start, stopIntake } = h;
  const sampler = await lagSampler(natsUrl);
  const catchUps: number[] = [];
  const target = (label: string, s: IntakeSpec, exporting: boolean): Target => ({
    label,
    async run(durationS) {
      const intake = await start(s);
      try {
        const load = ingestTarget(label, intake.url, exporting ? pools.on : pools.off);
        // A fresh process: the JIT (and the export's catch-up after a restart) outside the window.
        await load.run(1);
        sampler.record(exporting);
        const sample = await load.run(durationS);
        sampler.record(false);
        if (exporting) {
          const stopped = performance.now();
          let lag = await exportLag(intake.url);
          while (lag !== 0 && performance.now() - stopped < 60_000) {
            await sleep(100);
            lag = await exportLag(intake.url);
          }
          if (lag !== 0) problems.push(`scenario 14 ${store}: the export did not catch up in 60 s (lag ${lag})`);
          catchUps.push((performance.now() - stopped) / 1000);
        }
        return sample;
      } finally {
        await stopIntake(intake);
      }
    },
  });
  try {
    const [without, withExport] = (await interleave(14, [
      target(`Intake ingest, ${store}, export off`, off, false),
      target(`Intake ingest, ${store}, export to NATS on`, on, true),
    ])) as [Series, Series];
    const lagP99 = p99(sampler.lags);
    const catchUp = Math.max(0, ...catchUps);
    log(
      `  ${store}: export lag p99 ${lagP99.toFixed(3)} s over ${sampler.lags.length} sampled messages; caught up at most ${catchUp.toFixed(1)} s after the load`,
    );
    if (sampler.lags.length === 0) problems.push(`scenario 14 ${store}: no exported message was seen during the load`);
    const row = ratioRow(
      14,
      `Signed ingest with the export to NATS on vs off, ${store} (128 conns)`,
      0.9,
      withExport,
      without,
    );
    return {
      ...row,
      measured: `${row.measured}, p99 ${fmtMs(summarize(withExport).p99Us)} vs ${fmtMs(summarize(without).p99Us)} ms; export lag p99 ${lagP99.toFixed(3)} s behind, caught up ≤ ${catchUp.toFixed(1)} s after the load`,
    };
  } finally {
    await sampler.close();
  }
}

export async function run(h: Harness): Promise<void> {
  const { rows, log, workDir, scenario, spec, serviceOf } = h;
  await scenario(14, "Signed ingest with the export to NATS JetStream on vs off (SQLite, PostgreSQL)", async () => {
    if (Bun.file(NATS_SERVER).size === 0) {
      const why = `no nats-server at ${NATS_SERVER} (apt-get install nats-server)`;
      log(`  SKIPPED: ${why}`);
      rows.push({
        scenario: 14,
        title: "Signed ingest with the export on vs off",
        goal: "≥ 0.90×",
        measured: why,
        status: "skipped",
      });
      return;
    }
    const nats = await startNats(join(workDir, "nats"));
    try {
      // One stream for both stores: two streams may not share the subjects `intake.>`.
      const exportEnv = { INTAKE_EXPORT_NATS_URL: nats.url, INTAKE_EXPORT_NATS_STREAM: "BENCH" };
      const offSpec = spec("export-sqlite-off", { INTAKE_INGEST_COMMIT: "group" });
      const onSpec = spec("export-sqlite-on", {
        INTAKE_INGEST_COMMIT: "group",
        ...exportEnv,
      });
      // Each twin has its own database, so its own service and signed pool.
      const offBoot = await bootstrap(offSpec);
      const onBoot = await bootstrap(onSpec);
      const offSvc = await serviceOf(offSpec, offBoot, "bench-export");
      const onSvc = await serviceOf(onSpec, onBoot, "bench-export");
      const offPool = join(workDir, "export-sqlite-off.pool");
      const onPool = join(workDir, "export-sqlite-on.pool");
      writePool(offPool, `/v1/ingest/${offSvc.id}`, offSvc.secret, h.settings.poolSize);
      writePool(onPool, `/v1/ingest/${onSvc.id}`, onSvc.secret, h.settings.poolSize);
      rows.push(
        await exportComparison(h, "SQLite FULL, group commit", offSpec, onSpec, { off: offPool, on: onPool }, nats.url),
      );

      const db = await createScratchDatabase();
      const twin = "unreachable" in db ? db : await createScratchDatabase();
      if ("unreachable" in db || "unreachable" in twin) {
        h.postgresSkipped(
          14,
          "Signed ingest with the export on vs off, PostgreSQL",
          "≥ 0.90×",
          "unreachable" in db ? db.unreachable : "",
        );
        if (!("unreachable" in db)) await db.drop();
        return;
      }
      try {
        const pgOff = spec("export-postgres-off", { DATABASE_URL: db.url, INTAKE_INGEST_COMMIT: "group" });
        const pgOn = spec("export-postgres-on", {
          DATABASE_URL: twin.url,
          INTAKE_INGEST_COMMIT: "group",
          ...exportEnv,
        });
        const pgOffBoot = await bootstrap(pgOff);
        const pgOnBoot = await bootstrap(pgOn);
        const pgOffSvc = await serviceOf(pgOff, pgOffBoot, "bench-export");
        const pgOnSvc = await serviceOf(pgOn, pgOnBoot, "bench-export");
        const pgOffPool = join(workDir, "export-postgres-off.pool");
        const pgOnPool = join(workDir, "export-postgres-on.pool");
        writePool(pgOffPool, `/v1/ingest/${pgOffSvc.id}`, pgOffSvc.secret, h.settings.poolSize);
        writePool(pgOnPool, `/v1/ingest/${pgOnSvc.id}`, pgOnSvc.secret, h.settings.poolSize);
        rows.push(
          await exportComparison(
            h,
            "PostgreSQL, group commit",
            pgOff,
            pgOn,
            { off: pgOffPool, on: pgOnPool },
            nats.url,
          ),
        );
      } finally {
        await twin.drop();
        await db.drop();
      }
    } finally {
      await stop(nats.child);
    }
  });
}
