/**
 * docs/incidents.md's senders, run exactly as written against a real `serve`: the curl + openssl
 * block by bash (only SERVICE, SECRET and API filled in, as a reader would), the TypeScript block
 * by bun in an empty directory (its three variables in the environment). Each posts a signed
 * trigger and then its resolve: both must be answered 202 naming one incident, which the API
 * then shows opened by the first and resolved by the second.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, type IntakeProcess, runCli, startIntake, stopAll } from "../support/intake-process.ts";

const ROOT = join(import.meta.dir, "../..");
const INCIDENTS_MD = readFileSync(join(ROOT, "docs/incidents.md"), "utf8");
const TOOLS = ["bash", "curl", "openssl", "cut", "date"];
const missing = TOOLS.filter((tool) => Bun.which(tool) === null);
const required = process.env.INTAKE_REQUIRE_SERVICES === "1";
if (missing.length > 0 && !required)
  console.log(`SKIP: docs/incidents.md's curl sender: missing ${missing.join(", ")}`);

/** The first fenced block of `lang` under the heading `heading`. */
function snippet(heading: string, lang: string): string {
  const at = INCIDENTS_MD.indexOf(`### ${heading}`);
  if (at < 0) throw new Error(`docs/incidents.md has no "### ${heading}"`);
  const block = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(INCIDENTS_MD.slice(at))?.[1];
  if (!block) throw new Error(`docs/incidents.md has no \`\`\`${lang} block under "### ${heading}"`);
  return block;
}

let dataDir: string;
let server: IntakeProcess;
let token: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "intake-incidents-snippets-"));
  const env = { INTAKE_DATA_DIR: dataDir };
  token = (
    JSON.parse(await runCli(["bootstrap", "--tenant-name", "Docs", "--create", "--json"], env)) as { token: string }
  ).token;
  server = await startIntake("incidents-docs", env);
}, 60_000);

afterAll(async () => {
  await stopAll();
  rmSync(dataDir, { recursive: true, force: true });
});

async function newService(name: string): Promise<{ id: string; secret: string }> {
  const res = await server.fetch("/v1/services", {
    method: "POST",
    token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ service_name: name }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { id: string; signing_secret: string };
  return { id: body.id, secret: body.signing_secret };
}

async function run(command: string[], cwd: string, env: Record<string, string>): Promise<string> {
  const proc = Bun.spawn(command, { cwd, env: { ...cleanEnv(), ...env }, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]).finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`${command.join(" ")} exited with ${code}:\n${err}`);
  return out;
}

interface Answer {
  status: number;
  id: string;
  dedup_key: string;
  incident_id: string;
}

/** The trigger's and the resolve's answers name one incident, now resolved by the second. */
async function expectOpenedThenResolved(answers: Answer[], key: string): Promise<void> {
  expect(answers).toHaveLength(2);
  const [trigger, resolve] = answers as [Answer, Answer];
  // Read before any toMatchObject: bun 1.4.5's writes an asymmetric matcher into the object it checks.
  const incidentId = trigger.incident_id as string;
  expect(incidentId).toMatch(/^inc_[0-9a-f]{32}$/);
  expect(trigger).toMatchObject({ status: 202, dedup_key: key, incident_id: incidentId });
  expect(resolve).toMatchObject({ status: 202, dedup_key: key, incident_id: incidentId });
  const res = await server.fetch(`/v1/incidents/${incidentId}`, { token });
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({
    dedup_key: key,
    status: "resolved",
    alert_count: 2,
    resolved_by: { type: "event", id: resolve.id },
  });
  const timeline = await server.fetch(`/v1/incidents/${incidentId}/events`, { token });
  const events = ((await timeline.json()) as { data: Array<{ id: string }> }).data.map((e) => e.id);
  expect(events).toEqual([trigger.id, resolve.id]);
}

test.skipIf(missing.length > 0 && !required)(
  "the curl + openssl sender's trigger and resolve are answered 202 and open, then resolve, one incident",
  async () => {
    const svc = await newService("curl-sender");
    const script = snippet("curl and openssl", "sh")
      .replace(/^API=.*$/m, `API='${server.base}'`)
      .replace(/^SERVICE=.*$/m, `SERVICE='${svc.id}'`)
      .replace(/^SECRET=.*$/m, `SECRET='${svc.secret}'`);
    const dir = mkdtempSync(join(tmpdir(), "intake-curl-sender-"));
    try {
      const out = await run(["bash", "-c", script], dir, {});
      const answers = out
        .trim()
        .split("\n")
        .map((line) => {
          const space = line.lastIndexOf(" ");
          return { status: Number(line.slice(space + 1)), ...JSON.parse(line.slice(0, space)) } as Answer;
        });
      expect(answers).toHaveLength(2);
      await expectOpenedThenResolved(answers, "disk/db-1");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  30_000,
);

test("the TypeScript sender's trigger and resolve are answered 202 and open, then resolve, one incident", async () => {
  const svc = await newService("ts-sender");
  const dir = mkdtempSync(join(tmpdir(), "intake-ts-sender-"));
  try {
    writeFileSync(join(dir, "send.ts"), snippet("TypeScript", "ts"));
    const out = await run(["bun", "send.ts"], dir, {
      INTAKE_URL: server.base,
      INTAKE_SERVICE: svc.id,
      INTAKE_SECRET: svc.secret,
    });
    const answers = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Answer);
    expect(answers).toHaveLength(2);
    await expectOpenedThenResolved(answers, "checkout/latency");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
