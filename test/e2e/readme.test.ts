/**
 * README.md's curl walk-through, run exactly as written (the one ```sh block under "A walk
 * through with curl") by bash against a real `bun run intake serve` on a free port, with
 * `set -e -o pipefail` so that any step that fails fails the test. Needs curl, jq and openssl
 * like the README says; without them the test is skipped with one line (or fails under
 * INTAKE_REQUIRE_SERVICES=1).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..", "..");
const TOOLS = ["bash", "curl", "jq", "openssl"];
const missing = TOOLS.filter((tool) => Bun.which(tool) === null);
const required = process.env.INTAKE_REQUIRE_SERVICES === "1";
if (missing.length > 0 && !required) console.log(`SKIP: README walk-through: missing ${missing.join(", ")}`);

function walkThrough(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## A walk through with curl"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("README.md has no ```sh block under 'A walk through with curl'");
  return block;
}

let dataDir: string;
let server: Subprocess<"ignore", "pipe", "pipe"> | undefined;
let api = "";

beforeAll(async () => {
  if (missing.length > 0) return;
  dataDir = mkdtempSync(join(tmpdir(), "intake-readme-"));
  // `bun src/cli.ts` rather than `bun run intake`: a kill then reaches the server itself.
  server = Bun.spawn(["bun", "src/cli.ts", "serve"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      INTAKE_DATA_DIR: dataDir,
      PORT: "0",
      INTAKE_GRPC_PORT: "0",
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = server.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!api) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    api = /"url":"(http:\/\/127\.0\.0\.1:\d+)\//.exec(text)?.[1] ?? "";
  }
  // Keep reading: a server whose stdout pipe is closed dies on its next log line.
  void (async () => {
    while (!(await reader.read()).done) {}
  })();
  if (!api) throw new Error(`serve did not start:\n${text}`);
});

afterAll(async () => {
  if (server) {
    server.kill("SIGKILL");
    await server.exited;
  }
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test.if(missing.length === 0 || required)(
  "README's walk-through runs as pasted: every step succeeds, the event reads back, the token is revoked",
  () => {
    if (missing.length > 0) throw new Error(`INTAKE_REQUIRE_SERVICES=1 but ${missing.join(", ")} missing`);
    const run = Bun.spawnSync(["bash", "-e", "-o", "pipefail", "-c", walkThrough()], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", INTAKE_DATA_DIR: dataDir, API: api },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    });
    const stdout = run.stdout.toString();
    const stderr = run.stderr.toString();
    expect({ code: run.exitCode, stderr }).toEqual({
      code: 0,
      stderr: `store: SQLite file ${join(dataDir, "intake.sqlite")}\n`,
    });
    expect(stdout).not.toContain('"error"');
    // jq pretty-prints: the answers of steps 2, 4, 5, 6 and 7 in order.
    const ingested = /"id": "(evt_[0-9a-f]{32})"/.exec(stdout)?.[1];
    expect(ingested).toBeDefined();
    expect(stdout).toContain('"scope": "read_only"');
    expect(stdout).toContain('"type": "invoice.paid"');
    expect(stdout).toContain('"previous_secret_expires_at"');
    expect(stdout).toMatch(/"revoked_at": "\d{4}-\d\d-\d\dT/);
  },
);
