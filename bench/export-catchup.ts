/**
 * The export's own CPU per event, apart from ingest (scenario 14; bench/README.md): an Intake
 * with the export off takes N signed events; then it is restarted with the export on, to a
 * `nats-server -js` of this run's own, and catches up on that backlog with no load beside it.
 * Printed: Intake's CPU per exported message (every thread, /proc/<pid>/task/*\/schedstat,
 * between two reads of `intake_export_published_total`) and the nats-server's, to hold against
 * the bare publisher of bench/floor-export.ts (`--rate 0`: full pages, no pacing, as here).
 *
 * Usage: bun bench/export-catchup.ts [--n 50000] [--postgres] [--checkout <dir>] [--profile <dir>]
 * (--checkout: run `bun src/cli.ts` of another checkout, with its own `bun install`: a
 * before/after of the exporter on the same backlog size; --profile: the exporting Intake runs
 * under `bun --cpu-prof`, its profile written there, ranked by `bun bench/profile.ts`.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrap, createService, makeKeys, startIntake } from "./lib/intake.ts";
import { eventBody, signatureHeader } from "./lib/pool.ts";
import { createScratchDatabase } from "./lib/postgres.ts";
import { freePort, installCleanup, processCpuNs, sleep, stop, track } from "./lib/procs.ts";

const { values: flags } = parseArgs({
  options: {
    n: { type: "string", default: "50000" },
    postgres: { type: "boolean", default: false },
    checkout: { type: "string" },
    profile: { type: "string" },
  },
});
const total = Number(flags.n);
const NATS_SERVER = process.env.INTAKE_NATS_SERVER ?? "/usr/sbin/nats-server";

installCleanup();
const dir = mkdtempSync(join(tmpdir(), "intake-export-catchup-"));
const db = flags.postgres ? await createScratchDatabase() : null;
if (db && "unreachable" in db) throw new Error(`PostgreSQL unreachable: ${db.unreachable}`);
const natsPort = freePort();
const nats = track(
  Bun.spawn([NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", String(natsPort), "-sd", join(dir, "nats")], {
    stdout: "ignore",
    stderr: "ignore",
  }),
);
try {
  const base = {
    name: "catchup",
    dataDir: join(dir, "intake"),
    keys: makeKeys(),
    checkout: flags.checkout,
    env: { INTAKE_INGEST_COMMIT: "group", ...(db && !("unreachable" in db) ? { DATABASE_URL: db.url } : {}) },
  };
  const boot = await bootstrap(base);
  let intake = await startIntake(base);
  const svc = await createService(intake.url, boot.token, "catchup");
  const now = Math.floor(Date.now() / 1000);
  const pool = Array.from({ length: 1000 }, (_, i) => {
    const body = eventBody(i);
    return { body, signature: signatureHeader(svc.secret, body, now) };
  });
  let next = 0;
  const lane = async () => {
    while (next < total) {
      const { body, signature } = pool[next++ % pool.length] as (typeof pool)[number];
      const res = await fetch(`${intake.url}/v1/ingest/${svc.id}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-signature": signature },
        body,
      });
      if (res.status !== 202) throw new Error(`ingest answered ${res.status}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 64 }, lane));
  await intake.stop();

  intake = await startIntake({
    ...base,
    profileDir: flags.profile,
    env: { ...base.env, INTAKE_EXPORT_NATS_URL: `nats://127.0.0.1:${natsPort}`, INTAKE_EXPORT_NATS_STREAM: "CATCHUP" },
  });
  const published = async () => {
    const text = await (await fetch(`${intake.url}/metrics`)).text();
    const stored = /^intake_export_published_total\{result="stored"\} (\d+)$/m.exec(text)?.[1];
    return Number(stored ?? 0);
  };
  const from = await published();
  const cpuIntake = processCpuNs(intake.pid);
  const cpuNats = processCpuNs(nats.pid);
  const started = performance.now();
  let done = from;
  while (done < total && performance.now() - started < 300_000) {
    await sleep(20);
    done = await published();
  }
  const seconds = (performance.now() - started) / 1000;
  const count = done - from;
  const intakeUs = (processCpuNs(intake.pid) - cpuIntake) / 1000 / count;
  const natsUs = (processCpuNs(nats.pid) - cpuNats) / 1000 / count;
  await intake.stop();
  console.log(
    `${flags.postgres ? "PostgreSQL" : "SQLite"}${flags.checkout ? ` (${flags.checkout})` : ""}: ${count} of ${total} events exported in ${seconds.toFixed(2)} s (${Math.round(count / seconds)}/s), ${from} before the first read`,
  );
  console.log(
    `CPU per exported event: Intake ${intakeUs.toFixed(2)} µs, nats-server ${natsUs.toFixed(2)} µs, both ${(intakeUs + natsUs).toFixed(2)} µs`,
  );
} finally {
  await stop(nats);
  if (db && !("unreachable" in db)) await db.drop();
  rmSync(dir, { recursive: true, force: true });
}
