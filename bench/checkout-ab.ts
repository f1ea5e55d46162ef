/**
 * Two checkouts' apps in ONE process, driven by `app.fetch` in alternating batches (A B, then
 * B A, ...): the in-process A/B of a change to a read path. Each app runs on its own SQLite file
 * (in-process cache) with a bootstrapped tenant of 40 services; the same authenticated GET goes
 * to both. Prints each side's median wall and CPU µs per request (this process, all threads)
 * and the medians of the per-round paired ratios, A's time over B's (above 1: B is faster).
 * One process and alternating batches keep the machine's drift on both sides of each pair,
 * which separate runs of bench/inproc.ts (±15% apart on this VM) do not.
 *
 *   bun bench/checkout-ab.ts --a /path/to/before --b . [--path /v1/tenant] [--rounds 24] [--n 5000] [--warmup 30000]
 *
 * Check the tool before reading a small difference: the same checkout on both sides should
 * come out within a few percent.
 *
 * Both checkouts need their own `bun install`. The served figures of `bun run bench` remain
 * the goals' measure.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type * as AppModule from "../src/app.ts";
import type * as ConfigModule from "../src/config.ts";
import type * as LoggerModule from "../src/logger.ts";

const { values: flags } = parseArgs({
  options: {
    a: { type: "string" },
    b: { type: "string", default: "." },
    path: { type: "string", default: "/v1/tenant" },
    rounds: { type: "string", default: "24" },
    n: { type: "string", default: "5000" },
    warmup: { type: "string", default: "30000" },
  },
});
if (!flags.a) throw new Error("--a <checkout> is required (the before side)");
const BASE = "http://intake.test";
const dirs: string[] = [];

/** One checkout's app, seeded, and a function that sends the request once and checks it. */
async function load(root: string): Promise<{ once: () => Promise<void>; close: () => Promise<void> }> {
  const src = (file: string) => join(resolve(root), "src", file);
  const { createApp } = (await import(src("app.ts"))) as typeof AppModule;
  const { loadKeyMaterial, parseConfig } = (await import(src("config.ts"))) as typeof ConfigModule;
  const { createLogger } = (await import(src("logger.ts"))) as typeof LoggerModule;
  const dir = mkdtempSync(join(tmpdir(), "intake-checkout-ab-"));
  dirs.push(dir);
  const config = parseConfig({ INTAKE_DATA_DIR: dir, INTAKE_GRPC_PORT: "0", INTAKE_API_DOCS: "false" });
  const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
  const boot = await app.domain.tokens.bootstrapTenant({ name: "Bench", permissionMode: "role_based" });
  const headers = { authorization: `Bearer ${boot.token}` };
  for (let i = 0; i < 40; i++) {
    const res = await app.fetch(
      new Request(`${BASE}/v1/services`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ service_name: `svc-${i}` }),
      }),
    );
    if (res.status !== 201) throw new Error(`${root}: seeding a service answered ${res.status}`);
  }
  const url = BASE + flags.path;
  return {
    async once() {
      const res = await app.fetch(new Request(url, { headers }));
      if (res.status !== 200) throw new Error(`${root}: ${flags.path} answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    },
    close: () => app.close(),
  };
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;

try {
  const sides = { A: await load(flags.a), B: await load(flags.b) };
  const n = Number(flags.n);
  const wall = { A: [] as number[], B: [] as number[] };
  const cpu = { A: [] as number[], B: [] as number[] };
  // Long enough for the JIT to settle: with 3,000 requests per side, the same code on both
  // sides still came out 1.2× apart (the side loaded second was faster).
  for (let i = 0; i < Number(flags.warmup); i++) {
    await sides.A.once();
    await sides.B.once();
  }
  for (let round = 0; round < Number(flags.rounds); round++) {
    for (const key of round % 2 === 0 ? (["A", "B"] as const) : (["B", "A"] as const)) {
      const side = sides[key];
      const cpuBefore = process.cpuUsage();
      const started = Bun.nanoseconds();
      for (let i = 0; i < n; i++) await side.once();
      wall[key].push((Bun.nanoseconds() - started) / n / 1000);
      const spent = process.cpuUsage(cpuBefore);
      cpu[key].push((spent.user + spent.system) / n);
    }
  }
  const paired = (xs: { A: number[]; B: number[] }) => median(xs.A.map((a, i) => a / (xs.B[i] as number)));
  console.log(`${flags.path}, ${flags.rounds} rounds of ${n} per side`);
  console.log(`A ${flags.a}: wall ${median(wall.A).toFixed(2)} µs, CPU ${median(cpu.A).toFixed(2)} µs per request`);
  console.log(`B ${flags.b}: wall ${median(wall.B).toFixed(2)} µs, CPU ${median(cpu.B).toFixed(2)} µs per request`);
  console.log(`B's speed against A (paired): wall ${paired(wall).toFixed(3)}×, CPU ${paired(cpu).toFixed(3)}×`);
  await sides.A.close();
  await sides.B.close();
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
