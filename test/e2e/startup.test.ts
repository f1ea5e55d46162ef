/**
 * `intake serve` refusing to start, through the real CLI: a busy port, a host that is not
 * one, a store that cannot be opened. Each ends the process with exit 1 and one stderr line
 * that names the variable. And the startup log reports the cache that actually serves.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";

const ROOT = join(import.meta.dir, "..", "..");
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "intake-startup-"));
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

function env(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", INTAKE_DATA_DIR: dataDir, PORT: "0", INTAKE_GRPC_PORT: "0", ...extra };
}

/** Runs `serve` expecting it to refuse; a server that starts instead is killed after 15 s. */
function refusedServe(extra: Record<string, string>) {
  const child = Bun.spawnSync(["bun", "src/cli.ts", "serve"], {
    cwd: ROOT,
    env: env(extra),
    stdout: "pipe",
    stderr: "pipe",
    timeout: 15_000,
  });
  return { code: child.exitCode, stdout: child.stdout.toString(), stderr: child.stderr.toString() };
}

async function holdPort(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/**
 * The first stdout line holding `"msg":"<message>"`; the stream is drained after it, since a
 * server whose stdout pipe is closed dies on its next log line.
 */
async function logLine(stream: ReadableStream<Uint8Array>, message: string): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`no "${message}" line; stdout was:\n${text}`);
    text += decoder.decode(value, { stream: true });
    const line = text.split("\n").find((l) => l.includes(`"msg":"${message}"`));
    if (line !== undefined) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })();
      return line;
    }
  }
}

const PEPPER = "p".repeat(32);
const KEY = Buffer.alloc(32, 7).toString("base64");

test("a second serve on a busy PORT exits 1 with one line naming PORT (it does not share the port)", async () => {
  const first = Bun.spawn(["bun", "src/cli.ts", "serve"], {
    cwd: ROOT,
    env: env({ PORT: "0" }),
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const line = await logLine(first.stdout, "intake listening");
    const port = Number(/"url":"http:\/\/127\.0\.0\.1:(\d+)\//.exec(line)?.[1]);
    expect(port).toBeGreaterThan(0);
    const second = refusedServe({ PORT: String(port) });
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`PORT=${port}`);
    expect(lines[0]).toContain("in use");
    expect(second.stdout).not.toContain("intake listening");
  } finally {
    first.kill("SIGKILL");
    await first.exited;
  }
});

test("a busy INTAKE_GRPC_PORT exits 1 with one line naming INTAKE_GRPC_PORT", async () => {
  const held = await holdPort();
  try {
    const port = (held.address() as { port: number }).port;
    const { code, stderr, stdout } = refusedServe({ INTAKE_GRPC_PORT: String(port) });
    expect(code).toBe(1);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`INTAKE_GRPC_PORT=${port}`);
    expect(lines[0]).toContain("in use");
    expect(stdout).not.toContain("intake listening");
  } finally {
    held.close();
  }
});

test("HOST=not-a-host exits 1 with one line naming HOST (not EINVAL)", () => {
  const { code, stderr } = refusedServe({ HOST: "not-a-host" });
  expect(code).toBe(1);
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("HOST=not-a-host");
});

test("an unreachable PostgreSQL: one line naming DATABASE_URL, the host and the cause, never the password", () => {
  const { code, stderr } = refusedServe({
    DATABASE_URL: "postgres://nobody:hunter2secret@127.0.0.1:1/x",
    INTAKE_TOKEN_PEPPER: PEPPER,
    INTAKE_SECRETS_KEY: KEY,
  });
  expect(code).toBe(1);
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("DATABASE_URL");
  expect(lines[0]).toContain("nobody@127.0.0.1:1/x");
  expect(lines[0]).toMatch(/refused/i);
  expect(stderr).not.toContain("hunter2secret");
});

test("a SQLite path in a missing directory: one line naming DATABASE_URL, the path and why", () => {
  const { code, stderr } = refusedServe({ DATABASE_URL: "sqlite:/nonexistent/dir/x.sqlite" });
  expect(code).toBe(1);
  const lines = stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("DATABASE_URL");
  expect(lines[0]).toContain("/nonexistent/dir/x.sqlite");
  expect(lines[0]).toContain("/nonexistent/dir does not exist");
});

test('the startup line says "cache":"memory" while the configured Redis is down, not "redis"', async () => {
  const held = await holdPort();
  const deadPort = (held.address() as { port: number }).port;
  held.close();
  const child = Bun.spawn(["bun", "src/cli.ts", "serve"], {
    cwd: ROOT,
    env: env({ REDIS_URL: `redis://127.0.0.1:${deadPort}` }),
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const listening = JSON.parse(await logLine(child.stdout, "intake listening")) as Record<string, unknown>;
    expect(listening).toMatchObject({ cache: "memory" });
    expect(String(listening?.redis)).toContain("unreachable");
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
});

const redisUp = await serviceAvailable("redis");
if (!redisUp) console.log(`SKIP: startup line with a reachable Redis: none at ${TEST_REDIS_URL}`);

test.if(redisUp)('the startup line says "cache":"redis" when the configured Redis is reachable', async () => {
  const child = Bun.spawn(["bun", "src/cli.ts", "serve"], {
    cwd: ROOT,
    env: env({ REDIS_URL: TEST_REDIS_URL, INTAKE_REDIS_KEY_PREFIX: `startup-${crypto.randomUUID()}` }),
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const listening = JSON.parse(await logLine(child.stdout, "intake listening")) as Record<string, unknown>;
    expect(listening).toMatchObject({ cache: "redis" });
    expect(listening.redis).toBeUndefined();
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
});
