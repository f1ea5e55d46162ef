/**
 * Bad configuration through the real CLI (moved out of test/config.test.ts, which checks
 * parseConfig in process): `intake serve` exits 1 with one stderr line per problem, naming
 * the variable and never echoing a secret's value.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "intake-config-"));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the CLI at start", () => {
  function serve(env: Record<string, string>) {
    const dir = tempDir();
    const child = Bun.spawnSync(["bun", "src/cli.ts", "serve"], {
      cwd: join(import.meta.dir, "../.."),
      env: { PATH: process.env.PATH ?? "", INTAKE_DATA_DIR: dir, INTAKE_GRPC_PORT: "0", PORT: "0", ...env },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 20_000,
    });
    return { code: child.exitCode, stderr: child.stderr.toString(), stdout: child.stdout.toString() };
  }

  test("exit 1 with one stderr line naming the bad variable (INTAKE_ROTATION_GRACE_SECONDS)", () => {
    const { code, stderr, stdout } = serve({ INTAKE_ROTATION_GRACE_SECONDS: "soon" });
    expect(code).toBe(1);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("INTAKE_ROTATION_GRACE_SECONDS");
    expect(stdout).toBe("");
  });

  test("exit 1 with one line per missing variable for postgres without pepper and key", () => {
    const { code, stderr } = serve({ DATABASE_URL: "postgres://127.0.0.1:1/none" });
    expect(code).toBe(1);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines.some((l) => l.includes("INTAKE_TOKEN_PEPPER"))).toBe(true);
    expect(lines.some((l) => l.includes("INTAKE_SECRETS_KEY"))).toBe(true);
  });

  test("exit 1 with one line naming INTAKE_SECRETS_KEY for a key of the wrong length, not echoing it", () => {
    const key = Buffer.alloc(16, 9).toString("base64");
    const { code, stderr } = serve({ INTAKE_SECRETS_KEY: key });
    expect(code).toBe(1);
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain("INTAKE_SECRETS_KEY");
    expect(stderr).not.toContain(key);
  });
});
