/**
 * `intake serve` refusing to start, through the real CLI: a busy port, a host that is not
 * one, a store that cannot be opened or that another server already serves. Each ends the
 * process with exit 1 and one stderr line that names the variable. And the startup log
 * reports the cache that actually serves, and health turns green only once both listeners accept.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serviceAvailable, TEST_REDIS_URL } from "../support/services.ts";
import { postgresUrlFor } from "../support/stack.ts";

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
    // Its own store: the same one would be refused before the port is tried (below).
    const second = refusedServe({ PORT: String(port), DATABASE_URL: "sqlite::memory:" });
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

/** Resolves when a TCP connection to 127.0.0.1:port is accepted; rejects with the error (ECONNREFUSED) otherwise. */
function tcpAccepts(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve();
    });
    socket.once("error", reject);
  });
}

async function freePort(): Promise<number> {
  const held = await holdPort();
  const port = (held.address() as { port: number }).port;
  await new Promise<void>((resolve) => held.close(() => resolve()));
  return port;
}

test("a second serve on a SQLite store already served exits 1 naming the first's pid; a killed server's lock does not block a restart", async () => {
  const own = mkdtempSync(join(tmpdir(), "intake-startup-lock-"));
  const serveIn = () =>
    Bun.spawn(["bun", "src/cli.ts", "serve"], {
      cwd: ROOT,
      env: env({ INTAKE_DATA_DIR: own }),
      stdout: "pipe",
      stderr: "pipe",
    });
  const first = serveIn();
  let restarted: ReturnType<typeof serveIn> | undefined;
  try {
    const url = JSON.parse(await logLine(first.stdout, "intake listening")).url as string;
    const second = refusedServe({ INTAKE_DATA_DIR: own });
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("INTAKE_DATA_DIR");
    expect(lines[0]).toContain(join(own, "intake.sqlite"));
    expect(lines[0]).toContain(`already served by another intake (pid ${first.pid}, listening at ${url}`);
    expect(second.stdout).not.toContain("intake listening");
    // The first still serves.
    expect((await fetch(`${url}v1/health`)).status).toBe(200);

    // Killed without a chance to clean up: its lock goes with it, its record stays behind.
    first.kill("SIGKILL");
    await first.exited;
    expect(existsSync(join(own, "intake.sqlite.serving.json"))).toBe(true);
    restarted = serveIn();
    const again = JSON.parse(await logLine(restarted.stdout, "intake listening")) as { url: string };
    expect((await fetch(`${again.url}v1/health`)).status).toBe(200);
  } finally {
    first.kill("SIGKILL");
    restarted?.kill("SIGKILL");
    await Promise.all([first.exited, restarted?.exited]);
    rmSync(own, { recursive: true, force: true });
  }
}, 60_000);

test("GET /v1/health answers 200 only once the gRPC listener accepts: a caller dialing gRPC at the first 200 is never refused", async () => {
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const child = Bun.spawn(["bun", "src/cli.ts", "serve"], {
    cwd: ROOT,
    env: env({ DATABASE_URL: "sqlite::memory:", PORT: String(httpPort), INTAKE_GRPC_PORT: String(grpcPort) }),
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error("GET /v1/health never answered 200");
      const status = await fetch(`http://127.0.0.1:${httpPort}/v1/health`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
    }
    // No wait in between: the probe just turned green.
    await tcpAccepts(grpcPort);
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
}, 30_000);

const postgresUp = await serviceAvailable("postgres");

test.if(postgresUp)(
  'a PostgreSQL database that does not exist: one line naming DATABASE_URL and `database "<name>" does not exist`',
  () => {
    const name = `intake_missing_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const { code, stderr } = refusedServe({
      DATABASE_URL: postgresUrlFor(name),
      INTAKE_TOKEN_PEPPER: PEPPER,
      INTAKE_SECRETS_KEY: KEY,
    });
    expect(code).toBe(1);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("DATABASE_URL");
    expect(lines[0]).toContain(`database "${name}" does not exist`);
    expect(lines[0]).not.toContain("sqlstate");
  },
);
