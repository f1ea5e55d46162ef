/**
 * What metrics and configured-but-unspent rate limits cost, in process: three apps in ONE
 * process (default; `INTAKE_METRICS=false`; the scenario's rate limit at 1e9/3600s), each on
 * its own SQLite file, driven by `app.fetch` in alternating batches (A B C, then C B A, ...).
 * Prints each app's median CPU µs per request (this process, all threads: the SQLite writer
 * worker included) and the median of the per-round paired throughput ratios against the
 * default app. One process and alternating batches keep the machine's drift on both sides of
 * each pair; the wrk figures of `bun run bench` (scenarios 2 and 3) remain the goal's measure.
 *
 *   bun bench/inproc-ab.ts --scenario tenant    # authenticated GET /v1/tenant, one at a time
 *   bun bench/inproc-ab.ts --scenario ingest    # signed 1 KiB ingest, 64 in flight (group commit)
 *
 * Flags: --rounds N (default 15), --n requests per batch (default 10000 tenant, 3000 ingest).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApp } from "../src/app.ts";
import { loadKeyMaterial, parseConfig } from "../src/config.ts";
import { createLogger } from "../src/logger.ts";
import { eventBody, signatureHeader } from "./lib/pool.ts";

const { values: flags } = parseArgs({
  options: {
    scenario: { type: "string", default: "tenant" },
    rounds: { type: "string", default: "15" },
    n: { type: "string" },
  },
});
const ingest = flags.scenario === "ingest";
if (!ingest && flags.scenario !== "tenant") throw new Error(`--scenario tenant or ingest, not ${flags.scenario}`);
const rounds = Number(flags.rounds);
const batch = Number(flags.n ?? (ingest ? 3000 : 10000));
const BASE = "http://intake.test";
const UNSPENT = "1000000000/3600s";
const variants: Record<string, Record<string, string>> = {
  "metrics on (default)": {},
  "INTAKE_METRICS=false": { INTAKE_METRICS: "false" },
  [ingest ? "INTAKE_RATE_LIMIT_INGEST unspent" : "INTAKE_RATE_LIMIT_API unspent"]: ingest
    ? { INTAKE_RATE_LIMIT_INGEST: UNSPENT }
    : { INTAKE_RATE_LIMIT_API: UNSPENT },
};

interface Driven {
  name: string;
  run(n: number): Promise<void>;
  close(): Promise<void>;
}

async function expectStatus(res: Response, status: number): Promise<void> {
  if (res.status !== status) throw new Error(`${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function drive(name: string, extra: Record<string, string>): Promise<Driven> {
  const dir = mkdtempSync(join(tmpdir(), "intake-inproc-ab-"));
  const config = parseConfig({
    INTAKE_DATA_DIR: dir,
    INTAKE_GRPC_PORT: "0",
    INTAKE_API_DOCS: "false",
    INTAKE_SIGNATURE_TOLERANCE_SECONDS: "86400",
    ...extra,
  });
  const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
  const close = async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const boot = await app.domain.tokens.bootstrapTenant({ name: "Bench", permissionMode: "role_based" });
  const authorization = `Bearer ${boot.token}`;
  if (!ingest) {
    const run = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await expectStatus(await app.fetch(new Request(`${BASE}/v1/tenant`, { headers: { authorization } })), 200);
      }
    };
    return { name, run, close };
  }
  const created = await app.fetch(
    new Request(`${BASE}/v1/services`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ service_name: "bench" }),
    }),
  );
  const svc = (await created.json()) as { id: string; signing_secret: string };
  const now = Math.floor(Date.now() / 1000);
  const pool = Array.from({ length: 1000 }, (_, i) => {
    const body = eventBody(i);
    return { body, signature: signatureHeader(svc.signing_secret, body, now) };
  });
  let next = 0;
  const one = async () => {
    const { body, signature } = pool[next++ % pool.length] as (typeof pool)[number];
    const headers = { "content-type": "application/json", "x-service-signature": signature };
    await expectStatus(
      await app.fetch(new Request(`${BASE}/v1/ingest/${svc.id}`, { method: "POST", headers, body })),
      202,
    );
  };
  const run = async (n: number) => {
    let left = n;
    const worker = async () => {
      while (left-- > 0) await one();
    };
    await Promise.all(Array.from({ length: 64 }, worker));
  };
  return { name, run, close };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const apps: Driven[] = [];
try {
  for (const [name, extra] of Object.entries(variants)) apps.push(await drive(name, extra));
  for (const app of apps) await app.run(batch); // warm-up
  const cpu = new Map<string, number[]>(apps.map((a) => [a.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const app of round % 2 === 0 ? apps : [...apps].reverse()) {
      const before = process.cpuUsage();
      await app.run(batch);
      const used = process.cpuUsage(before);
      cpu.get(app.name)?.push((used.user + used.system) / batch);
    }
  }
  const [base, ...others] = apps as [Driven, ...Driven[]];
  const baseCpu = cpu.get(base.name) as number[];
  console.log(`${flags.scenario}: ${rounds} rounds × ${batch} requests per app, CPU µs per request (median, min)`);
  for (const app of apps) {
    const xs = cpu.get(app.name) as number[];
    console.log(`  ${app.name}: ${median(xs).toFixed(2)} (min ${Math.min(...xs).toFixed(2)})`);
  }
  for (const app of others) {
    const xs = cpu.get(app.name) as number[];
    const ratio = median(baseCpu.map((b, i) => b / (xs[i] as number)));
    console.log(`  ${app.name} vs default: ${ratio.toFixed(3)}× the throughput (median of paired rounds)`);
  }
} finally {
  for (const app of apps) await app.close();
}
