/**
 * The harness the scenarios share (bench/scenarios/*.ts): targets, the two ways of running them
 * (`interleave`: one after the other, counterbalanced; `sideBySide`: a pair at once), pinning,
 * the rows' helpers, and the processes (Intake, the bare baseline, the hand-written floors).
 * bench/run.ts makes one per run from its flags and prints what the scenarios pushed to `rows`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Subprocess } from "bun";
import {
  type Bootstrapped,
  createService,
  type IntakeSpec,
  type Keys,
  makeKeys,
  type RunningIntake,
  startIntake,
} from "./intake.ts";
import { CORES, noiseSince, snapshot } from "./noise.ts";
import { signatureHeader } from "./pool.ts";
import { cleanEnv, freePort, pinProcess, processCpuNs, REPO_ROOT, track, waitReady } from "./procs.ts";
import {
  againstFloor,
  beside,
  besideRow,
  fmtMs,
  fmtRps,
  type Row,
  ratioRow,
  type Sample,
  type ScenarioNoise,
  type Series,
} from "./report.ts";
import { runWrk, type WrkRun } from "./wrk.ts";

/** The run's settings, from run.ts's flags (see there for why each is what it is). */
export interface Settings {
  smoke: boolean;
  rounds: number;
  coldRounds: number;
  durationS: number;
  readRounds: number;
  readDurationS: number;
  pairRounds: number;
  ingestPairRounds: number;
  warmupS: number;
  getWarmupS: number;
  threads: number;
  tokensSmall: number;
  tokensLarge: number;
  coldSample: number;
  servicesSeeded: number;
  pageDepth: number;
  poolSize: number;
  feedEvents: number;
  searchEvents: number;
  expiredEvents: { sqlite: number; postgres: number };
  /** Scenario 16: the incidents of its small and its large tenant. */
  incidentsSmall: number;
  incidentsLarge: number;
  profile: boolean;
  /** Scenario 2 also serves its floor from a process running Intake's app (--floor-in-intake). */
  floorInIntake: boolean;
  /** The read scenarios' CPUs: servers, then wrk; null: unpinned. */
  pin: { servers: string; client: string } | null;
}

export interface Target {
  label: string;
  run(durationS: number): Promise<Sample>;
  /** Its unmeasured first run; default `settings.warmupS` (see run.ts). */
  warmupS?: number;
}

/** How many rounds of how long each. */
export interface Plan {
  rounds: number;
  durationS: number;
}

/** A hand-written reference server: the bare baseline or a floor, as a child process. */
export interface Reference {
  url: string;
  child: Subprocess;
}

/**
 * Rate limits configured but far from spent (docs/rate-limits.md): no run comes near a billion
 * requests an hour, so every request pays the limiter's decision and its RateLimit fields, and
 * none is refused. Compared with the same scenario's limits-off Intake in the same run.
 */
export const UNSPENT_LIMIT = "1000000000/3600s";

export const sqlitePath = (s: IntakeSpec) => join(s.dataDir, "intake.sqlite");

export const PROFILE_DIR = join(REPO_ROOT, "bench/results/profiles");

/**
 * `target`, also recording the server's CPU µs per request of each run (all its threads) in
 * `into` (a warm-up's run included): what a request costs it, which a machine busy with other
 * work disturbs less than the throughput.
 */
export function withCpu(target: Target, pid: number, into: number[]): Target {
  return {
    ...target,
    async run(durationS) {
      const before = processCpuNs(pid);
      const sample = await target.run(durationS);
      into.push((processCpuNs(pid) - before) / 1000 / Math.max(1, sample.requests));
      return sample;
    },
  };
}

export type Harness = ReturnType<typeof createHarness>;

export function createHarness(settings: Settings, wanted: (n: number) => boolean) {
  const rows: Row[] = [];
  const allSeries: Series[] = [];
  const noises: ScenarioNoise[] = [];
  /** Smoke failures: a scenario that did not run or answered non-2xx. */
  const problems: string[] = [];
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const workDir = mkdtempSync(join(tmpdir(), "intake-bench-"));

  function pinText(): string {
    const pin = settings.pin;
    return pin
      ? `read scenarios (1, 2, 6, 11, 12, 16) pinned: servers on CPU ${pin.servers}, wrk on CPU ${pin.client} (2's one-after-the-other rounds, which judge its p99, unpinned)`
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
   * tail: bench/README.md, "Pinned reads, 10 short rounds, counterbalanced").
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
   * within about ±5% (ingest) and ±4% (reads) (bench/README.md, "Side by side, not one after
   * the other"). Each pair is warmed side by side first; the pairs run in
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

  /** A scenario's PostgreSQL part skipped because the server did not answer: said, and a row saying why. */
  function postgresSkipped(n: number, title: string, goal: string, unreachable: string): void {
    const why = `PostgreSQL at 127.0.0.1:5432 unreachable (${unreachable})`;
    log(`  SKIPPED (PostgreSQL): ${why}`);
    rows.push({ scenario: n, title, goal, measured: why, status: "skipped" });
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

  const INGEST_FLOOR_LABEL =
    "store-path floor: bare POST + Intake's signature and JSON checks, group committer, store adapter";

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

  return {
    settings,
    wanted,
    rows,
    allSeries,
    noises,
    problems,
    log,
    workDir,
    keys,
    started,
    pinText,
    pinned,
    unpinned,
    readScenario,
    wrkTarget,
    ingestTarget,
    bearerGet,
    check,
    defaultPlan,
    readPlan,
    pairPlan,
    ingestPairPlan,
    feedPlan,
    interleave,
    sideBySide,
    scenario,
    postgresSkipped,
    beside,
    againstFloor,
    ratioRow,
    besideRow,
    expectStatus,
    probeIngest,
    spec,
    start,
    stopIntake,
    startBaseline,
    startIngestFloor,
    INGEST_FLOOR_LABEL,
    serviceOf,
  };
}
