/**
 * Child processes of the harness: every one is tracked from spawn and killed on exit, on a
 * signal and on error, so a failed run never leaves a server or a wrk behind.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const REPO_ROOT = join(import.meta.dir, "../..");

const live = new Set<Subprocess>();

function killAll(): void {
  for (const child of live) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone: nothing to clean up.
    }
  }
  live.clear();
}

let hooked = false;
/** Installs the exit/signal hooks once; call before spawning anything. */
export function installCleanup(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

export function track<T extends Subprocess>(child: T): T {
  live.add(child);
  void child.exited.then(() => live.delete(child));
  return child;
}

/** Pids of the children still running (for CPU accounting). */
export function livePids(): number[] {
  return [...live].map((c) => c.pid);
}

/** A port the kernel just handed out on 127.0.0.1 (closed again before use; collisions are unlikely). */
export function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null) });
  const port = probe.port;
  void probe.stop(true);
  if (port === undefined) throw new Error("could not get a free port");
  return port;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A variable a hand-written floor cannot start without (bench/floor-*.ts). */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

/** The environment without anything that would point a child at another deployment. */
export function cleanEnv(overrides: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith("INTAKE_") || ["DATABASE_URL", "REDIS_URL", "PORT", "HOST"].includes(key)) continue;
    env[key] = value;
  }
  return { ...env, ...overrides };
}

export function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Polls `url` until it answers 200, the child dies, or `timeoutMs` passes (bounded loop). */
export async function waitReady(url: string, child: Subprocess, logPath: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`process exited (${child.exitCode ?? child.signalCode}) before ready; log:\n${tail(logPath)}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(50);
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms; log:\n${tail(logPath)}`);
}

/** SIGTERM (graceful: lets `--cpu-prof` write its profile), then SIGKILL after `graceMs`. */
export async function stop(child: Subprocess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const done = await Promise.race([child.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    child.kill("SIGKILL");
    await child.exited;
  }
}

/**
 * `bun <script>` from the repo root, `env` added to ours, as one of the bench's children; resolves
 * once it printed "ready" (the stalled readers, the paced sender), with its stdout's reader.
 */
export async function spawnReady(script: string, env: Record<string, string>) {
  const child = track(
    Bun.spawn(["bun", script], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdout: "pipe",
      stderr: "inherit",
      stdin: "ignore",
    }),
  );
  const stdout = child.stdout.getReader();
  const { value } = await stdout.read();
  if (!new TextDecoder().decode(value).includes("ready")) {
    child.kill("SIGKILL");
    throw new Error(`${script} did not start`);
  }
  return { child, stdout };
}

/** Runs a command to completion with a time limit; returns its exit code and output. */
export async function runCommand(
  cmd: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = track(
    Bun.spawn(cmd, {
      cwd: options.cwd ?? REPO_ROOT,
      env: options.env ?? cleanEnv({}),
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    }),
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  clearTimeout(timer);
  return { code: child.exitCode, stdout, stderr };
}

/** Peak and current resident set of a process, in MiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { hwmMiB: number; rssMiB: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { hwmMiB: kb("VmHWM") / 1024, rssMiB: kb("VmRSS") / 1024 };
  } catch {
    return null;
  }
}

/**
 * CPU time of every thread of `pid` so far, in ns: the first field of each
 * /proc/<pid>/task/<tid>/schedstat (time on a CPU, ns resolution; /proc/<pid>/stat counts
 * 10 ms ticks, too coarse for a cold-auth round of ~40 ms of work).
 */
export function processCpuNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return total;
}

/** Moves every thread of a running process onto `cpus` (`taskset -a -p -c`); threads it makes later inherit it. */
export async function pinProcess(pid: number, cpus: string): Promise<void> {
  const res = await runCommand(["taskset", "-a", "-p", "-c", cpus, String(pid)], { timeoutMs: 10_000 });
  if (res.code !== 0) throw new Error(`taskset -p ${cpus} ${pid} failed: ${res.stderr.trim()}`);
}
