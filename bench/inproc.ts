/**
 * In-process cost of one request: a loop of `app.fetch(new Request(...))` on a fresh app
 * (SQLite file in a temp dir, in-process cache), no HTTP, no wrk. Prints the CPU time this
 * process spent per request (user + system, what other processes on a shared machine disturb
 * least) and the wall time. For an A/B, run it alternately from two checkouts (A B A B ...):
 *
 *   for r in 1 2 3 4 5 6; do
 *     bun /path/to/A/bench/inproc.ts --scenario tenant; bun bench/inproc.ts --scenario tenant
 *   done
 *
 * Scenarios: tenant (authenticated GET /v1/tenant, bench scenario 2), services20, services100,
 * tokens20 (lists on a tenant with 40 services and 25 tokens), events100 (a page of 100 events of
 * 1 KiB). To profile: `bun --cpu-prof bench/inproc.ts ...`, then bench/profile.ts on the file.
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
    n: { type: "string", default: "20000" },
    warmup: { type: "string", default: "2000" },
  },
});

const BASE = "http://intake.test";
const dir = mkdtempSync(join(tmpdir(), "intake-inproc-"));
try {
  const config = parseConfig({ INTAKE_DATA_DIR: dir, INTAKE_GRPC_PORT: "0", INTAKE_API_DOCS: "false" });
  const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
  const boot = await app.domain.tokens.bootstrapTenant({ name: "Bench", permissionMode: "role_based" });
  const auth = { authorization: `Bearer ${boot.token}` };

  async function send(path: string, init: RequestInit = {}, expected = 200): Promise<Response> {
    const res = await app.fetch(new Request(BASE + path, init));
    if (res.status !== expected) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res;
  }
  async function post(path: string, body: unknown): Promise<{ id: string; signing_secret: string }> {
    const headers = { ...auth, "content-type": "application/json" };
    const res = await send(path, { method: "POST", headers, body: JSON.stringify(body) }, 201);
    return (await res.json()) as { id: string; signing_secret: string };
  }

  const services = [];
  for (let i = 0; i < 40; i++) services.push(await post("/v1/services", { service_name: `svc-${i}` }));
  for (let i = 0; i < 25; i++) await post("/v1/api_tokens", { name: `t${i}` });
  const target = services[0];
  if (!target) throw new Error("no service");
  if (flags.scenario === "events100") {
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 100; i++) {
      const body = eventBody(i);
      const headers = {
        "content-type": "application/json",
        "x-service-signature": signatureHeader(target.signing_secret, body, now),
      };
      await send(`/v1/ingest/${target.id}`, { method: "POST", headers, body }, 202);
    }
  }

  const paths: Record<string, string> = {
    tenant: "/v1/tenant",
    services20: "/v1/services?limit=20",
    services100: "/v1/services?limit=100",
    tokens20: "/v1/api_tokens?limit=20",
    events100: `/v1/services/${target.id}/events?limit=100`,
  };
  const path = paths[flags.scenario];
  if (!path) throw new Error(`unknown scenario ${flags.scenario}; one of ${Object.keys(paths).join(", ")}`);
  const once = async () => {
    await (await send(path, { headers: auth })).arrayBuffer();
  };

  for (let i = 0; i < Number(flags.warmup); i++) await once();
  const n = Number(flags.n);
  const cpu = process.cpuUsage();
  const started = Bun.nanoseconds();
  for (let i = 0; i < n; i++) await once();
  const wallUs = (Bun.nanoseconds() - started) / n / 1000;
  const spent = process.cpuUsage(cpu);
  const cpuUs = (spent.user + spent.system) / n;
  console.log(`${flags.scenario}: cpu ${cpuUs.toFixed(2)} µs/request, wall ${wallUs.toFixed(2)} µs/request (n=${n})`);
  await app.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
