/**
 * How finely a pair of targets resolves on this machine: two Intakes (identical by default: an
 * A/A pair), measured both ways scenarios 2 and 3 could pair them. In each round, "one after the
 * other" runs A then B (B then A in odd rounds), as `interleave` in run.ts; "side by side" runs
 * both at once, as `sideBySide` (which one is launched first alternates). An A/A pair's
 * per-round ratios are the instrument's own spread: a goal of 0.95× needs it well inside 5%.
 * The one-after-the-other runs also report each server's CPU time per request (all its threads,
 * from /proc/<pid>/task/<tid>/schedstat): what a request costs it, pinned or not.
 *
 * The load is scenario 3's by default: signed 1 KiB ingest to group-commit Intakes, 128
 * connections each. `--read /v1/tenant` makes it scenario 2's: an authenticated GET of that path,
 * 32 connections each, the servers pinned to CPU 0 and wrk to CPU 1 as run.ts pins the read
 * scenarios (where taskset and two cores exist).
 *
 * Usage: bun bench/pair-resolution.ts [--rounds 8] [--duration 4] [--read /v1/tenant]
 *   [--env-b '{"INTAKE_METRICS":"false"}'] [--checkout-b <dir>] [--b-floor] [--nats]
 * (--env-b: B's extra variables, to measure an A/B pair the same two ways; --checkout-b: B runs
 * `bun src/cli.ts` from another checkout, e.g. a `git worktree` of the commit before a change,
 * with its own `bun install`: a before/after pair; --b-floor: B is scenario 3's independent
 * floor, bench/floor-ingest-bare.ts, instead of a second Intake, and --env-b its variables, e.g.
 * `{"FLOOR_FTS":"1"}`; --nats: B exports to a `nats-server -js` of this run's own (scenario
 * 14's pair), each of B's one-after-the-other rounds is counted until its export caught up, and
 * the nats-server's CPU per B request is printed beside the servers').
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bootstrap, createService, makeKeys, type RunningIntake, startIntake } from "./lib/intake.ts";
import { writePool } from "./lib/pool.ts";
import {
  cleanEnv,
  freePort,
  installCleanup,
  pinProcess,
  processCpuNs,
  REPO_ROOT,
  stop,
  track,
  waitReady,
} from "./lib/procs.ts";
import { median } from "./lib/report.ts";
import { ensureWrk, runWrk, type WrkResult } from "./lib/wrk.ts";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "8" },
    duration: { type: "string", default: "4" },
    "env-b": { type: "string", default: "{}" },
    "checkout-b": { type: "string" },
    read: { type: "string" },
    "b-floor": { type: "boolean", default: false },
    nats: { type: "boolean", default: false },
  },
});
const rounds = Number(flags.rounds);
const durationS = Number(flags.duration);
const envB = JSON.parse(flags["env-b"] as string) as Record<string, string>;
const NATS_SERVER = process.env.INTAKE_NATS_SERVER ?? "/usr/sbin/nats-server";
const readPath = flags.read;
const pin = readPath !== undefined && navigator.hardwareConcurrency >= 2 && Bun.which("taskset") !== null;

await ensureWrk();
installCleanup();
const dir = mkdtempSync(join(tmpdir(), "intake-pair-"));
const keys = makeKeys();
/** A side: its server, and the pool file of its signed requests (ingest) or its bearer token (reads). */
type Side = { intake: Pick<RunningIntake, "name" | "url" | "pid" | "stop">; pool: string; token: string };
const sides: Side[] = [];
let nats: ReturnType<typeof Bun.spawn> | null = null;
try {
  if (flags.nats) {
    const port = freePort();
    nats = track(
      Bun.spawn([NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", join(dir, "nats")], {
        stdout: "ignore",
        stderr: "ignore",
      }),
    );
    envB.INTAKE_EXPORT_NATS_URL = `nats://127.0.0.1:${port}`;
    envB.INTAKE_EXPORT_NATS_STREAM = "PAIR";
  }
  for (const [name, env] of [
    ["a", {}],
    ["b", envB],
  ] as const) {
    if (name === "b" && flags["b-floor"]) {
      const svc = { id: `svc_${"0f".repeat(16)}`, secret: `whsec_${"b".repeat(32)}` };
      const port = freePort();
      const child = track(
        Bun.spawn(["bun", "bench/floor-ingest-bare.ts"], {
          cwd: REPO_ROOT,
          env: cleanEnv({
            PORT: String(port),
            FLOOR_DATABASE: join(dir, "floor-bare.sqlite"),
            FLOOR_SERVICE_ID: svc.id,
            FLOOR_SECRET: svc.secret,
            ...envB,
          }),
          stdout: "ignore",
          stderr: Bun.file(join(dir, "floor-bare.err")),
        }),
      );
      const url = `http://127.0.0.1:${port}`;
      await waitReady(`${url}/`, child, join(dir, "floor-bare.err"));
      writePool(join(dir, "b.pool"), `/v1/ingest/${svc.id}`, svc.secret, 1_000);
      sides.push({
        intake: { name: "independent floor", url, pid: child.pid, stop: () => stop(child) },
        pool: join(dir, "b.pool"),
        token: "",
      });
      continue;
    }
    const spec = {
      name,
      dataDir: join(dir, name),
      keys,
      env: readPath === undefined ? { INTAKE_INGEST_COMMIT: "group", ...env } : env,
      checkout: name === "b" ? flags["checkout-b"] : undefined,
    };
    const boot = await bootstrap(spec);
    const intake = await startIntake(spec);
    sides.push({ intake, pool: join(dir, `${name}.pool`), token: boot.token });
    if (pin) await pinProcess(intake.pid, "0");
    if (readPath !== undefined) continue;
    const svc = await createService(intake.url, boot.token, "bench-ingest");
    writePool(join(dir, `${name}.pool`), `/v1/ingest/${svc.id}`, svc.secret, 1_000);
  }
  const [a, b] = sides as [Side, Side];
  const load = async (side: Side, seconds: number): Promise<WrkResult> => {
    const r = await runWrk(
      readPath === undefined
        ? {
            url: side.intake.url,
            connections: 128,
            threads: 1,
            durationS: seconds,
            script: "pool.lua",
            args: [side.pool],
          }
        : {
            url: `${side.intake.url}${readPath}`,
            connections: 32,
            threads: 1,
            durationS: seconds,
            script: "get.lua",
            headers: [`Authorization: Bearer ${side.token}`],
            cpus: pin ? "1" : undefined,
          },
    );
    const failed = r.non2xx + r.socketErrors + r.timeouts;
    if (failed > 0)
      throw new Error(`${side.intake.name}: ${failed} of ${r.requests} requests failed (non-2xx or socket)`);
    return r;
  };
  await Promise.all([load(a, 2), load(b, 2)]); // warm-up
  const ratios = { "one after the other": [] as number[], "side by side": [] as number[] };
  const cpu = { a: [] as number[], b: [] as number[], ratio: [] as number[], nats: [] as number[] };
  /** B's export has published everything committed (up to 60 s). */
  const caughtUp = async (side: Side) => {
    const until = performance.now() + 60_000;
    while (performance.now() < until) {
      const text = await (await fetch(`${side.intake.url}/metrics`)).text();
      if (/^intake_export_lag_events 0$/m.test(text)) return;
      await Bun.sleep(50);
    }
    throw new Error("the export did not catch up in 60 s");
  };
  /** A run of one side alone, and the server's CPU µs per request meanwhile (all its threads). */
  const alone = async (side: Side) => {
    const exporting = nats !== null && side === sides[1];
    if (exporting) await caughtUp(side);
    const before = processCpuNs(side.intake.pid);
    const natsBefore = nats ? processCpuNs(nats.pid) : 0;
    const r = await load(side, durationS);
    if (exporting) await caughtUp(side);
    const natsUs = nats ? (processCpuNs(nats.pid) - natsBefore) / 1000 / r.requests : 0;
    if (exporting) cpu.nats.push(natsUs);
    return { r, cpuUs: (processCpuNs(side.intake.pid) - before) / 1000 / r.requests };
  };
  for (let round = 0; round < rounds; round++) {
    const flip = round % 2 === 1;
    const first = await alone(flip ? b : a);
    const second = await alone(flip ? a : b);
    const [sa, sb] = flip ? [second, first] : [first, second];
    const [ra, rb] = [sa.r, sb.r];
    ratios["one after the other"].push(ra.rps / rb.rps);
    cpu.a.push(sa.cpuUs);
    cpu.b.push(sb.cpuUs);
    cpu.ratio.push(sb.cpuUs / sa.cpuUs);
    const together = await Promise.all(
      flip ? [load(b, durationS), load(a, durationS)] : [load(a, durationS), load(b, durationS)],
    );
    const [ta, tb] = flip ? [together[1], together[0]] : together;
    ratios["side by side"].push(ta.rps / tb.rps);
    console.log(
      `round ${round + 1}/${rounds}: one after the other ${Math.round(ra.rps)} / ${Math.round(rb.rps)} = ${(ra.rps / rb.rps).toFixed(3)}; side by side ${Math.round(ta.rps)} / ${Math.round(tb.rps)} = ${(ta.rps / tb.rps).toFixed(3)}`,
    );
  }
  for (const [how, r] of Object.entries(ratios)) {
    console.log(
      `${how}: A/B median ${median(r).toFixed(3)}, per round ${Math.min(...r).toFixed(3)}–${Math.max(...r).toFixed(3)}`,
    );
  }
  console.log(
    `server CPU per request, one after the other: A ${median(cpu.a).toFixed(2)} µs, B ${median(cpu.b).toFixed(2)} µs; B/A median ${median(cpu.ratio).toFixed(3)}, per round ${Math.min(...cpu.ratio).toFixed(3)}–${Math.max(...cpu.ratio).toFixed(3)} (above 1: A is cheaper)`,
  );
  if (nats !== null)
    console.log(
      `nats-server CPU per B request (B's rounds, until its export caught up): ${median(cpu.nats).toFixed(2)} µs, per round ${Math.min(...cpu.nats).toFixed(2)}–${Math.max(...cpu.nats).toFixed(2)}`,
    );
} finally {
  for (const side of sides) await side.intake.stop();
  if (nats !== null) await stop(nats);
  rmSync(dir, { recursive: true, force: true });
}
