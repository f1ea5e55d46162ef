/**
 * `intake setup-link` (docs/console.md) through the real CLI and a real `serve`: a server on an
 * empty store says how to get a link (never a code), the link carries a one-time code in its
 * fragment, and the code redeems once at POST /v1/setup. Without --base-url the link points at
 * the server serving the store (as it recorded itself beside it), else at HOST:PORT, saying so.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, runCli, startIntake, stopAll } from "../support/intake-process.ts";

const dataDir = mkdtempSync(join(tmpdir(), "intake-setup-link-"));
const env = { INTAKE_DATA_DIR: dataDir };

const ROOT = join(import.meta.dir, "../..");

/** `bun src/cli.ts <args>` expected to succeed; its stdout and its notes on stderr. */
async function runCliWithStderr(args: string[], extra: Record<string, string>) {
  const proc = Bun.spawn(["bun", "src/cli.ts", ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...extra },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]).finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`intake ${args.join(" ")} exited with ${code}:\n${stderr}`);
  return { stdout, stderr };
}

afterAll(async () => {
  await stopAll();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("intake setup-link", () => {
  test("serve on an empty store logs how to get a setup link; the link's code redeems once (201, then 401)", async () => {
    const server = await startIntake("empty", env);
    try {
      // Logged right after "intake listening", which is what startIntake waits for.
      for (let i = 0; i < 100 && !server.lines.some((l) => l.includes("setup-link")); i++) await Bun.sleep(20);
      expect(server.lines.some((l) => l.includes("setup-link"))).toBe(true);

      const before = Date.now();
      const out = JSON.parse(await runCli(["setup-link", "--json", "--base-url", server.base], env)) as {
        url: string;
        expires_at: string;
      };
      expect(Object.keys(out).sort()).toEqual(["expires_at", "url"]);
      const match = /^(.+)\/console\/setup#code=(setup_[0-9A-Za-z]{43})$/.exec(out.url);
      expect(match?.[1]).toBe(server.base);
      const expiresIn = Date.parse(out.expires_at) - before;
      expect(expiresIn).toBeGreaterThan(3_590_000);
      expect(expiresIn).toBeLessThan(3_660_000);

      const code = match?.[2] as string;
      const redeem = (tenant_name: string) =>
        server.fetch("/v1/setup", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ setup_code: code, tenant_name }),
        });
      expect((await redeem("From the link")).status).toBe(201);
      expect((await redeem("Twice")).status).toBe(401);
      expect(server.lines.join("\n")).not.toContain(code);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("run in a second shell without --base-url, the link points at the running server's PORT, and says so", async () => {
    // The server listens on a port the OS chose; this shell's environment names another.
    const server = await startIntake("elsewhere", env);
    try {
      const shell = { ...env, HOST: "127.0.0.1", PORT: "4123" };
      const { stdout, stderr } = await runCliWithStderr(["setup-link", "--json"], shell);
      const out = JSON.parse(stdout) as { url: string };
      expect(out.url).toStartWith(`${server.base}/console/setup#code=setup_`);
      expect(stderr).toContain(`pid ${server.proc.pid}`);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("with no server running, the link falls back to HOST:PORT and stderr says no server serves the store", async () => {
    const { stdout, stderr } = await runCliWithStderr(["setup-link", "--json"], {
      ...env,
      HOST: "127.0.0.1",
      PORT: "4124",
    });
    expect((JSON.parse(stdout) as { url: string }).url).toStartWith("http://127.0.0.1:4124/console/setup#code=");
    expect(stderr).toContain("no server is serving");
    expect(stderr).toContain("--base-url");
  }, 30_000);

  test("the link's base defaults to http://HOST:PORT, and --expires-in sets the expiry", async () => {
    const out = JSON.parse(
      await runCli(["setup-link", "--json", "--expires-in", "600"], { ...env, HOST: "127.0.0.1", PORT: "4123" }),
    ) as { url: string; expires_at: string };
    expect(out.url).toStartWith("http://127.0.0.1:4123/console/setup#code=setup_");
    expect(Date.parse(out.expires_at) - Date.now()).toBeLessThanOrEqual(600_000);
  }, 30_000);

  test("a data dir with no store is refused, naming INTAKE_DATA_DIR: a link is for a running server's store", async () => {
    const missing = join(dataDir, "not-here");
    await expect(runCli(["setup-link"], { INTAKE_DATA_DIR: missing })).rejects.toThrow(/INTAKE_DATA_DIR/);
  }, 30_000);

  test("--expires-in outside 60..604800 seconds is refused, naming the flag", async () => {
    await expect(runCli(["setup-link", "--expires-in", "5"], env)).rejects.toThrow(/--expires-in/);
  }, 30_000);
});
