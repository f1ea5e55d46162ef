/**
 * Intake under test: `bun src/cli.ts serve` as a child process on a temp data dir (or a
 * scratch PostgreSQL database), bootstrapped through the CLI like an operator would.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { cleanEnv, freePort, REPO_ROOT, runCommand, stop, track, waitReady } from "./procs.ts";

export interface Keys {
  /** INTAKE_TOKEN_PEPPER: the seeding code hashes with the same one. */
  pepper: string;
  /** INTAKE_SECRETS_KEY as base64, and its bytes. */
  secretsKeyBase64: string;
  secretsKey: Uint8Array;
}

export function makeKeys(): Keys {
  const secretsKey = crypto.getRandomValues(new Uint8Array(32));
  return {
    pepper: `bench-pepper-${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex")}`,
    secretsKeyBase64: Buffer.from(secretsKey).toString("base64"),
    secretsKey,
  };
}

export interface IntakeSpec {
  name: string;
  dataDir: string;
  keys: Keys;
  /** Extra variables: DATABASE_URL, INTAKE_INGEST_COMMIT, ... */
  env?: Record<string, string>;
  /** Directory for `bun --cpu-prof` output; unset: no profiler. */
  profileDir?: string;
  /** The checkout to run (`bun src/cli.ts` there); unset: this one. A before/after pair runs two. */
  checkout?: string;
}

/**
 * Signed requests are generated once per run, before the load: the tolerance is raised to
 * its maximum (86400 s) for the bench processes so they stay valid however long the run is.
 */
export const BENCH_TOLERANCE_SECONDS = "86400";

function intakeEnv(spec: IntakeSpec, port: number): Record<string, string> {
  mkdirSync(spec.dataDir, { recursive: true, mode: 0o700 });
  return cleanEnv({
    HOST: "127.0.0.1",
    PORT: String(port),
    INTAKE_GRPC_PORT: "0",
    INTAKE_DATA_DIR: spec.dataDir,
    INTAKE_TOKEN_PEPPER: spec.keys.pepper,
    INTAKE_SECRETS_KEY: spec.keys.secretsKeyBase64,
    INTAKE_SIGNATURE_TOLERANCE_SECONDS: BENCH_TOLERANCE_SECONDS,
    ...spec.env,
  });
}

export interface Bootstrapped {
  tenantId: string;
  tokenId: string;
  token: string;
}

/** `bun src/cli.ts bootstrap --tenant-name ... --json --create` (a fresh store; applies migrations first). */
export async function bootstrap(spec: IntakeSpec): Promise<Bootstrapped> {
  const res = await runCommand(
    ["bun", "src/cli.ts", "bootstrap", "--tenant-name", `bench ${spec.name}`, "--json", "--create"],
    {
      cwd: spec.checkout,
      env: intakeEnv(spec, 0),
      timeoutMs: 60_000,
    },
  );
  if (res.code !== 0) throw new Error(`bootstrap (${spec.name}) failed: ${res.stderr.trim() || res.stdout.trim()}`);
  const out = JSON.parse(res.stdout.trim().split("\n").pop() ?? "{}") as Record<string, unknown>;
  const { tenant_id, token_id, token } = out;
  if (typeof tenant_id !== "string" || typeof token_id !== "string" || typeof token !== "string") {
    throw new Error(`bootstrap (${spec.name}) printed ${res.stdout}`);
  }
  return { tenantId: tenant_id, tokenId: token_id, token };
}

export interface RunningIntake {
  name: string;
  url: string;
  pid: number;
  child: Subprocess;
  logPath: string;
  stop(): Promise<void>;
}

export async function startIntake(spec: IntakeSpec): Promise<RunningIntake> {
  const port = freePort();
  const logPath = join(spec.dataDir, `${spec.name}.log`);
  const profiler = spec.profileDir
    ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${spec.profileDir}`, `--cpu-prof-name=${spec.name}.md`]
    : [];
  if (spec.profileDir) mkdirSync(spec.profileDir, { recursive: true });
  const child = track(
    Bun.spawn(["bun", ...profiler, "src/cli.ts", "serve"], {
      cwd: spec.checkout ?? REPO_ROOT,
      env: intakeEnv(spec, port),
      stdout: Bun.file(logPath),
      stderr: Bun.file(`${logPath}.err`),
      stdin: "ignore",
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${url}/v1/health`, child, `${logPath}.err`);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return { name: spec.name, url, pid: child.pid, child, logPath, stop: () => stop(child) };
}

/** POST /v1/services with the owner token: the id and the signing secret (shown only here). */
export async function createService(url: string, token: string, name: string): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${url}/v1/services`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ service_name: name }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 201 || typeof body.id !== "string" || typeof body.signing_secret !== "string") {
    throw new Error(`create service failed: ${res.status} ${JSON.stringify(body)}`);
  }
  return { id: body.id, secret: body.signing_secret };
}
