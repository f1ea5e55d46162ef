/**
 * docs/ingest.md's Standard Webhooks curl + openssl sender, run by sh as written against a real
 * `serve` (only the service id, secret and address filled in): for a new standard_webhooks
 * service's secret, and for a stripe-form secret kept across a switch of scheme (whose 43
 * characters need the padding step), so the documented key derivation cannot drift.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, type IntakeProcess, runCli, startIntake, stopAll } from "../support/intake-process.ts";

const ROOT = join(import.meta.dir, "../..");
const INGEST_MD = readFileSync(join(ROOT, "docs/ingest.md"), "utf8");
const TOOLS = ["sh", "curl", "openssl", "base64", "od"];
const missing = TOOLS.filter((tool) => Bun.which(tool) === null);
const required = process.env.INTAKE_REQUIRE_SERVICES === "1";
if (missing.length > 0 && !required) console.log(`SKIP: docs/ingest.md's curl sender: missing ${missing.join(", ")}`);

/** The first ```sh block under `## Standard Webhooks`. */
function standardWebhooksCurl(): string {
  const section = INGEST_MD.slice(INGEST_MD.indexOf("## Standard Webhooks"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("docs/ingest.md has no ```sh block under ## Standard Webhooks");
  return block;
}

let dataDir: string;
let server: IntakeProcess;
let token: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "intake-ingest-snippets-"));
  const env = { INTAKE_DATA_DIR: dataDir };
  token = (
    JSON.parse(await runCli(["bootstrap", "--tenant-name", "Docs", "--create", "--json"], env)) as { token: string }
  ).token;
  server = await startIntake("ingest-docs", { ...env, INTAKE_GRPC_PORT: "0" });
}, 60_000);

afterAll(async () => {
  await stopAll();
  rmSync(dataDir, { recursive: true, force: true });
});

async function api(method: string, path: string, body: object): Promise<{ id: string; signing_secret: string }> {
  const res = await server.fetch(path, {
    method,
    token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as { id: string; signing_secret: string };
}

async function runSnippet(serviceId: string, secret: string): Promise<string> {
  const script = standardWebhooksCurl()
    .replace(/^SERVICE=.*$/m, `SERVICE='${serviceId}'`)
    .replace(/^SECRET=.*$/m, `SECRET='${secret}'`)
    .replaceAll("http://127.0.0.1:3000", server.base);
  const proc = Bun.spawn(["sh", "-c", script], { env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  if (proc.exitCode !== 0) throw new Error(`the snippet failed (${proc.exitCode}): ${err}`);
  return out;
}

test.skipIf(missing.length > 0 && !required)(
  "the Standard Webhooks curl sender is answered 202, with a new secret and with a kept stripe-form one",
  async () => {
    const created = await api("POST", "/v1/services", { service_name: "sw", signature_scheme: "standard_webhooks" });
    expect(JSON.parse(await runSnippet(created.id, created.signing_secret))).toMatchObject({
      id: expect.stringMatching(/^evt_/),
    });
    const stripe = await api("POST", "/v1/services", { service_name: "switched" });
    await api("PATCH", `/v1/services/${stripe.id}`, { signature_scheme: "standard_webhooks" });
    const out = await runSnippet(stripe.id, stripe.signing_secret);
    expect(JSON.parse(out)).toMatchObject({ id: expect.stringMatching(/^evt_/) });
    expect(JSON.parse(out).duplicate).toBeUndefined();
  },
  30_000,
);
