/**
 * End to end through the real CLI: `bootstrap` in a temp data dir, then `serve` as a child
 * process on a free port, answering real fetch calls; SIGTERM drains in-flight requests and
 * exits 0.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..", "..");
let dataDir: string;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    INTAKE_DATA_DIR: dataDir,
    INTAKE_GRPC_PORT: "0",
    ...extra,
  };
}

function cli(args: string[]) {
  const child = Bun.spawnSync(["bun", "src/cli.ts", ...args], {
    cwd: ROOT,
    env: env(),
    stdout: "pipe",
    stderr: "pipe",
    timeout: 30_000,
  });
  return { code: child.exitCode, stdout: child.stdout.toString(), stderr: child.stderr.toString() };
}

interface Bootstrap {
  tenant_id: string;
  token_id: string;
  token: string;
}

function parseLine(stdout: string): Bootstrap {
  const lines = stdout.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  const out = JSON.parse(lines[0] as string);
  expect(Object.keys(out).sort()).toEqual(["tenant_id", "token", "token_id"]);
  expect(out.tenant_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(out.token_id).toMatch(/^tok_[0-9a-f]{32}$/);
  expect(out.token).toMatch(/^service_live_[0-9A-Za-z]{43}$/);
  return out;
}

/** A line-by-line reader over a child's stdout, so the test can wait for a log line. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of stream) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        lines.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf("\n");
      }
      for (const wake of waiters.splice(0)) wake();
    }
    if (buffer) lines.push(buffer);
    for (const wake of waiters.splice(0)) wake();
  })();
  return {
    lines,
    done,
    async waitFor(match: (line: string) => boolean, ms = 20_000): Promise<string> {
      const deadline = Date.now() + ms;
      for (;;) {
        const hit = lines.find(match);
        if (hit !== undefined) return hit;
        if (Date.now() > deadline) throw new Error(`timed out waiting for a log line; got:\n${lines.join("\n")}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(100)]);
      }
    },
  };
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "intake-e2e-"));
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe("intake CLI end to end", () => {
  let first: Bootstrap;
  let recovery: Bootstrap;

  test("bootstrap refuses a store that does not exist yet: exit 1 naming INTAKE_DATA_DIR and the path, nothing written", () => {
    const { code, stdout, stderr } = cli(["bootstrap", "--tenant-name", "Acme E2E", "--json"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("INTAKE_DATA_DIR");
    expect(stderr).toContain(join(dataDir, "intake.sqlite"));
    expect(stderr).toContain("--create");
    expect(readdirSync(dataDir)).toEqual([]);
  });

  test("bootstrap refuses a data dir that does not exist (another working directory or INTAKE_DATA_DIR) and creates nothing", () => {
    const elsewhere = join(dataDir, "not-here");
    const child = Bun.spawnSync(["bun", "src/cli.ts", "bootstrap", "--tenant-name", "x", "--json"], {
      cwd: ROOT,
      env: { ...env(), INTAKE_DATA_DIR: elsewhere },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(child.exitCode).toBe(1);
    expect(child.stderr.toString()).toContain(`INTAKE_DATA_DIR=${elsewhere}`);
    expect(existsSync(elsewhere)).toBe(false);
  });

  test("migrate in a directory with no store exits 1 saying to run it where the server runs or pass --create; creates nothing", () => {
    const empty = join(dataDir, "empty-migrate");
    const child = Bun.spawnSync(["bun", "src/cli.ts", "migrate"], {
      cwd: ROOT,
      env: { ...env(), INTAKE_DATA_DIR: empty },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(child.exitCode).toBe(1);
    const stderr = child.stderr.toString();
    expect(stderr).toContain(`INTAKE_DATA_DIR=${empty}`);
    expect(stderr).toContain("--create");
    expect(stderr).not.toContain("does not exist");
    expect(existsSync(empty)).toBe(false);
  });

  test("migrate --create makes the store and its directory (0700), then reports where", () => {
    const fresh = join(dataDir, "migrate-create", "data");
    const child = Bun.spawnSync(["bun", "src/cli.ts", "migrate", "--create"], {
      cwd: ROOT,
      env: { ...env(), INTAKE_DATA_DIR: fresh },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    });
    expect(child.exitCode).toBe(0);
    expect(child.stdout.toString()).toBe(`migrations applied (sqlite): SQLite file ${join(fresh, "intake.sqlite")}\n`);
    expect((statSync(fresh).mode & 0o777).toString(8)).toBe("700");
    rmSync(join(dataDir, "migrate-create"), { recursive: true, force: true });
  });

  test("bootstrap --create --tenant-name X --json prints one JSON line {tenant_id, token_id, token}; the store goes to stderr", () => {
    const { code, stdout, stderr } = cli(["bootstrap", "--tenant-name", "Acme E2E", "--json", "--create"]);
    expect(code).toBe(0);
    expect(stderr).toBe(`store: SQLite file ${join(dataDir, "intake.sqlite")}\n`);
    first = parseLine(stdout);
  });

  test("bootstrap without --json names the store it wrote to on stdout", () => {
    const { code, stdout, stderr } = cli(["bootstrap", "--tenant-name", "Plain Output"]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout.split("\n")[0]).toBe(`store SQLite file ${join(dataDir, "intake.sqlite")}`);
    expect(stdout).toMatch(/^token service_live_/m);
  });

  test("bootstrap of a second tenant with a name already taken succeeds and says so on stderr", () => {
    const { code, stdout, stderr } = cli(["bootstrap", "--tenant-name", "Acme E2E", "--json"]);
    expect(code).toBe(0);
    expect(parseLine(stdout).tenant_id).not.toBe(first.tenant_id);
    expect(stderr).toContain('1 other tenant(s) in this store are also named "Acme E2E"');
  });

  test("bootstrap --tenant-id mints a fresh owner token for that tenant (operator recovery)", () => {
    const { code, stdout } = cli(["bootstrap", "--tenant-id", first.tenant_id, "--json"]);
    expect(code).toBe(0);
    recovery = parseLine(stdout);
    expect(recovery.tenant_id).toBe(first.tenant_id);
    expect(recovery.token_id).not.toBe(first.token_id);
    expect(recovery.token).not.toBe(first.token);
  });

  test("bootstrap --tenant-id of an unknown or malformed tenant fails with a message, prints no token", () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "nope"]) {
      const { code, stdout, stderr } = cli(["bootstrap", "--tenant-id", id, "--json"]);
      expect(code).not.toBe(0);
      expect(stdout).toBe("");
      expect(stderr).toContain("not_found");
    }
  });

  test("a data dir Intake creates is 0700, its files 0600", () => {
    const fresh = join(dataDir, "fresh", "data");
    const child = Bun.spawnSync(["bun", "src/cli.ts", "bootstrap", "--tenant-name", "Fresh", "--json", "--create"], {
      cwd: ROOT,
      env: { ...env(), INTAKE_DATA_DIR: fresh },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    });
    expect(child.exitCode).toBe(0);
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    expect([mode(join(dataDir, "fresh")), mode(fresh)]).toEqual(["700", "700"]);
    for (const file of readdirSync(fresh)) expect([file, mode(join(fresh, file))]).toEqual([file, "600"]);
    rmSync(join(dataDir, "fresh"), { recursive: true, force: true });
  });

  test("bootstrap refuses DATABASE_URL=sqlite::memory: (the CLI cannot reach a server's memory)", () => {
    const child = Bun.spawnSync(["bun", "src/cli.ts", "bootstrap", "--tenant-name", "x", "--json"], {
      cwd: ROOT,
      env: env({ DATABASE_URL: "sqlite::memory:" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(child.exitCode).not.toBe(0);
    expect(child.stdout.toString()).toBe("");
    expect(child.stderr.toString()).toContain("sqlite::memory:");
  });

  test("bootstrap with both or neither of --tenant-name/--tenant-id, or a bad mode, fails", () => {
    expect(cli(["bootstrap", "--json"]).code).not.toBe(0);
    expect(cli(["bootstrap", "--tenant-name", "a", "--tenant-id", first.tenant_id, "--json"]).code).not.toBe(0);
    expect(cli(["bootstrap", "--tenant-name", "a", "--permission-mode", "anarchy", "--json"]).code).not.toBe(0);
  });

  describe("serve", () => {
    let child: Subprocess<"ignore", "pipe", "pipe">;
    let stdout: ReturnType<typeof lineReader>;
    let base: string;

    beforeAll(async () => {
      child = Bun.spawn(["bun", "src/cli.ts", "serve"], {
        cwd: ROOT,
        env: env({ PORT: "0", HOST: "127.0.0.1", INTAKE_BUILD: "e2e" }),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      stdout = lineReader(child.stdout);
      const line = await stdout.waitFor((l) => l.includes('"intake listening"'));
      base = JSON.parse(line).url.replace(/\/$/, "");
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    });

    afterAll(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await child.exited;
    });

    test("every file Intake created in the data dir is 0600: database, -wal, -shm and the keys", async () => {
      // A write while serving, so that the WAL and its index exist now.
      cli(["bootstrap", "--tenant-name", "Modes", "--json"]);
      const files = readdirSync(dataDir).sort();
      expect(files).toEqual(
        expect.arrayContaining([
          "intake.sqlite",
          "intake.sqlite-shm",
          "intake.sqlite-wal",
          "secrets_key",
          "token_pepper",
        ]),
      );
      const modes = Object.fromEntries(files.map((f) => [f, (statSync(join(dataDir, f)).mode & 0o777).toString(8)]));
      expect(modes).toEqual(Object.fromEntries(files.map((f) => [f, "600"])));
    });

    test("200 GET /v1/health over a real socket, with the INTAKE_BUILD version", async () => {
      const res = await fetch(`${base}/v1/health`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
      expect(((await res.json()) as { version: string }).version).toEndWith("+e2e");
    });

    test("bootstrap --permission-mode flat (run beside the server) makes a tenant that reports flat", async () => {
      const { stdout } = cli(["bootstrap", "--tenant-name", "Flat Two", "--permission-mode", "flat", "--json"]);
      const flat = parseLine(stdout);
      const res = await fetch(`${base}/v1/tenant`, { headers: { authorization: `Bearer ${flat.token}` } });
      expect(await res.json()).toMatchObject({ id: flat.tenant_id, permission_mode: "flat" });
    });

    test("the bootstrap and the recovery tokens both authenticate real fetch calls", async () => {
      for (const token of [first.token, recovery.token]) {
        const res = await fetch(`${base}/v1/tenant`, { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({
          id: first.tenant_id,
          name: "Acme E2E",
          permission_mode: "role_based",
        });
      }
    });

    test("the CLI's bootstrap and recovery are in the audit log: actor operator, request_id null", async () => {
      const res = await fetch(`${base}/v1/audit_events`, { headers: { authorization: `Bearer ${first.token}` } });
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: Array<Record<string, unknown>> };
      expect(data.map((e) => [e.action, e.actor, e.target, e.request_id])).toEqual([
        ["api_token.create", { type: "operator" }, { type: "api_token", id: recovery.token_id }, null],
        ["api_token.create", { type: "operator" }, { type: "api_token", id: first.token_id }, null],
        ["tenant.create", { type: "operator" }, { type: "tenant", id: first.tenant_id }, null],
      ]);
    });

    test("201 POST /v1/services and 401 without a token over the wire", async () => {
      const created = await fetch(`${base}/v1/services`, {
        method: "POST",
        headers: { authorization: `Bearer ${recovery.token}`, "content-type": "application/json" },
        body: JSON.stringify({ service_name: "e2e" }),
      });
      expect(created.status).toBe(201);
      const anonymous = await fetch(`${base}/v1/services`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("www-authenticate")).toStartWith("Bearer");
    });

    test("413 for a chunked body over 64 KiB sent over a real socket", async () => {
      const chunk = new TextEncoder().encode(" ".repeat(8192));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 12) controller.enqueue(chunk);
          else controller.close();
        },
      });
      const res = await fetch(`${base}/v1/services`, {
        method: "POST",
        headers: { authorization: `Bearer ${recovery.token}`, "content-type": "application/json" },
        body,
      });
      expect(res.status).toBe(413);
    });

    test("SIGTERM lets an in-flight request finish, then exits 0", async () => {
      const enc = new TextEncoder();
      let release: () => void = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let step = 0;
      // The request is sent with its body held back: it is in flight when SIGTERM arrives.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (step === 0) controller.enqueue(enc.encode('{"service_name":'));
          else if (step === 1) {
            await held;
            controller.enqueue(enc.encode('"drained"}'));
          } else controller.close();
          step++;
        },
      });
      const inFlight = fetch(`${base}/v1/services`, {
        method: "POST",
        headers: { authorization: `Bearer ${recovery.token}`, "content-type": "application/json" },
        body,
      });
      await Bun.sleep(300);
      child.kill("SIGTERM");
      await stdout.waitFor((l) => l.includes('"draining"'));
      release();
      const res = await inFlight;
      expect(res.status).toBe(201);
      expect(((await res.json()) as { service_name: string }).service_name).toBe("drained");
      expect(await child.exited).toBe(0);
      await stdout.done;
      expect(stdout.lines.some((l) => l.includes('"stopped"'))).toBe(true);
      // Where it listened is no longer claimed: setup-link falls back instead of pointing here.
      expect(existsSync(join(dataDir, "intake.sqlite.serving.json"))).toBe(false);
      // The listener is gone.
      await expect(fetch(`${base}/v1/health`)).rejects.toThrow();
    });

    test("the server's log holds none of the tokens used against it", async () => {
      await stdout.done;
      const text = stdout.lines.join("\n") + (await new Response(child.stderr).text());
      expect(text.length).toBeGreaterThan(0);
      for (const token of [first.token, recovery.token]) {
        expect(text).not.toContain(token);
        expect(text).not.toContain(token.slice(13));
      }
      expect(text).not.toMatch(/service_live_[0-9A-Za-z]{43}|whsec_[0-9A-Za-z]{43}/);
    });
  });
});
