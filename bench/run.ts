/**
 * The benchmark harness (`bun run bench`, `bun run bench:smoke`).
 *
 * One run starts a bare Bun.serve baseline and Intake processes on the embedded default
 * (SQLite file + in-process cache; one on a scratch PostgreSQL database when reachable),
 * warms each target, then drives them with wrk using the same settings, interleaving the
 * targets of a scenario (A B C, then C B A, ...) so that noise from the shared machine falls on all of
 * them alike; the goals that compare Intake with its floor or with a variant of itself
 * (scenarios 2 and 3) read pairs run side by side (`sideBySide`). Hand-written floors
 * (bench/baseline.ts for scenario 2, bench/floor-ingest.ts for 3 and 4, bench/floor-auth.ts for
 * 5's cold cache) do only what the contract requires and run the same way, so that a goal out of
 * any implementation's reach on the machine at hand shows as such in the same run ("floor
 * misses").
 * Medians of the rounds and their ratios go to the table, printed and written to
 * bench/results/latest.md (and .json with every round).
 *
 * The smoke mode runs every scenario with tiny durations and seeds and asserts only that each
 * ran and answered 2xx; it never judges speed (CI machines are shared and noisy).
 *
 * The read scenarios (1, 2, 6, 11, 12: a single-threaded server against wrk on a small GET)
 * run pinned on a machine of two or more cores: the servers on CPU 0, wrk on CPU 1 (taskset),
 * so that whether the two share a core is not left to the scheduler round by round (unpinned,
 * the same server's rounds spread 28–54k req/s; bench/README.md, "Method"). Without `taskset`
 * (util-linux; not on macOS) they run unpinned, as the results' settings line says. Scenario
 * 2's one-after-the-other rounds, which judge a p99, run unpinned (see `unpinned`).
 *
 * Flags: --smoke, --only 1,3,5, --rounds N, --duration S, --threads N, --profile (Intake under
 * `bun --cpu-prof`; profiles in bench/results/profiles/), --keep (keep the temp data dirs),
 * --no-pin (run the read scenarios unpinned too), --floor-in-intake (scenario 2 also serves its
 * floor from a process running Intake's app: bench/baseline.ts FLOOR_IN_INTAKE=1).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, totalmem } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { generateToken } from "../src/domain/credentials.ts";
import { type ColdResult, coldRun } from "./lib/cold.ts";
import { liveLatency, pageFeed, reachable, seedFeed, stalledReaders } from "./lib/feed.ts";
import {
  type Bootstrapped,
  bootstrap,
  createService,
  type IntakeSpec,
  type Keys,
  makeKeys,
  type RunningIntake,
  startIntake,
} from "./lib/intake.ts";
import { CORES, noiseSince, snapshot } from "./lib/noise.ts";
import { type PacedResult, pacedIngest } from "./lib/paced.ts";
import { eventBody, signatureHeader, writePool } from "./lib/pool.ts";
import { createScratchDatabase } from "./lib/postgres.ts";
import {
  cleanEnv,
  freePort,
  installCleanup,
  memoryOf,
  pinProcess,
  processCpuNs,
  REPO_ROOT,
  runCommand,
  stop,
  tail,
  track,
  waitReady,
} from "./lib/procs.ts";
import {
  fmtMs,
  fmtRatio,
  fmtRps,
  median,
  pairedRatio,
  type Row,
  renderMarkdown,
  type Sample,
  type ScenarioNoise,
  type Series,
  type Status,
  summarize,
} from "./lib/report.ts";
import { cursorAfter, loadIntoPageCache, seedServices, seedTokens } from "./lib/seed.ts";
import {
  type ExpiredCounter,
  postgresCounter,
  seedExpiredPostgres,
  seedExpiredSqlite,
  sqliteCounter,
} from "./lib/sweep.ts";
import { ensureWrk, runWrk, type WrkRun } from "./lib/wrk.ts";

const { values: flags } = parseArgs({
  options: {
    smoke: { type: "boolean", default: false },
    only: { type: "string" },
    rounds: { type: "string" },
    duration: { type: "string" },
    threads: { type: "string" },
    profile: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    "no-pin": { type: "boolean", default: false },
    "floor-in-intake": { type: "boolean", default: false },
  },
});

const smoke = flags.smoke === true;
const settings = {
  smoke,
  rounds: Number(flags.rounds ?? (smoke ? 1 : 5)),
  // A cold round is short (each sample token once) and needs a fresh process: more of them.
  coldRounds: Number(flags.rounds ?? (smoke ? 1 : 7)),
  // 4 s, not 5: the whole table (13 scenarios, 29 load targets × 5 rounds) must stay under 15
  // minutes; the paired per-round ratios are what the goals read, and 4 s rounds pair as well.
  durationS: Number(flags.duration ?? (smoke ? 1 : 4)),
  // The read scenarios (pinned, see the header) take twice the rounds at half the length: the
  // same 20 s per target, but ten pairs whose members run 2 s apart instead of five 4 s apart.
  // What disturbs them is the shared host slowing a whole stretch of seconds; a short pair
  // falls inside one stretch more often, and the median of ten shrugs off the pairs that do not
  // (bench/README.md, "How it measures").
  readRounds: Number(flags.rounds ?? (smoke ? 1 : 10)),
  readDurationS: Number(flags.duration ?? (smoke ? 1 : 2)),
  // Scenarios 2's and 3's side-by-side pairs (see `sideBySide`): rounds of 2 s, each pair's two
  // halves measured in the same window. Scenario 2's: 6 rounds (per-round spreads of ±2–4%; 8
  // took the whole table to 898 s of its 900 then). Scenario 3's: 10 since 2026-11-26. Its
  // per-round ratios spread wider (0.85–1.15 in three runs that day), and its limits row, a
  // decision costing under 1% of an event's CPU, read 0.94× in one of them: the median of 6
  // cannot hold a 0.95× line against that spread. The 24 s come from the day's savings.
  pairRounds: Number(flags.rounds ?? (smoke ? 1 : 6)),
  ingestPairRounds: Number(flags.rounds ?? (smoke ? 1 : 10)),
  // Each target's first run, unmeasured: signed ingest (and any target that does not say) 2 s;
  // a GET 1 s. A fresh Intake's GET /v1/tenant reached its plateau in its second second
  // (three fresh processes, 1-s slices: 25.6k then 35.5k, 41.0k, 33.5k…; 28.0k then 31.6k,
  // 28.7k…), where signed ingest still climbed into its third (7.8k, 8.9k, 9.7k, 9.4k…). The
  // second the GETs give back keeps the whole table under 15 minutes on a slower machine.
  warmupS: smoke ? 1 : 2,
  getWarmupS: 1,
  // Two cores hold both the server and wrk: one wrk thread leaves the other core to the server.
  threads: Number(flags.threads ?? 1),
  tokensSmall: 1_000,
  tokensLarge: smoke ? 5_000 : 1_000_000,
  coldSample: smoke ? 200 : 999,
  servicesSeeded: smoke ? 220 : 10_100,
  pageDepth: smoke ? 200 : 10_000,
  poolSize: smoke ? 100 : 1_000,
  feedEvents: smoke ? 3_000 : 100_000,
  // Scenario 13: enough that the sweep is still deleting at the end of the last round (a quiet
  // run deleted ~240,000 of 1,000,000 in its measured windows; seeding twice that many took
  // time from the 15-minute budget for nothing). Per store: in the 2026-11-25 and -26 runs the
  // SQLite sweep took 303,000–426,500 of 600,000 over the whole scenario, the PostgreSQL one
  // 184,500–240,000, and PostgreSQL seeds at ~28,000 rows/s (600,000 took 21.6 s).
  expiredEvents: { sqlite: smoke ? 100_000 : 600_000, postgres: smoke ? 100_000 : 400_000 },
  profile: flags.profile === true,
  /** The read scenarios' CPUs (see the header): servers, then wrk; null: unpinned. */
  pin: CORES >= 2 && flags["no-pin"] !== true && Bun.which("taskset") !== null ? { servers: "0", client: "1" } : null,
};
const only = flags.only ? new Set(flags.only.split(",").map((s) => Number(s.trim()))) : null;
// Peak RSS (7) is read off the ingest run (3).
if (only?.has(7)) only.add(3);
const wanted = (n: number) => only === null || only.has(n);

for (const [k, v] of Object.entries(settings)) {
  if (typeof v === "number" && (!Number.isFinite(v) || v < 1)) {
    process.stderr.write(`bench: bad setting ${k}=${v}\n`);
    process.exit(2);
  }
}

const RESULTS_DIR = join(REPO_ROOT, "bench/results");
const PROFILE_DIR = join(RESULTS_DIR, "profiles");

const rows: Row[] = [];
const allSeries: Series[] = [];
const noises: ScenarioNoise[] = [];
/** Smoke failures: a scenario that did not run or answered non-2xx. */
const problems: string[] = [];
const log = (line: string) => process.stdout.write(`${line}\n`);

// ---------------------------------------------------------------------------------------------
// Targets and interleaving

interface Target {
  label: string;
  run(durationS: number): Promise<Sample>;
  /** Its unmeasured first run; default `settings.warmupS` (see there). */
  warmupS?: number;
}

function pinText(): string {
  const pin = settings.pin;
  return pin
    ? `read scenarios (1, 2, 6, 11, 12) pinned: servers on CPU ${pin.servers}, wrk on CPU ${pin.client} (2's one-after-the-other rounds, which judge its p99, unpinned)`
    : "unpinned";
}

/** wrk's CPUs while a pinned scenario runs (`pinned`); undefined: wherever the scheduler puts it. */
let wrkCpus: string | undefined;

/**
 * Runs a read scenario with its servers on `settings.pin.servers` and wrk on `.client`, then
 * gives the servers every CPU back (a server shared with a later scenario is not left pinned).
 */
async function pinned<T>(pids: number[], body: () => Promise<T>): Promise<T> {
  const pin = settings.pin;
  if (!pin) return body();
  for (const pid of pids) await pinProcess(pid, pin.servers);
  wrkCpus = pin.client;
  try {
    return await body();
  } finally {
    wrkCpus = undefined;
    for (const pid of pids) await pinProcess(pid, `0-${CORES - 1}`).catch(() => undefined);
  }
}

/**
 * Inside a pinned read scenario, runs `body` with the servers on every CPU and wrk wherever the
 * scheduler puts it, then pins them again: scenario 2's one-after-the-other rounds, whose goal
 * is a p99 (pinned, the garbage collector's threads share the server's one core and set the
 * tail: bench/README.md, "Pinning").
 */
async function unpinned<T>(pids: number[], body: () => Promise<T>): Promise<T> {
  const pin = settings.pin;
  if (!pin) return body();
  for (const pid of pids) await pinProcess(pid, `0-${CORES - 1}`);
  wrkCpus = undefined;
  try {
    return await body();
  } finally {
    for (const pid of pids) await pinProcess(pid, pin.servers);
    wrkCpus = pin.client;
  }
}

/** `scenario` for a read scenario: pinned (see `pinned`) to its servers' processes. */
function readScenario(n: number, title: string, pids: number[], body: () => Promise<void>): Promise<void> {
  return scenario(n, title, () => pinned(pids, body));
}

function wrkTarget(label: string, run: Omit<WrkRun, "durationS" | "threads">): Target {
  return {
    label,
    warmupS: run.script === "get.lua" ? settings.getWarmupS : settings.warmupS,
    async run(durationS) {
      const threads = Math.min(settings.threads, run.connections);
      const r = await runWrk({ ...run, durationS, threads, cpus: wrkCpus });
      return {
        rps: r.rps,
        p50Us: r.p50Us,
        p99Us: r.p99Us,
        requests: r.requests,
        non2xx: r.non2xx,
        socketErrors: r.socketErrors,
        timeouts: r.timeouts,
      };
    },
  };
}

/** Signed ingest from a pool file, 128 connections: the ingest scenarios' target. */
function ingestTarget(label: string, url: string, pool: string): Target {
  return wrkTarget(label, { url, connections: 128, script: "pool.lua", args: [pool] });
}

/** A GET of `url` with a bearer token, 32 connections: the read scenarios' target. */
function bearerGet(label: string, url: string, token: string): Target {
  return wrkTarget(label, { url, connections: 32, script: "get.lua", headers: [`Authorization: Bearer ${token}`] });
}

function check(scenario: number, label: string, sample: Sample, phase: string): void {
  const bad: string[] = [];
  if (sample.requests === 0) bad.push("no request completed");
  if (sample.non2xx > 0) bad.push(`${sample.non2xx} non-2xx responses`);
  if (sample.socketErrors + sample.timeouts > 0)
    bad.push(`${sample.socketErrors} socket errors, ${sample.timeouts} timeouts`);
  if (bad.length > 0) problems.push(`scenario ${scenario} ${label} (${phase}): ${bad.join("; ")}`);
}

/** How many rounds of how long each: the default, or the read scenarios' (see `settings`). */
interface Plan {
  rounds: number;
  durationS: number;
}
const defaultPlan: Plan = { rounds: settings.rounds, durationS: settings.durationS };
const readPlan: Plan = { rounds: settings.readRounds, durationS: settings.readDurationS };
const pairPlan: Plan = { rounds: settings.pairRounds, durationS: settings.readDurationS };
const ingestPairPlan: Plan = { rounds: settings.ingestPairRounds, durationS: settings.readDurationS };
/**
 * Scenario 8 (feed paging): 5 rounds of 2 s. Its goal (0.70×) sits far below what it reads
 * (0.97–1.09× on SQLite, 1.01–1.02× on PostgreSQL; per-round ratios 0.85–1.2), so the 40 s
 * that 4-s rounds would take go to the table's 15-minute budget; 2 s still reads ~350 pages
 * of 1,000 events per round.
 */
const feedPlan: Plan = { rounds: settings.rounds, durationS: settings.readDurationS };

/**
 * Warms every target once, then runs the rounds in counterbalanced order (A B C, then C B A, ...):
 * a machine that speeds up or slows down across a round favours no target's position in it.
 * Returns one series per target.
 */
async function interleave(scenario: number, targets: Target[], plan: Plan = defaultPlan): Promise<Series[]> {
  const series = targets.map((t) => ({ scenario, label: t.label, samples: [] as Sample[] }));
  for (const t of targets) {
    const warmupS = t.warmupS ?? settings.warmupS;
    log(`  warm-up ${t.label} (${warmupS} s)`);
    check(scenario, t.label, await t.run(warmupS), "warm-up");
  }
  const forward = [...targets.keys()];
  const backward = [...forward].reverse();
  for (let round = 1; round <= plan.rounds; round++) {
    for (const i of round % 2 === 1 ? forward : backward) {
      const t = targets[i] as Target;
      const sample = await t.run(plan.durationS);
      check(scenario, t.label, sample, `round ${round}`);
      (series[i] as Series).samples.push(sample);
      log(
        `  round ${round}/${plan.rounds} ${t.label}: ${fmtRps(sample.rps)} req/s, p50 ${fmtMs(sample.p50Us)} ms, p99 ${fmtMs(sample.p99Us)} ms${sample.non2xx ? `, ${sample.non2xx} non-2xx` : ""}`,
      );
    }
  }
  allSeries.push(...series);
  return series;
}

/**
 * Runs pairs of targets side by side: in each round, a pair's two targets take their load at the
 * same time (which one is launched first alternates by round), so whatever the shared machine
 * does during the round falls on both halves of the pair alike. Scenarios 2's and 3's goals that
 * compare Intake with a variant of itself or with its floor read these pairs: as two of a
 * scenario's interleaved targets, two identical ingest processes differed by 0.80–1.12× from
 * round to round (two identical read processes, 0.72–1.13×), and three pairs around one Intake
 * cannot all be adjacent in one interleave; side by side, each pair is measured in one window,
 * within about ±5% (ingest) and ±4% (reads) (bench/README.md, "How it measures", "Side by
 * side: the instrument"). Each pair is warmed side by side first; the pairs run in
 * counterbalanced order. Returns each pair's two series.
 */
async function sideBySide(
  scenario: number,
  pairs: Array<[Target, Target]>,
  plan: Plan,
): Promise<Array<[Series, Series]>> {
  const series = pairs.map(
    ([a, b]) =>
      [
        { scenario, label: a.label, samples: [] as Sample[] },
        { scenario, label: b.label, samples: [] as Sample[] },
      ] as [Series, Series],
  );
  const both = async ([a, b]: [Target, Target], durationS: number, bFirst: boolean): Promise<[Sample, Sample]> => {
    if (!bFirst) return Promise.all([a.run(durationS), b.run(durationS)]);
    const [sb, sa] = await Promise.all([b.run(durationS), a.run(durationS)]);
    return [sa, sb];
  };
  for (const [a, b] of pairs) {
    // Twice a target's own: side by side, each half gets about half the CPU. The variants start
    // fresh (their first request is the probe), and an ingest process still speeds up through
    // its third second at full speed (see `settings.warmupS`); with 2 s, the limits pair's
    // first round read 0.92, 0.91 and 0.92× in three runs whose later rounds centred on 1.0×.
    const warmupS = 2 * Math.max(a.warmupS ?? settings.warmupS, b.warmupS ?? settings.warmupS);
    log(`  warm-up side by side: ${a.label} | ${b.label} (${warmupS} s)`);
    const [sa, sb] = await both([a, b], warmupS, false);
    check(scenario, a.label, sa, "warm-up");
    check(scenario, b.label, sb, "warm-up");
  }
  const forward = [...pairs.keys()];
  const backward = [...forward].reverse();
  for (let round = 1; round <= plan.rounds; round++) {
    for (const i of round % 2 === 1 ? forward : backward) {
      const pair = pairs[i] as [Target, Target];
      const samples = await both(pair, plan.durationS, round % 2 === 0);
      for (const k of [0, 1] as const) {
        check(scenario, pair[k].label, samples[k], `round ${round}`);
        (series[i] as [Series, Series])[k].samples.push(samples[k]);
      }
      log(
        `  round ${round}/${plan.rounds} side by side: ${pair[0].label} ${fmtRps(samples[0].rps)} | ${pair[1].label} ${fmtRps(samples[1].rps)} req/s`,
      );
    }
  }
  allSeries.push(...series.flat());
  return series;
}

async function scenario(n: number, title: string, body: () => Promise<void>): Promise<void> {
  if (!wanted(n)) return;
  log(`\n== ${n}. ${title}`);
  const start = snapshot();
  const started = performance.now();
  try {
    await body();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    problems.push(`scenario ${n} failed: ${message}`);
    rows.push({ scenario: n, title, goal: "–", measured: `failed: ${message.split("\n")[0]}`, status: "failed" });
    log(`  FAILED: ${message}`);
  }
  noises.push({ scenario: n, seconds: (performance.now() - started) / 1000, noise: noiseSince(start) });
}

/** "0.99× side by side (12,000 vs 12,100 req/s), p99 …": a side-by-side pair's ratio of `a` to `b`. */
function beside(a: Series, b: Series): string {
  const [sa, sb] = [summarize(a), summarize(b)];
  return `${fmtRatio(pairedRatio(a, b))} side by side (${fmtRps(sa.rps)} vs ${fmtRps(sb.rps)} req/s), p99 ${fmtMs(sa.p99Us)} vs ${fmtMs(sb.p99Us)} ms`;
}

/**
 * The status of a goal whose floor (the least work the contract requires) the same run measured
 * the same way, given each part of the goal as [Intake meets it, the floor meets it]: "floor
 * misses" when every part Intake misses, the floor misses too. No implementation of the contract
 * could then have met it on this machine in this run (issue 17: "where the floor itself misses
 * it, that shown with the floor's figure from the same run").
 */
function againstFloor(...parts: Array<[intakeMeets: boolean, floorMeets: boolean]>): Status {
  if (parts.every(([intake]) => intake)) return "met";
  return parts.every(([intake, floor]) => intake || !floor) ? "floor misses" : "missed";
}

/** A row whose goal is a paired throughput ratio of `measured` to `reference` of at least `goal`. */
function ratioRow(scenario: number, title: string, goal: number, measured: Series, reference: Series): Row {
  const r = pairedRatio(measured, reference);
  return {
    scenario,
    title,
    goal: `≥ ${goal.toFixed(2)}×`,
    measured: `${fmtRatio(r)} (${fmtRps(summarize(measured).rps)} vs ${fmtRps(summarize(reference).rps)} req/s)`,
    status: r >= goal ? "met" : "missed",
  };
}

/** The same for a pair that ran side by side (see `sideBySide`): `a`'s paired ratio to `b`. */
function besideRow(scenario: number, title: string, goal: number, a: Series, b: Series): Row {
  return {
    scenario,
    title,
    goal: `≥ ${goal.toFixed(2)}×`,
    measured: beside(a, b),
    status: pairedRatio(a, b) >= goal ? "met" : "missed",
  };
}

/** One request, to fail a scenario early with the reason instead of a wall of non-2xx. */
async function expectStatus(url: string, init: RequestInit, expected: number, what: string): Promise<void> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (res.status !== expected)
    throw new Error(`${what}: expected ${expected}, got ${res.status} ${text.slice(0, 300)}`);
}

/** One signed event must come back 202 before the load starts. */
function probeIngest(url: string, secret: string): Promise<void> {
  const body = '{"type":"bench.probe"}';
  const headers = {
    "content-type": "application/json",
    "x-service-signature": signatureHeader(secret, body, Math.floor(Date.now() / 1000)),
  };
  return expectStatus(url, { method: "POST", headers, body }, 202, "ingest probe");
}

// ---------------------------------------------------------------------------------------------
// Processes

const workDir = mkdtempSync(join(tmpdir(), "intake-bench-"));
const keys: Keys = makeKeys();
const started: RunningIntake[] = [];

function spec(name: string, env?: Record<string, string>): IntakeSpec {
  return {
    name,
    dataDir: join(workDir, name),
    keys,
    ...(env && { env }),
    ...(settings.profile && { profileDir: PROFILE_DIR }),
  };
}

async function start(s: IntakeSpec): Promise<RunningIntake> {
  const running = await startIntake(s);
  started.push(running);
  return running;
}

async function stopIntake(running: RunningIntake): Promise<void> {
  await running.stop();
  const i = started.indexOf(running);
  if (i >= 0) started.splice(i, 1);
}

/** A hand-written reference server: the bare baseline or a floor, as a child process. */
interface Reference {
  url: string;
  child: Subprocess;
}

/** A hand-written reference server (bench/baseline.ts by default) on a free port; `name` names its log. */
async function startBaseline(
  script = "bench/baseline.ts",
  env: Record<string, string> = {},
  name = basename(script, ".ts"),
): Promise<Reference> {
  const port = freePort();
  const logPath = join(workDir, `${name}.log`);
  const child = track(
    Bun.spawn(["bun", script], {
      cwd: REPO_ROOT,
      env: cleanEnv({ ...env, PORT: String(port) }),
      stdout: Bun.file(logPath),
      stderr: Bun.file(`${logPath}.err`),
      stdin: "ignore",
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/`, child, `${logPath}.err`);
  return { url, child };
}

const sqlitePath = (s: IntakeSpec) => join(s.dataDir, "intake.sqlite");

/**
 * The hand-written ingest floor (bench/floor-ingest.ts) on an Intake's database and service,
 * proven to answer 202 before it is measured.
 */
async function startIngestFloor(database: string, svc: { id: string; secret: string }): Promise<Reference> {
  const floor = await startBaseline("bench/floor-ingest.ts", {
    FLOOR_DATABASE: database,
    FLOOR_SERVICE_ID: svc.id.slice("svc_".length),
    FLOOR_SECRET: svc.secret,
  });
  await probeIngest(`${floor.url}/v1/ingest/${svc.id}`, svc.secret);
  return floor;
}

const INGEST_FLOOR_LABEL = "floor: bare POST + signature + JSON check + group commit";

/**
 * Rate limits configured but far from spent (docs/rate-limits.md): no run comes near a billion
 * requests an hour, so every request pays the limiter's decision and its RateLimit fields, and
 * none is refused. Compared with the same scenario's limits-off Intake in the same run.
 */
const UNSPENT_LIMIT = "1000000000/3600s";

/** Starts Intake on a bootstrapped spec just long enough to create one service through the API. */
async function serviceOf(s: IntakeSpec, boot: Bootstrapped, name: string): Promise<{ id: string; secret: string }> {
  const intake = await start(s);
  try {
    const svc = await createService(intake.url, boot.token, name);
    await probeIngest(`${intake.url}/v1/ingest/${svc.id}`, svc.secret);
    return svc;
  } finally {
    await stopIntake(intake);
  }
}

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
  store: string,
  off: IntakeSpec,
  on: IntakeSpec,
  pool: string,
  counter: ExpiredCounter,
): Promise<Row> {
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

// ---------------------------------------------------------------------------------------------
// Scenarios

async function main(): Promise<void> {
  installCleanup();
  const wrkPath = await ensureWrk();
  const wrkVersion = (await runCommand([wrkPath, "-v"], { timeoutMs: 5_000 })).stdout.split("\n")[0]?.trim() ?? "";
  const runStarted = performance.now();
  const runSnapshot = snapshot();
  log(`bench: ${smoke ? "SMOKE (tiny durations, no speed asserted)" : "full run"}; work dir ${workDir}`);
  log(
    `bench: rounds ${settings.rounds} × ${settings.durationS} s (read scenarios ${settings.readRounds} × ${settings.readDurationS} s, 1 side by side; side-by-side pairs ${settings.pairRounds} × ${settings.readDurationS} s, scenario 3's ${settings.ingestPairRounds} × ${settings.readDurationS} s; feed paging ${feedPlan.rounds} × ${feedPlan.durationS} s), warm-up ${settings.warmupS} s (GETs ${settings.getWarmupS} s), wrk -t${settings.threads}, ${CORES} cores, ${pinText()}`,
  );
  log(
    `bench: Intake runs with INTAKE_SIGNATURE_TOLERANCE_SECONDS=86400 (signed requests are pre-generated) and INTAKE_GRPC_PORT=0`,
  );

  const needsBaseline = [1, 2, 3].some(wanted);
  const baseline = needsBaseline ? await startBaseline() : null;

  // --- 1, 2, 6 share one Intake process (SQLite file, in-process cache) ---------------------
  if ([1, 2, 6].some(wanted)) {
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
    const intake = await start(readSpec);
    // The same data, served with INTAKE_METRICS=false: the cost of metrics (scenario 2).
    const metricsOff = wanted(2)
      ? await start({ ...readSpec, name: "read-metrics-off", env: { ...readSpec.env, INTAKE_METRICS: "false" } })
      : null;
    // The same data with INTAKE_RATE_LIMIT_API configured but unspent: the cost of rate limits (2).
    const limited = wanted(2)
      ? await start({
          ...readSpec,
          name: "read-limited",
          env: { ...readSpec.env, INTAKE_RATE_LIMIT_API: UNSPENT_LIMIT },
        })
      : null;
    // Scenario 2's floor served from a process running Intake's app (--floor-in-intake; off by
    // default: the full table's 15 minutes have no room for it).
    const floorInIntake =
      wanted(2) && flags["floor-in-intake"]
        ? await startBaseline("bench/baseline.ts", { FLOOR_IN_INTAKE: "1" }, "floor-in-intake")
        : null;
    // A second floor process: the floor with the RateLimit fields runs beside the floor without
    // them, each in a process of its own, as Intake's pairs do (see `sideBySide`).
    const floorBeside = wanted(2) ? await startBaseline("bench/baseline.ts", {}, "baseline-beside") : null;
    const readPids = [
      baseline?.child.pid,
      floorBeside?.child.pid,
      intake.pid,
      metricsOff?.pid,
      limited?.pid,
      floorInIntake?.child.pid,
    ].filter((pid): pid is number => pid !== undefined);
    try {
      await readScenario(1, "GET /v1/health vs bare GET", readPids, async () => {
        if (!baseline) throw new Error("no baseline");
        await expectStatus(`${intake.url}/v1/health`, {}, 200, "health");
        // Side by side (see `sideBySide`), since 2026-11-26: one after the other, this pair's
        // per-round ratios spread 0.63–1.07 within single runs of the same code, and the goal
        // read 0.83–0.94× across that day's four runs.
        const [[health, base]] = (await sideBySide(
          1,
          [
            [
              wrkTarget("Intake GET /v1/health, beside the bare GET", {
                url: `${intake.url}/v1/health`,
                connections: 32,
                script: "get.lua",
              }),
              wrkTarget("baseline GET, beside Intake", {
                url: `${baseline.url}/v1/health`,
                connections: 32,
                script: "get.lua",
              }),
            ],
          ],
          readPlan,
        )) as [[Series, Series]];
        rows.push(besideRow(1, "GET /v1/health vs bare GET (32 conns)", 0.9, health, base));
      });

      await readScenario(2, "Authenticated GET /v1/tenant (warm cache) vs bare GET", readPids, async () => {
        if (!baseline || !floorBeside) throw new Error("no baseline");
        await expectStatus(
          `${intake.url}/v1/tenant`,
          { headers: { authorization: `Bearer ${boot.token}` } },
          200,
          "tenant",
        );
        if (!metricsOff) throw new Error("no INTAKE_METRICS=false process");
        if (!limited) throw new Error("no INTAKE_RATE_LIMIT_API process");
        const FLOOR = "floor: bare GET + bearer HMAC + lookup + X-Request-Id";
        const TENANT = "Intake GET /v1/tenant";
        const floorUrl = `${baseline.url}/floor/v1/tenant`;
        const tenantUrl = `${intake.url}/v1/tenant`;
        // One after the other: each against the bare GET, and Intake's p99 under the load alone,
        // unpinned (see `unpinned`); the side-by-side goals below run pinned.
        const series = await unpinned(readPids, () =>
          interleave(
            2,
            [
              // The same request bytes (the baseline ignores the header).
              bearerGet("baseline GET", `${baseline.url}/v1/tenant`, boot.token),
              // The least work the contract requires, hand-written (bench/baseline.ts).
              bearerGet(FLOOR, floorUrl, boot.token),
              ...(floorInIntake
                ? [
                    bearerGet(
                      "the same floor, served from a process running Intake's app",
                      `${floorInIntake.url}/floor/v1/tenant`,
                      boot.token,
                    ),
                  ]
                : []),
              bearerGet(TENANT, tenantUrl, boot.token),
            ],
            readPlan,
          ),
        );
        const [base, floor] = series as [Series, Series];
        const inIntake = floorInIntake ? series[2] : undefined;
        const tenant = series.at(-1) as Series;
        // Side by side: the goals that compare Intake with its floor or with a variant of itself,
        // and the limits goal's own floor (the floor answering the two RateLimit fields).
        const [
          [besideFloor, floorBesideIntake],
          [besideOff, offBeside],
          [limitedBeside, besideLimited],
          [fields, plain],
        ] = (await sideBySide(
          2,
          [
            [
              bearerGet(`${TENANT}, beside the floor`, tenantUrl, boot.token),
              bearerGet(`${FLOOR}, beside Intake`, floorUrl, boot.token),
            ],
            [
              bearerGet(`${TENANT}, beside metrics off`, tenantUrl, boot.token),
              bearerGet(`${TENANT}, INTAKE_METRICS=false, beside Intake`, `${metricsOff.url}/v1/tenant`, boot.token),
            ],
            [
              bearerGet(
                `${TENANT}, API rate limit configured (unspent), beside Intake`,
                `${limited.url}/v1/tenant`,
                boot.token,
              ),
              bearerGet(`${TENANT}, beside limits configured`, tenantUrl, boot.token),
            ],
            [
              bearerGet(
                "floor + RateLimit-Policy and RateLimit fields, beside the floor",
                `${floorBeside.url}/floor-limited/v1/tenant`,
                boot.token,
              ),
              bearerGet(`${FLOOR}, beside the floor with the fields`, floorUrl, boot.token),
            ],
          ],
          pairPlan,
        )) as [[Series, Series], [Series, Series], [Series, Series], [Series, Series]];
        const t = summarize(tenant);
        const r = pairedRatio(tenant, base);
        const f = summarize(floor);
        const floorBare = pairedRatio(floor, base);
        rows.push({
          scenario: 2,
          title: "GET /v1/tenant, bearer, warm cache vs bare GET (32 conns)",
          // The performance issue made the floor the reference: "Intake within 0.9× of the floor
          // on every hot path, and the bare ratio reported beside it" (the row below). The
          // benchmark issue's p99 stays a goal; its 0.75× is reported (bench/README.md).
          goal: "p99 ≤ 2 ms; the ratio reported (was ≥ 0.75×)",
          measured: `${fmtRatio(r)} (${fmtRps(t.rps)} vs ${fmtRps(summarize(base).rps)} req/s), p99 ${fmtMs(t.p99Us)} ms; the floor ${fmtRatio(floorBare)} (${fmtRps(f.rps)} req/s), p99 ${fmtMs(f.p99Us)} ms`,
          status: againstFloor([t.p99Us <= 2000, f.p99Us <= 2000]),
        });
        rows.push(
          besideRow(
            2,
            "… Intake vs the hand-written floor (bearer HMAC + lookup + X-Request-Id, bench/baseline.ts)",
            0.9,
            besideFloor,
            floorBesideIntake,
          ),
        );
        rows.push(
          besideRow(
            2,
            "… metrics on (default) vs INTAKE_METRICS=false, same data, GET /v1/tenant",
            0.95,
            besideOff,
            offBeside,
          ),
        );
        const limitsCost = pairedRatio(limitedBeside, besideLimited);
        const fieldsCost = pairedRatio(fields, plain);
        rows.push({
          scenario: 2,
          title: "… INTAKE_RATE_LIMIT_API configured but unspent vs limits off, same data, GET /v1/tenant",
          goal: "≥ 0.95×",
          measured: beside(limitedBeside, besideLimited),
          status: againstFloor([limitsCost >= 0.95, fieldsCost >= 0.95]),
        });
        rows.push({
          scenario: 2,
          title:
            "… the limits goal's floor: the floor answering the two RateLimit fields vs the floor (bench/baseline.ts)",
          goal: "(reported)",
          measured: beside(fields, plain),
          status: "reported",
        });
        if (inIntake) {
          rows.push({
            scenario: 2,
            title: "… the same floor served from a process running Intake's app (--floor-in-intake) vs the floor",
            goal: "(reported)",
            measured: `${fmtRatio(pairedRatio(inIntake, floor as Series))} (${fmtRps(summarize(inIntake).rps)} req/s); Intake vs it ${fmtRatio(pairedRatio(tenant as Series, inIntake))}`,
            status: "reported",
          });
        }
      });

      await readScenario(6, `List pagination: page 1 vs page after ${settings.pageDepth} rows`, readPids, async () => {
        const depth = settings.pageDepth;
        const cursor = cursorAfter(idsNewestFirst, depth, boot.tenantId);
        const shallowUrl = `${intake.url}/v1/services?limit=20`;
        const deepUrl = `${intake.url}/v1/services?limit=20&cursor=${cursor}`;
        // The computed cursor must land where walking would: the page starts at row depth+1.
        const res = await fetch(deepUrl, { headers: { authorization: `Bearer ${boot.token}` } });
        const page = (await res.json()) as { data?: Array<{ id: string }> };
        const expectedFirst = `svc_${idsNewestFirst[depth]}`;
        if (res.status !== 200 || page.data?.length !== 20 || page.data[0]?.id !== expectedFirst) {
          throw new Error(`deep page is not rows ${depth + 1}..${depth + 20}: ${res.status} ${page.data?.[0]?.id}`);
        }
        const [shallow, deep] = await interleave(
          6,
          [
            bearerGet("page 1 (limit 20)", shallowUrl, boot.token),
            bearerGet(`page after ${depth} rows (limit 20)`, deepUrl, boot.token),
          ],
          readPlan,
        );
        const s = summarize(shallow as Series);
        const d = summarize(deep as Series);
        const cost = pairedRatio(shallow as Series, deep as Series);
        rows.push({
          scenario: 6,
          title: `GET /v1/services page after ${depth.toLocaleString("en-US")} rows vs page 1`,
          goal: "cost ratio ≤ 1.2",
          measured: `${fmtRatio(cost)} (${fmtRps(d.rps)} vs ${fmtRps(s.rps)} req/s; p50 ${fmtMs(d.p50Us)} vs ${fmtMs(s.p50Us)} ms)`,
          status: cost <= 1.2 ? "met" : "missed",
        });
      });
    } finally {
      await stopIntake(intake);
      if (metricsOff) await stopIntake(metricsOff);
      if (limited) await stopIntake(limited);
      if (floorInIntake) await stop(floorInIntake.child);
      if (floorBeside) await stop(floorBeside.child);
    }
  }

  // --- 11, 12: list pages against the single-record read, one Intake (SQLite file) -------------
  if ([11, 12].some(wanted)) {
    const listSpec = spec("lists");
    const boot = await bootstrap(listSpec);
    const intake = await start(listSpec);
    const get = (label: string, path: string) => bearerGet(label, `${intake.url}${path}`, boot.token);
    try {
      // A tenant as a new user would have it: 40 services, one of them with 100 events of 1 KiB.
      const created = [];
      for (let i = 0; i < 40; i++) created.push(await createService(intake.url, boot.token, `list-service-${i}`));
      const target = created[0];
      if (!target) throw new Error("no service created");
      const now = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 100; i++) {
        const body = eventBody(i);
        const signature = signatureHeader(target.secret, body, now);
        const init = {
          method: "POST",
          headers: { "content-type": "application/json", "x-service-signature": signature },
          body,
        };
        await expectStatus(`${intake.url}/v1/ingest/${target.id}`, init, 202, "seeding an event");
      }
      const authInit = { headers: { authorization: `Bearer ${boot.token}` } };
      const servicesPath = "/v1/services?limit=20";
      const eventsPath = `/v1/services/${target.id}/events?limit=100`;
      await expectStatus(`${intake.url}${servicesPath}`, authInit, 200, "services page");
      await expectStatus(`${intake.url}${eventsPath}`, authInit, 200, "events page");

      // One interleave for both pages: they share their reference (GET /v1/tenant on the same
      // process), measured once instead of once per page (the whole table must stay under 15 minutes).
      const n = wanted(11) ? 11 : 12;
      const title = wanted(11) && wanted(12) ? "List pages: 20 services (11), 100 events of 1 KiB (12)" : "A list page";
      await readScenario(n, `${title} vs authenticated GET /v1/tenant`, [intake.pid], async () => {
        const targets = [get("Intake GET /v1/tenant", "/v1/tenant")];
        if (wanted(11)) targets.push(get("Intake GET /v1/services?limit=20", servicesPath));
        if (wanted(12)) targets.push(get("Intake GET /v1/services/{id}/events?limit=100", eventsPath));
        const [tenant, ...pages] = (await interleave(n, targets, readPlan)) as Series[];
        if (!tenant) throw new Error("no GET /v1/tenant series");
        if (wanted(11)) {
          const page = pages.shift() as Series;
          const title = "GET /v1/services?limit=20 (40 services) vs GET /v1/tenant, bearer (32 conns)";
          rows.push(ratioRow(11, title, 0.5, page, tenant));
        }
        if (wanted(12)) {
          const page = pages.shift() as Series;
          page.scenario = 12;
          const p = summarize(page);
          rows.push({
            scenario: 12,
            title: "GET /v1/services/{id}/events?limit=100 (1 KiB payloads) vs GET /v1/tenant (32 conns)",
            goal: "(reported)",
            measured: `${fmtRps(p.rps)} req/s, ${fmtRps(p.rps * 100)} events/s, p99 ${fmtMs(p.p99Us)} ms; ${fmtRatio(pairedRatio(page, tenant))} of GET /v1/tenant`,
            status: "reported",
          });
        }
      });
    } finally {
      await stopIntake(intake);
    }
  }

  // --- 3 + 7: durable signed ingest on SQLite, group commit vs per-request commit -----------
  await scenario(3, "Durable signed ingest (SQLite FULL, 1 KiB, 128 conns)", async () => {
    if (!baseline) throw new Error("no baseline");
    const configText = readFileSync(join(REPO_ROOT, "src/config.ts"), "utf8");
    if (!configText.includes("INTAKE_INGEST_COMMIT")) {
      log("  NOTE: src/config.ts does not read INTAKE_INGEST_COMMIT yet: the per_request run is the default mode.");
    }
    const groupSpec = spec("ingest-group", { INTAKE_INGEST_COMMIT: "group" });
    const perSpec = spec("ingest-per-request", { INTAKE_INGEST_COMMIT: "per_request" });
    // Group commit with INTAKE_METRICS=false, on its own database: the cost of metrics.
    const offSpec = spec("ingest-group-metrics-off", { INTAKE_INGEST_COMMIT: "group", INTAKE_METRICS: "false" });
    // Group commit with INTAKE_RATE_LIMIT_INGEST configured but unspent: the cost of rate limits.
    const limitedSpec = spec("ingest-group-limited", {
      INTAKE_INGEST_COMMIT: "group",
      INTAKE_RATE_LIMIT_INGEST: UNSPENT_LIMIT,
    });
    // The floor's own database, made by Intake (its tables and one service): it runs beside
    // Intake, and two writers on one SQLite file would wait on each other's locks.
    const floorSpec = spec("ingest-floor");
    const floorBoot = await bootstrap(floorSpec);
    const floorSvc = await serviceOf(floorSpec, floorBoot, "bench-ingest");
    const floorPool = join(workDir, "ingest-floor.pool");
    writePool(floorPool, `/v1/ingest/${floorSvc.id}`, floorSvc.secret, settings.poolSize);
    const groupBoot = await bootstrap(groupSpec);
    const perBoot = await bootstrap(perSpec);
    const offBoot = await bootstrap(offSpec);
    const limitedBoot = await bootstrap(limitedSpec);
    const group = await start(groupSpec);
    const per = await start(perSpec);
    const off = await start(offSpec);
    const limited = await start(limitedSpec);
    let floor: Reference | null = null;
    try {
      const pools = await Promise.all(
        [
          [group, groupBoot],
          [per, perBoot],
          [off, offBoot],
          [limited, limitedBoot],
        ].map(async ([intake, boot]) => {
          const i = intake as RunningIntake;
          const svc = await createService(i.url, (boot as Bootstrapped).token, "bench-ingest");
          const file = join(workDir, `${i.name}.pool`);
          const path = `/v1/ingest/${svc.id}`;
          writePool(file, path, svc.secret, settings.poolSize);
          return { intake: i, svc, file, path };
        }),
      );
      const [g, p, o, l] = pools as [(typeof pools)[0], (typeof pools)[0], (typeof pools)[0], (typeof pools)[0]];
      await probeIngest(`${g.intake.url}${g.path}`, g.svc.secret);
      await probeIngest(`${o.intake.url}${o.path}`, o.svc.secret);
      await probeIngest(`${l.intake.url}${l.path}`, l.svc.secret);
      // The least work the contract requires, hand-written on a database Intake made.
      floor = await startIngestFloor(sqlitePath(floorSpec), floorSvc);
      const GROUP = "Intake ingest, group commit";

      // One after the other: each against the bare POST, and Intake's p99 under the load alone.
      const [base, floorSeries, grp, perReq] = await interleave(3, [
        // The same signed requests: the baseline reads the body and ignores the rest.
        ingestTarget("baseline POST 1 KiB", baseline.url, g.file),
        ingestTarget(INGEST_FLOOR_LABEL, floor.url, floorPool),
        ingestTarget(GROUP, g.intake.url, g.file),
        ingestTarget("Intake ingest, per_request commit", p.intake.url, p.file),
      ]);
      // Side by side: the goals that compare Intake with its floor or with a variant of itself.
      const [[besideFloor, floorBeside], [besideOff, offBeside], [besideLimited, limitedBeside]] = (await sideBySide(
        3,
        [
          [
            ingestTarget(`${GROUP}, beside the floor`, g.intake.url, g.file),
            ingestTarget(`${INGEST_FLOOR_LABEL}, beside Intake`, floor.url, floorPool),
          ],
          [
            ingestTarget(`${GROUP}, beside metrics off`, g.intake.url, g.file),
            ingestTarget(`${GROUP}, INTAKE_METRICS=false, beside Intake`, o.intake.url, o.file),
          ],
          [
            ingestTarget(`${GROUP}, beside limits configured`, g.intake.url, g.file),
            ingestTarget(`${GROUP}, ingest rate limit configured (unspent), beside Intake`, l.intake.url, l.file),
          ],
        ],
        ingestPairPlan,
      )) as [[Series, Series], [Series, Series], [Series, Series]];
      const b = summarize(base as Series);
      const gs = summarize(grp as Series);
      const ps = summarize(perReq as Series);
      const r = pairedRatio(grp as Series, base as Series);
      const fls = summarize(floorSeries as Series);
      const floorBare = pairedRatio(floorSeries as Series, base as Series);
      rows.push({
        scenario: 3,
        title: "Signed ingest, SQLite FULL, group commit vs bare POST (128 conns)",
        // As scenario 2's: the floor is the reference ("… Intake vs the hand-written floor"
        // below), the bare ratio reported beside it; the p99 stays a goal.
        goal: "p99 ≤ 15 ms; the ratio reported (was ≥ 0.35×)",
        measured: `${fmtRatio(r)} (${fmtRps(gs.rps)} vs ${fmtRps(b.rps)} req/s), p99 ${fmtMs(gs.p99Us)} ms; ${fmtRatio(pairedRatio(grp as Series, perReq as Series))} per_request (${fmtRps(ps.rps)} req/s, p99 ${fmtMs(ps.p99Us)} ms)`,
        status: againstFloor([gs.p99Us <= 15_000, fls.p99Us <= 15_000]),
      });
      rows.push({
        scenario: 3,
        title: "… the hand-written floor on a SQLite file of its own (bench/floor-ingest.ts) vs bare POST",
        goal: "(reported)",
        measured: `${fmtRatio(floorBare)} (${fmtRps(fls.rps)} req/s), p99 ${fmtMs(fls.p99Us)} ms`,
        status: "reported",
      });
      rows.push(
        besideRow(
          3,
          "… Intake vs the hand-written floor (bench/floor-ingest.ts), group commit",
          0.9,
          besideFloor,
          floorBeside,
        ),
      );
      rows.push(
        besideRow(
          3,
          "… metrics on (default) vs INTAKE_METRICS=false, signed ingest, group commit",
          0.95,
          besideOff,
          offBeside,
        ),
      );
      rows.push(
        besideRow(
          3,
          "… INTAKE_RATE_LIMIT_INGEST configured but unspent vs limits off, signed ingest, group commit",
          0.95,
          limitedBeside,
          besideLimited,
        ),
      );
      const mem = memoryOf(group.pid);
      if (wanted(7)) {
        if (!mem) throw new Error("could not read /proc status of the ingest process");
        const mb = (mem.hwmMiB * 1024 * 1024) / 1e6;
        rows.push({
          scenario: 7,
          title: "Peak RSS (VmHWM) of Intake under 3 (group commit)",
          goal: "≤ 150 MB",
          measured: `${mb.toFixed(0)} MB (${mem.hwmMiB.toFixed(0)} MiB); per_request process ${((memoryOf(per.pid)?.hwmMiB ?? Number.NaN) * 1.048576).toFixed(0)} MB`,
          status: mb <= 150 ? "met" : "missed",
        });
      }
    } finally {
      if (floor) await stop(floor.child);
      await stopIntake(group);
      await stopIntake(per);
      await stopIntake(off);
      await stopIntake(limited);
    }
  });

  // --- 4: the same ingest on PostgreSQL ----------------------------------------------------
  await scenario(4, "Signed ingest on PostgreSQL (128 conns)", async () => {
    const db = await createScratchDatabase();
    if ("unreachable" in db) {
      const why = `PostgreSQL at 127.0.0.1:5432 unreachable (${db.unreachable})`;
      log(`  SKIPPED: ${why}`);
      rows.push({
        scenario: 4,
        title: "Signed ingest on PostgreSQL",
        goal: "≥ 20k events/s",
        measured: why,
        status: "skipped",
      });
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

  // --- 5: auth cost, small vs large token table ----------------------------------------------
  await scenario(5, `Auth cost: ${settings.tokensSmall} vs ${settings.tokensLarge} tokens in the store`, async () => {
    const stores = [
      { label: `${settings.tokensSmall.toLocaleString("en-US")} tokens`, count: settings.tokensSmall },
      { label: `${settings.tokensLarge.toLocaleString("en-US")} tokens`, count: settings.tokensLarge },
    ].map((s) => ({ ...s, spec: spec(`auth-${s.count}`) }));
    interface Prepared {
      label: string;
      spec: IntakeSpec;
      boot: Bootstrapped;
      /** First-use tokens measured in a cold round, and those that warm the JIT before them. */
      sample: string[];
      warmSet: string[];
    }
    const prepared: Prepared[] = [];
    for (const s of stores) {
      const boot = await bootstrap(s.spec);
      // The bootstrap owner token is one of the `count`.
      const seeded = seedTokens({
        path: sqlitePath(s.spec),
        tenantId: boot.tenantId,
        count: s.count - 1,
        pepper: keys.pepper,
        sampleSize: settings.coldSample,
      });
      log(`  seeded ${s.count - 1} tokens (+1 bootstrap) in ${seeded.seconds.toFixed(1)} s`);
      // Alternate tokens: the odd ones warm the JIT on the found-in-store path, the even ones
      // are measured, so no measured token was seen before and both sets span the whole table.
      const warmSet = seeded.sample.filter((_, k) => k % 2 === 1);
      const sample = seeded.sample.filter((_, k) => k % 2 === 0);
      prepared.push({ ...s, boot, sample, warmSet });
    }
    const [small, large] = prepared as [Prepared, Prepared];

    // Warm: one repeated token, always a cache hit.
    const smallIntake = await start(small.spec);
    const largeIntake = await start(large.spec);
    let warmSmall: Series;
    let warmLarge: Series;
    try {
      for (const [intake, p] of [
        [smallIntake, small],
        [largeIntake, large],
      ] as const) {
        await expectStatus(
          `${intake.url}/v1/tenant`,
          { headers: { authorization: `Bearer ${p.boot.token}` } },
          200,
          "tenant",
        );
        // A seeded token must verify too: proves the digest scheme matches the store's.
        await expectStatus(
          `${intake.url}/v1/tenant`,
          { headers: { authorization: `Bearer ${p.sample[p.sample.length - 1]}` } },
          200,
          "seeded token",
        );
      }
      [warmSmall, warmLarge] = (await interleave(5, [
        bearerGet(`warm, ${small.label}`, `${smallIntake.url}/v1/tenant`, small.boot.token),
        bearerGet(`warm, ${large.label}`, `${largeIntake.url}/v1/tenant`, large.boot.token),
      ])) as [Series, Series];
    } finally {
      await stopIntake(smallIntake);
      await stopIntake(largeIntake);
    }

    // Cold: a fresh process per round (the token cache starts empty), its JIT warmed on the
    // hit path, on the miss path with unknown tokens and with stored tokens (the warm set),
    // then every sample token exactly once. Intake and the hand-written floor
    // (bench/floor-auth.ts) on the same files, one after the other.
    const coldRound = async (url: string, pid: number, p: Prepared) => {
      await runWrk({
        url,
        connections: 32,
        threads: 1,
        durationS: settings.getWarmupS,
        script: "get.lua",
        headers: [`Authorization: Bearer ${p.boot.token}`],
      });
      const unknown = Array.from({ length: 2_000 }, () => generateToken());
      for (let k = 0; k < unknown.length; k += 50) {
        await Promise.all(
          unknown.slice(k, k + 50).map(async (t) => {
            const res = await fetch(url, { headers: { authorization: `Bearer ${t}` } });
            await res.arrayBuffer();
          }),
        );
      }
      await coldRun({ url, tokens: p.warmSet, concurrency: 32, timeoutMs: 60_000 });
      const cpuBefore = processCpuNs(pid);
      const r: ColdResult = await coldRun({ url, tokens: p.sample, concurrency: 32, timeoutMs: 60_000 });
      // The server's CPU µs per first-use request, all its threads.
      const cpuUs = (processCpuNs(pid) - cpuBefore) / 1000 / Math.max(1, r.requests);
      const sample: Sample = { ...r, socketErrors: 0, timeouts: p.sample.length - r.requests };
      return { sample, cpuUs };
    };
    const servers = [
      {
        kind: "cold",
        start: async (p: Prepared) => {
          const intake = await start(p.spec);
          return { url: `${intake.url}/v1/tenant`, pid: intake.pid, stop: () => stopIntake(intake) };
        },
      },
      {
        kind: "floor, cold",
        start: async (p: Prepared) => {
          const floor = await startBaseline("bench/floor-auth.ts", {
            FLOOR_DATABASE: sqlitePath(p.spec),
            FLOOR_PEPPER: keys.pepper,
          });
          return { url: `${floor.url}/v1/tenant`, pid: floor.child.pid, stop: () => stop(floor.child) };
        },
      },
    ];
    // [server][store]: the fresh-process series and the server CPU per request of each round.
    interface Cold {
      series: Series;
      cpuUs: number[];
    }
    const cold: Cold[][] = servers.map((server) =>
      prepared.map((p) => ({ series: { scenario: 5, label: `${server.kind}, ${p.label}`, samples: [] }, cpuUs: [] })),
    );
    for (let round = 1; round <= settings.coldRounds; round++) {
      for (const [s, server] of servers.entries()) {
        for (const [i, p] of prepared.entries()) {
          const cell = cold[s]?.[i] as Cold;
          // Both stores start each round from a file resident in the OS page cache.
          loadIntoPageCache(sqlitePath(p.spec));
          const running = await server.start(p);
          try {
            const { sample, cpuUs } = await coldRound(running.url, running.pid, p);
            check(5, cell.series.label, sample, `round ${round}`);
            cell.series.samples.push(sample);
            cell.cpuUs.push(cpuUs);
            log(
              `  round ${round}/${settings.coldRounds} ${cell.series.label}: ${sample.requests} first-use tokens, ${fmtRps(sample.rps)} req/s, p50 ${fmtMs(sample.p50Us)} ms, p99 ${fmtMs(sample.p99Us)} ms, server CPU ${cpuUs.toFixed(1)} µs/request`,
            );
          } finally {
            await running.stop();
          }
        }
      }
    }
    for (const row of cold) allSeries.push(...row.map((c) => c.series));
    const ws = summarize(warmSmall);
    const wl = summarize(warmLarge);
    const warmCost = pairedRatio(warmSmall, warmLarge);
    // The cold goal is judged on the server's own CPU per request: a round is ~500 requests
    // (~35 ms), short enough that the client's and the machine's hiccups swing its req/s by
    // ±30% (bench/README.md, scenario 5); CPU time spent is what the lookup actually costs.
    const costOf = (pair: Cold[]) => {
      const [s, l] = pair as [Cold, Cold];
      return {
        ratio: median(l.cpuUs.map((large, k) => large / (s.cpuUs[k] as number))),
        cpu: `${median(l.cpuUs).toFixed(1)} vs ${median(s.cpuUs).toFixed(1)} µs`,
        rpsRatio: pairedRatio(s.series, l.series),
        cs: summarize(s.series),
        cl: summarize(l.series),
      };
    };
    const coldCost = costOf(cold[0] as Cold[]);
    const floorCost = costOf(cold[1] as Cold[]);
    rows.push({
      scenario: 5,
      title: `Auth cost, ${large.label} vs ${small.label}, warm cache (GET /v1/tenant)`,
      goal: "cost ratio ≤ 1.1",
      measured: `${fmtRatio(warmCost)} (${fmtRps(wl.rps)} vs ${fmtRps(ws.rps)} req/s)`,
      status: warmCost <= 1.1 ? "met" : "missed",
    });
    rows.push({
      scenario: 5,
      title: `Auth cost, ${large.label} vs ${small.label}, cold cache (${small.sample.length} first-use tokens per fresh process)`,
      goal: "cost ratio ≤ 1.1",
      measured: `${fmtRatio(coldCost.ratio)} server CPU per request (${coldCost.cpu}); client-side ${fmtRatio(coldCost.rpsRatio)} (${fmtRps(coldCost.cl.rps)} vs ${fmtRps(coldCost.cs.rps)} req/s; p50 ${fmtMs(coldCost.cl.p50Us)} vs ${fmtMs(coldCost.cs.p50Us)} ms)`,
      status: againstFloor([coldCost.ratio <= 1.1, floorCost.ratio <= 1.1]),
    });
    rows.push({
      scenario: 5,
      title:
        "… the hand-written floor (bearer HMAC + Intake's SQLite store adapter, bench/floor-auth.ts), same procedure",
      goal: "(reported)",
      measured: `${fmtRatio(floorCost.ratio)} server CPU per request (${floorCost.cpu}); client-side ${fmtRatio(floorCost.rpsRatio)} (${fmtRps(floorCost.cl.rps)} vs ${fmtRps(floorCost.cs.rps)} req/s)`,
      status: "reported",
    });
  });

  // --- 8, 9, 10: the feed (docs/feed.md) -----------------------------------------------------
  await scenario(8, "Feed paging: GET /v1/feed?limit=1000 vs one prepared SELECT (SQLite, PostgreSQL)", async () => {
    // The performance issue's goal: Intake ≥ 0.70× of a floor that reads the same rows with one
    // prepared statement and writes the same bytes, on each store.
    const feedRow = (title: string, it: Series, fl: Series): Row => {
      const r = pairedRatio(it, fl);
      const s = summarize(it);
      return {
        scenario: 8,
        title,
        goal: "≥ 0.70×",
        measured: `${fmtRatio(r)} (${fmtRps(s.rps)} vs ${fmtRps(summarize(fl).rps)} events/s), page p99 ${fmtMs(s.p99Us)} ms`,
        status: r >= 0.7 ? "met" : "missed",
      };
    };
    /** The floor and Intake paging the feed (two readers, limit 1000), interleaved; `on` names the store. */
    const pageBoth = async (on: string, floorUrl: string, intakeUrl: string, token: string) =>
      (await interleave(
        8,
        [
          {
            label: `floor: one prepared SELECT${on}, same bytes`,
            run: (d) => pageFeed(floorUrl, null, 1000, 2, d),
            warmupS: settings.getWarmupS,
          },
          {
            label: `Intake GET /v1/feed?limit=1000${on}`,
            run: (d) => pageFeed(intakeUrl, token, 1000, 2, d),
            warmupS: settings.getWarmupS,
          },
        ],
        feedPlan,
      )) as [Series, Series];
    const feedSpec = spec("feed");
    const boot = await bootstrap(feedSpec);
    const intake = await start(feedSpec);
    let floor: Reference | null = null;
    try {
      const svc = await createService(intake.url, boot.token, "bench-feed");
      const seconds = await seedFeed(
        sqlitePath(feedSpec),
        boot.tenantId,
        svc.id.slice("svc_".length),
        settings.feedEvents,
      );
      log(`seeded ${settings.feedEvents} feed events in ${seconds.toFixed(1)} s`);
      loadIntoPageCache(sqlitePath(feedSpec));
      await expectStatus(
        `${intake.url}/v1/feed?limit=1`,
        { headers: { authorization: `Bearer ${boot.token}` } },
        200,
        "feed",
      );
      floor = await startBaseline("bench/floor-feed.ts", {
        FLOOR_DATABASE: sqlitePath(feedSpec),
        FLOOR_TENANT_ID: boot.tenantId,
      });
      const [fl, it] = await pageBoth("", floor.url, intake.url, boot.token);
      rows.push(
        feedRow(
          "Feed paging, events/s read (limit 1000, 1 KiB, 2 readers) vs the one-statement floor (SQLite)",
          it,
          fl,
        ),
      );
    } finally {
      if (floor) await stop(floor.child);
      await stopIntake(intake);
    }

    const db = await createScratchDatabase();
    if ("unreachable" in db) {
      const why = `PostgreSQL at 127.0.0.1:5432 unreachable (${db.unreachable})`;
      log(`  SKIPPED (PostgreSQL): ${why}`);
      rows.push({
        scenario: 8,
        title: "Feed paging, events/s read (limit 1000, 1 KiB, 2 readers) vs the one-statement floor (PostgreSQL)",
        goal: "≥ 0.70×",
        measured: why,
        status: "skipped",
      });
      return;
    }
    try {
      const pgSpec = spec("feed-postgres", { DATABASE_URL: db.url });
      const pgBoot = await bootstrap(pgSpec);
      const pgIntake = await start(pgSpec);
      let pgFloor: Reference | null = null;
      try {
        const svc = await createService(pgIntake.url, pgBoot.token, "bench-feed");
        const seconds = await seedFeed(db.url, pgBoot.tenantId, svc.id.slice("svc_".length), settings.feedEvents);
        log(`seeded ${settings.feedEvents} feed events (PostgreSQL, then vacuum analyze) in ${seconds.toFixed(1)} s`);
        await expectStatus(
          `${pgIntake.url}/v1/feed?limit=1`,
          { headers: { authorization: `Bearer ${pgBoot.token}` } },
          200,
          "feed (PostgreSQL)",
        );
        pgFloor = await startBaseline(
          "bench/floor-feed.ts",
          { FLOOR_DATABASE_URL: db.url, FLOOR_TENANT_ID: pgBoot.tenantId },
          "floor-feed-postgres",
        );
        const [fl, it] = await pageBoth(" on PostgreSQL", pgFloor.url, pgIntake.url, pgBoot.token);
        rows.push(
          feedRow(
            "Feed paging, events/s read (limit 1000, 1 KiB, 2 readers) vs the one-statement floor (PostgreSQL)",
            it,
            fl,
          ),
        );
      } finally {
        if (pgFloor) await stop(pgFloor.child);
        await stopIntake(pgIntake);
      }
    } finally {
      await db.drop();
    }
  });

  await scenario(
    9,
    "Live delivery latency at 5,000 events/s of ingest, 202 → SSE reader (one instance; two on PostgreSQL + Redis)",
    async () => {
      const count = smoke ? 20 : 500;
      // The performance issue's load: the reader follows the whole feed, these events and the
      // probes alike, while a child process sends them at this steady rate.
      const rate = 5_000;
      /**
       * The probes' latency while `sender` ingests `rate` events/s of a second service, as the
       * scenario's row for `where` (judged against `p99Goal` ms, and only at the rate).
       */
      async function underLoad(
        sender: RunningIntake,
        readerUrl: string,
        token: string,
        where: { name: string; title: string; goal: string; p99Goal: number },
      ): Promise<void> {
        const svc = await createService(sender.url, token, `bench-${where.name}`);
        const loadSvc = await createService(sender.url, token, `bench-${where.name}-load`);
        const file = join(workDir, `${where.name}.pool`);
        writePool(file, `/v1/ingest/${loadSvc.id}`, loadSvc.secret, settings.poolSize);
        const stopLoad = await pacedIngest(sender.url, file, rate);
        let live: Awaited<ReturnType<typeof liveLatency>>;
        let load: PacedResult;
        try {
          await Bun.sleep(1_000); // the load at its rate before the first probe
          live = await liveLatency({ senderUrl: sender.url, readerUrl, token, service: svc, count, intervalMs: 10 });
        } finally {
          load = await stopLoad();
        }
        if (live.failed > 0) problems.push(`scenario 9 (${where.name}): ${live.failed} probes not delivered`);
        if (load.accepted < load.sent) {
          problems.push(
            `scenario 9 (${where.name}): ${load.sent - load.accepted} of ${load.sent} load events not accepted`,
          );
        }
        const achieved = load.accepted / load.seconds;
        // The rate is part of the goal: a run whose load fell short of it proves nothing.
        const atRate = achieved >= rate * 0.97;
        rows.push({
          scenario: 9,
          title: where.title,
          goal: where.goal,
          measured:
            `p50 ${live.p50Ms.toFixed(1)} ms, p99 ${live.p99Ms.toFixed(1)} ms (${live.delivered} probes) ` +
            `at ${fmtRps(achieved)} events/s of ingest (${fmtRps(load.accepted)} accepted in ${load.seconds.toFixed(1)} s)`,
          status: live.p99Ms <= where.p99Goal && atRate ? "met" : "missed",
        });
      }

      const liveSpec = spec("live");
      const boot = await bootstrap(liveSpec);
      const intake = await start(liveSpec);
      try {
        await underLoad(intake, intake.url, boot.token, {
          name: "live",
          title: "Live delivery, one instance (SQLite), 202 → reader, at 5,000 events/s of ingest",
          goal: "p99 ≤ 25 ms (contract: ≤ 100 ms)",
          p99Goal: 25,
        });
      } finally {
        await stopIntake(intake);
      }
      const db = await createScratchDatabase();
      const redis = await reachable(6379);
      if ("unreachable" in db || !redis) {
        const why =
          "unreachable" in db ? `PostgreSQL unreachable (${db.unreachable})` : "Redis at 127.0.0.1:6379 unreachable";
        log(`  SKIPPED (two instances): ${why}`);
        rows.push({
          scenario: 9,
          title: "Live delivery across two instances",
          goal: "p99 ≤ 50 ms",
          measured: why,
          status: "skipped",
        });
        return;
      }
      try {
        const env = {
          DATABASE_URL: db.url,
          REDIS_URL: "redis://127.0.0.1:6379",
          INTAKE_REDIS_KEY_PREFIX: `bench-${process.pid}`,
        };
        const aSpec = spec("live-a", env);
        const bSpec = spec("live-b", env);
        const pgBoot = await bootstrap(aSpec);
        const a = await start(aSpec);
        const b = await start(bSpec);
        try {
          await underLoad(a, b.url, pgBoot.token, {
            name: "live-ab",
            title:
              "Live delivery across two instances (PostgreSQL + Redis), sender on A, reader on B, at 5,000 events/s of ingest",
            goal: "p99 ≤ 50 ms (contract: ≤ 500 ms)",
            p99Goal: 50,
          });
        } finally {
          await stopIntake(a);
          await stopIntake(b);
        }
      } finally {
        await db.drop();
      }
    },
  );

  await scenario(10, "RSS with 100 stalled stream readers while ingesting (SQLite, 128 conns)", async () => {
    // 100 readers of one token: past the default cap of live feed readers (docs/feed.md).
    const stallSpec = spec("stalled", { INTAKE_FEED_READERS_PER_TOKEN: "100" });
    const boot = await bootstrap(stallSpec);
    const intake = await start(stallSpec);
    let close: (() => Promise<void>) | null = null;
    try {
      const svc = await createService(intake.url, boot.token, "bench-stalled");
      const file = join(workDir, "stalled.pool");
      writePool(file, `/v1/ingest/${svc.id}`, svc.secret, settings.poolSize);
      const load = ingestTarget("Intake ingest", intake.url, file);
      const without = await load.run(settings.durationS);
      check(10, "ingest without readers", without, "run");
      const before = memoryOf(intake.pid);
      close = await stalledReaders(intake.url, boot.token, 100);
      // The readers first take what their sockets hold (a few MB each, from the start of the
      // feed); measure once Intake is idle again, i.e. once they are stalled.
      let quiet = 0;
      for (let waited = 0; waited < 60_000 && quiet < 4; waited += 500) {
        const cpu = processCpuNs(intake.pid);
        await Bun.sleep(500);
        quiet = processCpuNs(intake.pid) - cpu < 50_000_000 ? quiet + 1 : 0;
      }
      log(`  readers connected; Intake idle again (${quiet} quiet half-seconds)`);
      const withReaders = await load.run(settings.durationS);
      check(10, "ingest with 100 stalled readers", withReaders, "run");
      const after = memoryOf(intake.pid);
      if (!before || !after) throw new Error("could not read /proc status of the Intake process");
      const mb = (mib: number) => (mib * 1024 * 1024) / 1e6;
      rows.push({
        scenario: 10,
        title: "RSS of Intake with 100 stalled SSE readers while ingesting",
        // The performance issue's goal for this scenario (scenario 7's 150 MB is for ingest alone).
        goal: "≤ 200 MB",
        measured: `${mb(after.rssMiB).toFixed(0)} MB RSS (peak ${mb(after.hwmMiB).toFixed(0)} MB; ${mb(before.rssMiB).toFixed(0)} MB before the readers); ingest ${fmtRps(withReaders.rps)} vs ${fmtRps(without.rps)} req/s without them`,
        status: mb(after.hwmMiB) <= 200 ? "met" : "missed",
      });
    } finally {
      await close?.();
      await stopIntake(intake);
    }
  });

  // --- 13: ingest while a retention sweep deletes expired events (docs/feed.md, "Retention") -
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
      rows.push(await sweepComparison("SQLite FULL, group commit", offSpec, onSpec, file, counter));
    } finally {
      await counter.close();
    }

    const db = await createScratchDatabase();
    if ("unreachable" in db) {
      const why = `PostgreSQL at 127.0.0.1:5432 unreachable (${db.unreachable})`;
      log(`  SKIPPED (PostgreSQL): ${why}`);
      rows.push({
        scenario: 13,
        title: "Signed ingest during a retention sweep, PostgreSQL",
        goal: "≥ 0.80×",
        measured: why,
        status: "skipped",
      });
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
        rows.push(await sweepComparison("PostgreSQL, group commit", pgOff, pgOn, pgFile, pgCounter));
      } finally {
        await pgCounter.close();
      }
    } finally {
      if (twin && !("unreachable" in twin)) await twin.drop();
      await db.drop();
    }
  });

  if (baseline) await stop(baseline.child);

  // ---------------------------------------------------------------------------------------------
  // Report
  const elapsed = (performance.now() - runStarted) / 1000;
  const whole = noiseSince(runSnapshot);
  rows.sort((a, b) => a.scenario - b.scenario);
  const command = smoke
    ? "bun run bench:smoke"
    : `bun run bench${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(" ")}` : ""}`;
  const header = [
    `# Intake benchmark — ${smoke ? "smoke run (figures meaningless)" : "results"}`,
    "",
    `- date: ${new Date().toISOString()}`,
    `- machine: ${CORES} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, shared with other work (see noise)`,
    `- bun ${Bun.version}, ${wrkVersion}, git ${(await runCommand(["git", "rev-parse", "--short", "HEAD"], { timeoutMs: 5_000 })).stdout.trim()}`,
    `- command: \`${command}\``,
    `- settings: ${settings.rounds} rounds × ${settings.durationS} s per target (read scenarios 1, 2, 6, 11, 12: ${settings.readRounds} × ${settings.readDurationS} s, scenario 1 side by side; scenarios 2's and 3's pairs side by side, ${settings.pairRounds} and ${settings.ingestPairRounds} × ${settings.readDurationS} s, warmed twice a target's warm-up; feed paging 8: ${feedPlan.rounds} × ${feedPlan.durationS} s), interleaved in counterbalanced order (cold auth: ${settings.coldRounds} fresh processes per store); ratios are medians of per-round paired ratios; warm-up ${settings.warmupS} s (GETs ${settings.getWarmupS} s); wrk -t${settings.threads}; ${pinText()}; Intake with INTAKE_SIGNATURE_TOLERANCE_SECONDS=86400, INTAKE_GRPC_PORT=0`,
    `- whole run: ${elapsed.toFixed(0)} s; others' CPU ${whole.othersPct.toFixed(1)}% of all cores`,
  ];
  const markdown = renderMarkdown({ header, rows, series: allSeries, noise: noises });
  mkdirSync(RESULTS_DIR, { recursive: true });
  const name = smoke ? "smoke" : "latest";
  writeFileSync(join(RESULTS_DIR, `${name}.md`), markdown);
  writeFileSync(
    join(RESULTS_DIR, `${name}.json`),
    `${JSON.stringify({ settings, rows, series: allSeries, noise: noises, elapsedSeconds: elapsed }, null, 2)}\n`,
  );
  log(`\n${markdown}`);
  log(`bench: wrote bench/results/${name}.md and ${name}.json (${elapsed.toFixed(0)} s)`);
  if (settings.profile) log(`bench: CPU profiles (markdown) in ${PROFILE_DIR}`);

  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].filter(wanted)) {
    if (!rows.some((r) => r.scenario === n)) problems.push(`scenario ${n} produced no result`);
  }
  if (problems.length > 0) {
    log(`\nbench: ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    process.exitCode = 1;
  } else if (smoke) {
    log("bench:smoke: every scenario ran and answered 2xx (or was skipped with its reason above)");
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  for (const s of started) process.stderr.write(`--- ${s.name} log:\n${tail(`${s.logPath}.err`)}\n`);
  process.exitCode = 1;
} finally {
  for (const s of [...started]) await s.stop().catch(() => {});
  if (!flags.keep && existsSync(workDir)) rmSync(workDir, { recursive: true, force: true });
  else log(`bench: kept ${workDir}`);
}
