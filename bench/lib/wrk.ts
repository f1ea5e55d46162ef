/**
 * wrk (Debian package `wrk`) as the load generator. Each run's Lua `done()` prints one
 * `BENCH_JSON {...}` line with throughput and latency percentiles from wrk's own histogram.
 */
import { join } from "node:path";
import { cleanEnv, REPO_ROOT, runCommand } from "./procs.ts";

const WRK_DIR = join(REPO_ROOT, "bench/wrk");

export interface WrkResult {
  requests: number;
  durationUs: number;
  rps: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  /** wrk's `errors.status`: responses with status >= 400. */
  non2xx: number;
  socketErrors: number;
  timeouts: number;
}

export interface WrkRun {
  url: string;
  connections: number;
  threads: number;
  durationS: number;
  /** A file in bench/wrk. */
  script: "get.lua" | "pool.lua";
  headers?: string[];
  /** Passed to the script's init(args). */
  args?: string[];
  /** The CPUs wrk may run on (`taskset -c`), when the harness pins a scenario (run.ts). */
  cpus?: string;
}

/** Finds wrk; installs it with apt-get when running as root, else exits with instructions. */
export async function ensureWrk(): Promise<string> {
  const found = Bun.which("wrk");
  if (found) return found;
  process.stderr.write("bench: wrk is not installed (Debian package `wrk`).\n");
  if (process.getuid?.() !== 0) {
    process.stderr.write("bench: install it with `sudo apt-get install -y wrk` and run again.\n");
    process.exit(2);
  }
  process.stderr.write("bench: running as root: apt-get install -y wrk\n");
  const env = cleanEnv({ DEBIAN_FRONTEND: "noninteractive" });
  let res = await runCommand(["apt-get", "install", "-y", "-qq", "wrk"], { env, timeoutMs: 300_000 });
  if (res.code !== 0) {
    // A fresh machine may have no package lists yet.
    await runCommand(["apt-get", "update", "-qq"], { env, timeoutMs: 300_000 });
    res = await runCommand(["apt-get", "install", "-y", "-qq", "wrk"], { env, timeoutMs: 300_000 });
  }
  const installed = Bun.which("wrk");
  if (res.code !== 0 || !installed) {
    process.stderr.write(`bench: apt-get install wrk failed:\n${res.stderr}\n`);
    process.exit(2);
  }
  return installed;
}

export async function runWrk(run: WrkRun): Promise<WrkResult> {
  const cmd = [
    ...(run.cpus ? ["taskset", "-c", run.cpus] : []),
    "wrk",
    `-t${run.threads}`,
    `-c${run.connections}`,
    `-d${run.durationS}s`,
    // Long enough that a slow fsync shows in p99 instead of as a timeout.
    "--timeout",
    "10s",
    "-s",
    join(WRK_DIR, run.script),
    ...(run.headers ?? []).flatMap((h) => ["-H", h]),
    run.url,
    ...(run.args && run.args.length > 0 ? ["--", ...run.args] : []),
  ];
  // Lua scripts load report.lua relative to the working directory.
  const res = await runCommand(cmd, { cwd: WRK_DIR, timeoutMs: (run.durationS + 30) * 1000 });
  const line = res.stdout.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (res.code !== 0 || !line) {
    throw new Error(`wrk failed (exit ${res.code}) for ${run.url}:\n${res.stdout}\n${res.stderr}`);
  }
  const raw = JSON.parse(line.slice("BENCH_JSON ".length)) as Record<string, number>;
  const num = (k: string) => {
    const v = raw[k];
    if (typeof v !== "number") throw new Error(`wrk report lacks ${k}: ${line}`);
    return v;
  };
  return {
    requests: num("requests"),
    durationUs: num("duration_us"),
    rps: num("rps"),
    p50Us: num("p50_us"),
    p99Us: num("p99_us"),
    maxUs: num("max_us"),
    non2xx: num("non2xx"),
    socketErrors: num("connect_errors") + num("read_errors") + num("write_errors"),
    timeouts: num("timeouts"),
  };
}
