/**
 * Real `intake` processes for the multi-instance tests: `bun src/cli.ts serve` children on
 * ports the OS picks, and the CLI's one-shot commands. Every wait is bounded; `stopAll` ends
 * every child a test started (SIGTERM, then SIGKILL), for afterAll even on failure.
 */
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "../..");

/** The parent's environment without anything that would point a child at another deployment. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("INTAKE_") || k === "DATABASE_URL" || k === "REDIS_URL") continue;
    // A trace exporter is switched on per test (test/e2e/traces.test.ts), never inherited.
    if (k.startsWith("OTEL_")) continue;
    if (k === "PORT" || k === "HOST") continue;
    env[k] = v;
  }
  return env;
}

export interface IntakeProcess {
  name: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** http://127.0.0.1:<port> */
  base: string;
  /** The gRPC (h2c) listener's port; null when INTAKE_GRPC_PORT=0 was passed. */
  grpcPort: number | null;
  /** Every stdout/stderr line so far (JSON log lines), for failure messages. */
  lines: string[];
  fetch(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * How a child is started: the source checkout (`bun src/cli.ts`) by default, or another
 * command — the one-file build (`dist/intake`) copied into an empty directory.
 */
export interface Launch {
  command: string[];
  cwd: string;
}

const FROM_SOURCE: Launch = { command: ["bun", "src/cli.ts"], cwd: ROOT };

const started = new Set<IntakeProcess>();

/** Reads a stream line by line until it ends, so the child never blocks on a full pipe. */
async function pump(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let nl = pending.indexOf("\n");
    while (nl >= 0) {
      onLine(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      nl = pending.indexOf("\n");
    }
  }
  if (pending) onLine(pending);
}

async function stopProcess(proc: Subprocess, graceMs = 5_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!exited) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
}

/**
 * Starts `intake serve` with PORT=0 and learns the port from its "intake listening" log
 * line: asking the OS for a free port first and passing it on would race other tests.
 */
export async function startIntake(
  name: string,
  env: Record<string, string>,
  timeoutMs = 20_000,
  launch: Launch = FROM_SOURCE,
) {
  const proc = Bun.spawn([...launch.command, "serve"], {
    cwd: launch.cwd,
    env: { ...cleanEnv(), HOST: "127.0.0.1", PORT: "0", INTAKE_GRPC_PORT: "0", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  let announce: (url: string) => void = () => {};
  const listening = new Promise<string>((resolve) => {
    announce = resolve;
  });
  const onLine = (line: string) => {
    lines.push(line);
    if (!line.includes('"intake listening"')) return;
    try {
      const entry = JSON.parse(line) as { url?: unknown; grpc_port?: unknown };
      if (typeof entry.grpc_port === "number") handle.grpcPort = entry.grpc_port;
      if (typeof entry.url === "string") announce(entry.url);
    } catch {
      // not a log line
    }
  };
  void pump(proc.stdout, onLine);
  void pump(proc.stderr, onLine);

  const handle: IntakeProcess = {
    name,
    proc,
    base: "",
    grpcPort: null,
    lines,
    fetch(path, init = {}) {
      const { token, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token) headers.set("authorization", `Bearer ${token}`);
      return fetch(`${handle.base}${path}`, { ...rest, headers, signal: AbortSignal.timeout(10_000) });
    },
    stop: async () => {
      started.delete(handle);
      await stopProcess(proc);
    },
  };
  started.add(handle);

  let timer: ReturnType<typeof setTimeout> | undefined;
  const url = await Promise.race([
    listening,
    proc.exited.then((code) => {
      throw new Error(`${name} exited with ${code} before listening:\n${lines.join("\n")}`);
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${name} did not listen in ${timeoutMs} ms:\n${lines.join("\n")}`)),
        timeoutMs,
      );
    }),
  ])
    .catch(async (error: unknown) => {
      // A child that never listened is stopped here: no caller holds a handle to it.
      await handle.stop();
      throw error;
    })
    .finally(() => clearTimeout(timer));
  handle.base = url.replace(/\/$/, "");
  return handle;
}

/** Stops every child still running; for afterAll, whatever happened. */
export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((p) => p.stop()));
}

/** Runs `bun src/cli.ts <args>` (or `launch`'s command) to completion, bounded, and returns its stdout. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  launch: Launch = FROM_SOURCE,
): Promise<string> {
  const proc = Bun.spawn([...launch.command, ...args], {
    cwd: launch.cwd,
    env: { ...cleanEnv(), ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]).finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`intake ${args.join(" ")} exited with ${code}:\n${stderr}`);
  return stdout;
}
