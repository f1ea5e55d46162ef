/**
 * docs/feed.md's consumers, run exactly as written against a real `serve`: the curl long poll
 * (by bash, in an empty directory, as a reader would paste it) and the @grpc/grpc-js stream (a
 * script beside `proto/` and `node_modules`, as in a project of its own). Each must print the
 * event ingested before and leave its cursor in cursor.txt. And docs/rpc.md's service table
 * lists every service and method the .proto files declare.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, type IntakeProcess, runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { sign } from "../support/signing.ts";

const ROOT = join(import.meta.dir, "../..");
const FEED_MD = readFileSync(join(ROOT, "docs/feed.md"), "utf8");
const TOOLS = ["bash", "curl", "jq", "setsid"];
const missing = TOOLS.filter((tool) => Bun.which(tool) === null);
const required = process.env.INTAKE_REQUIRE_SERVICES === "1";
if (missing.length > 0 && !required) console.log(`SKIP: docs/feed.md's curl long poll: missing ${missing.join(", ")}`);

/** The first fenced block of `lang` under the heading `heading`. */
function snippet(heading: string, lang: string): string {
  const section = FEED_MD.slice(FEED_MD.indexOf(`### ${heading}\n`));
  const block = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1];
  if (!block) throw new Error(`docs/feed.md has no \`\`\`${lang} block under "### ${heading}"`);
  return block;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs `command` in `cwd` (in a session of its own, so that the curl or bun it starts goes
 * with it) until its stdout holds `expected` and it has saved cursor.txt, then kills the whole
 * group; returns the stdout.
 */
async function runUntilSaved(command: string[], cwd: string, env: Record<string, string>, expected: string) {
  const proc = Bun.spawn(["setsid", ...command], {
    cwd,
    env: { ...cleanEnv(), ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  let stdout = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) stdout += decoder.decode(chunk, { stream: true });
  })();
  const done = () => stdout.includes(expected) && existsSync(join(cwd, "cursor.txt"));
  const deadline = Date.now() + 20_000;
  while (!done() && proc.exitCode === null && Date.now() < deadline) await Bun.sleep(50);
  try {
    process.kill(-proc.pid, "SIGKILL");
  } catch {
    // already gone
  }
  await proc.exited;
  if (!done()) throw new Error(`no ${expected} and cursor.txt from it:\n${stdout}\n${await stderr}`);
  return stdout;
}

let dataDir: string;
let server: IntakeProcess;
let token: string;
let eventId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "intake-docs-snippets-"));
  const env = { INTAKE_DATA_DIR: dataDir };
  token = (
    JSON.parse(await runCli(["bootstrap", "--tenant-name", "Docs", "--create", "--json"], env)) as { token: string }
  ).token;
  server = await startIntake("docs", { ...env, INTAKE_GRPC_PORT: String(await freePort()) });
  const created = await server.fetch("/v1/services", {
    method: "POST",
    token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ service_name: "billing" }),
  });
  const service = (await created.json()) as { id: string; signing_secret: string };
  const payload = '{"type":"invoice.paid"}';
  const ingested = await server.fetch(`/v1/ingest/${service.id}`, {
    method: "POST",
    headers: { "x-service-signature": sign(service.signing_secret, payload, Date.now()) },
    body: payload,
  });
  expect(ingested.status).toBe(202);
  eventId = ((await ingested.json()) as { id: string }).id;
}, 60_000);

afterAll(async () => {
  await stopAll();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("docs/feed.md's consumers, pasted as written", () => {
  test.skipIf(missing.length > 0 && !required)(
    "the curl long poll prints the stored event and saves its cursor in cursor.txt",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "intake-long-poll-"));
      try {
        const out = await runUntilSaved(
          ["bash", "-c", snippet("Long poll with curl", "sh")],
          dir,
          { TOKEN: token, API: server.base },
          eventId,
        );
        expect(JSON.parse(out.split("\n")[0] as string)).toMatchObject({
          id: eventId,
          payload: { type: "invoice.paid" },
        });
        expect(readFileSync(join(dir, "cursor.txt"), "utf8").trim()).toMatch(/^[A-Za-z0-9_-]+$/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    30_000,
  );

  test.skipIf(Bun.which("setsid") === null && !required)(
    "the @grpc/grpc-js stream finds feed.proto under proto/, prints the stored event and saves its cursor",
    async () => {
      // A consumer's own project: the script, this repository's proto/ folder, and the two packages.
      const dir = mkdtempSync(join(tmpdir(), "intake-grpc-js-"));
      try {
        symlinkSync(join(ROOT, "proto"), join(dir, "proto"));
        symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
        writeFileSync(join(dir, "consume.ts"), snippet("@grpc/grpc-js", "ts"));
        const out = await runUntilSaved(
          ["bun", "consume.ts"],
          dir,
          { INTAKE_TOKEN: token, INTAKE_GRPC: `127.0.0.1:${server.grpcPort}` },
          eventId,
        );
        expect(JSON.parse(out.split("\n")[0] as string)).toMatchObject({
          id: eventId,
          payload: '{"type":"invoice.paid"}',
        });
        expect(readFileSync(join(dir, "cursor.txt"), "utf8")).toMatch(/^[A-Za-z0-9_-]+$/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    30_000,
  );
});

test("docs/rpc.md's service table lists every service and method of proto/intake/v1", () => {
  const rpcMd = readFileSync(join(ROOT, "docs/rpc.md"), "utf8");
  const rows = new Map(
    [...rpcMd.matchAll(/^\| `intake\.v1\.(\w+)`\s*\|([^|]*)\|/gm)].map((m) => [m[1] as string, m[2] as string]),
  );
  const declared: string[] = [];
  for (const file of readdirSync(join(ROOT, "proto/intake/v1"))) {
    const proto = readFileSync(join(ROOT, "proto/intake/v1", file), "utf8");
    for (const service of proto.matchAll(/^service (\w+) \{([\s\S]*?)^\}/gm)) {
      const name = service[1] as string;
      declared.push(name);
      for (const rpc of (service[2] as string).matchAll(/^\s*rpc (\w+)\(/gm)) {
        expect(`${name}: ${rows.get(name) ?? "(no row)"}`).toContain(rpc[1] as string);
      }
    }
  }
  expect([...rows.keys()].sort()).toEqual(declared.sort());
});
