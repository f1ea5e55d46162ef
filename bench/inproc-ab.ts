/**
 * In-process A/B: apps in ONE process, each on its own SQLite file, driven by `app.fetch` in
 * alternating batches (A B C, then C B A, ...). Prints each app's median CPU µs per request
 * (this process, all threads: the SQLite writer worker included) and wall µs per request, and
 * the medians of the per-round paired ratios against the first app. One process and
 * alternating batches keep the machine's drift on both sides of each pair; the wrk figures of
 * `bun run bench` remain the goals' measure.
 *
 * What metrics and configured-but-unspent rate limits cost: three apps of this checkout
 * (default; `INTAKE_METRICS=false`; the scenario's rate limit at 1e9/3600s):
 *
 *   bun bench/inproc-ab.ts --scenario tenant    # authenticated GET /v1/tenant, one at a time
 *   bun bench/inproc-ab.ts --scenario ingest    # signed 1 KiB ingest, 64 in flight (group commit)
 *
 * What traces cost (docs/tracing.md): unset, on at ratio 1.0 and at 0.01, exporting over
 * OTLP/HTTP protobuf to a sink in this process that discards what it is sent:
 *
 *   bun bench/inproc-ab.ts --scenario tenant --tracing
 *
 * A change to a read path: two checkouts' apps (each checkout with its own `bun install`):
 *
 *   bun bench/inproc-ab.ts --a /path/to/before --b . [--path '/v1/services?limit=20'] --rounds 24 --n 5000 --warmup 30000
 *
 * Read scenarios run on a tenant of 40 services. Flags: --rounds N (default 15), --n requests
 * per batch (default 10000 reads, 3000 ingest), --warmup requests per app before the rounds
 * (default one batch; the JIT needs ~30000 before a small difference between two checkouts
 * means anything: the same checkout on both sides then comes out within 2% wall, 9% CPU),
 * --path (reads only; default /v1/tenant).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type * as AppModule from "../src/app.ts";
import type * as ConfigModule from "../src/config.ts";
import type * as LoggerModule from "../src/logger.ts";
import { eventBody, signatureHeader } from "./lib/pool.ts";

const { values: flags } = parseArgs({
  options: {
    scenario: { type: "string", default: "tenant" },
    rounds: { type: "string", default: "15" },
    n: { type: "string" },
    warmup: { type: "string" },
    path: { type: "string", default: "/v1/tenant" },
    a: { type: "string" },
    b: { type: "string", default: "." },
    tracing: { type: "boolean", default: false },
  },
});
const ingest = flags.scenario === "ingest";
if (!ingest && flags.scenario !== "tenant") throw new Error(`--scenario tenant or ingest, not ${flags.scenario}`);
const rounds = Number(flags.rounds);
const batch = Number(flags.n ?? (ingest ? 3000 : 10000));
const BASE = "http://intake.test";
const UNSPENT = "1000000000/3600s";
const HERE = resolve(import.meta.dir, "..");
/** Each app: the checkout whose src/ it runs, and its extra environment. */
/** The OTLP exporter reads its endpoint from the process environment: a sink that answers every export. */
function tracingVariants(): Record<string, { root: string; env: Record<string, string> }> {
  const sink = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(new Uint8Array()) });
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${sink.port}`;
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT };
  return {
    "tracing unset": { root: HERE, env: {} },
    "tracing on, ratio 1.0": { root: HERE, env: { ...on, OTEL_TRACES_SAMPLER: "parentbased_always_on" } },
    "tracing on, ratio 0.01": {
      root: HERE,
      env: { ...on, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" },
    },
  };
}
const variants: Record<string, { root: string; env: Record<string, string> }> = flags.tracing
  ? tracingVariants()
  : flags.a
    ? { [`A ${flags.a}`]: { root: resolve(flags.a), env: {} }, [`B ${flags.b}`]: { root: resolve(flags.b), env: {} } }
    : {
        "metrics on (default)": { root: HERE, env: {} },
        "INTAKE_METRICS=false": { root: HERE, env: { INTAKE_METRICS: "false" } },
        [ingest ? "INTAKE_RATE_LIMIT_INGEST unspent" : "INTAKE_RATE_LIMIT_API unspent"]: {
          root: HERE,
          env: ingest ? { INTAKE_RATE_LIMIT_INGEST: UNSPENT } : { INTAKE_RATE_LIMIT_API: UNSPENT },
        },
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

async function drive(name: string, root: string, extra: Record<string, string>): Promise<Driven> {
  const src = (file: string) => join(root, "src", file);
  const { createApp } = (await import(src("app.ts"))) as typeof AppModule;
  const { loadKeyMaterial, parseConfig } = (await import(src("config.ts"))) as typeof ConfigModule;
  const { createLogger } = (await import(src("logger.ts"))) as typeof LoggerModule;
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
  const boot = await app.domain.onboarding.bootstrapTenant({ name: "Bench", permissionMode: "role_based" });
  const authorization = `Bearer ${boot.token}`;
  const createService = async (serviceName: string) => {
    const created = await app.fetch(
      new Request(`${BASE}/v1/services`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify({ service_name: serviceName }),
      }),
    );
    if (created.status !== 201) throw new Error(`${name}: creating a service answered ${created.status}`);
    return (await created.json()) as { id: string; signing_secret: string };
  };
  if (!ingest) {
    for (let i = 0; i < 40; i++) await createService(`svc-${i}`);
    const url = BASE + flags.path;
    const run = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await expectStatus(await app.fetch(new Request(url, { headers: { authorization } })), 200);
      }
    };
    return { name, run, close };
  }
  const svc = await createService("bench");
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
  for (const [name, { root, env }] of Object.entries(variants)) apps.push(await drive(name, root, env));
  // Warm-up interleaved too, a batch at a time: no app gets the JIT's attention first.
  for (let done = 0; done < Number(flags.warmup ?? batch); done += batch) {
    for (const app of apps) await app.run(Math.min(batch, Number(flags.warmup ?? batch) - done));
  }
  const cpu = new Map<string, number[]>(apps.map((a) => [a.name, []]));
  const wall = new Map<string, number[]>(apps.map((a) => [a.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const app of round % 2 === 0 ? apps : [...apps].reverse()) {
      const before = process.cpuUsage();
      const started = Bun.nanoseconds();
      await app.run(batch);
      wall.get(app.name)?.push((Bun.nanoseconds() - started) / batch / 1000);
      const used = process.cpuUsage(before);
      cpu.get(app.name)?.push((used.user + used.system) / batch);
    }
  }
  const [base, ...others] = apps as [Driven, ...Driven[]];
  const what = ingest ? "signed ingest" : flags.path;
  console.log(`${what}: ${rounds} rounds × ${batch} requests per app, µs per request (median; CPU min)`);
  for (const app of apps) {
    const xs = cpu.get(app.name) as number[];
    const ws = wall.get(app.name) as number[];
    console.log(
      `  ${app.name}: CPU ${median(xs).toFixed(2)} (min ${Math.min(...xs).toFixed(2)}), wall ${median(ws).toFixed(2)}`,
    );
  }
  const paired = (series: Map<string, number[]>, name: string) => {
    const first = series.get(base.name) as number[];
    const xs = series.get(name) as number[];
    return median(first.map((b, i) => b / (xs[i] as number))).toFixed(3);
  };
  for (const app of others) {
    console.log(
      `  ${app.name} vs ${base.name}: ${paired(cpu, app.name)}× the throughput by CPU, ${paired(wall, app.name)}× by wall (medians of paired rounds)`,
    );
  }
} finally {
  for (const app of apps) await app.close();
}
