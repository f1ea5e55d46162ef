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
 * tokens20 (lists on a tenant with 40 services and 25 tokens), audit20 (its audit log: the 67
 * events of that seeding, 20 a page), events100 (a page of 100 events of
 * 1 KiB), feed1000 (bench scenario 8: 5,000 events of 1 KiB written through the store port like
 * bench/lib/feed.ts, then `GET /v1/feed?limit=1000` paged from the start, starting over at the
 * end; n counts pages), feed1000floor (the same pages from bench scenario 8's floor handler,
 * bench/lib/feed-floor.ts, on the same file: the in-process denominator). To profile: `bun --cpu-prof bench/inproc.ts ...`, then bench/profile.ts
 * on the file.
 *
 * `--store postgres` runs the app on a scratch database of the local PostgreSQL server
 * (bench/lib/postgres.ts; dropped at the end) instead of a SQLite file; feed1000floor is
 * SQLite only.
 *
 * `--root <checkout>` runs another checkout's app (src/) under this harness, for scenarios the
 * other checkout's own bench/inproc.ts does not have yet:
 * `bun bench/inproc.ts --root /work/main --scenario feed1000`.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type * as AppModule from "../src/app.ts";
import type * as ConfigModule from "../src/config.ts";
import type * as IdsModule from "../src/domain/ids.ts";
import type * as LoggerModule from "../src/logger.ts";
import { feedFloor } from "./lib/feed-floor.ts";
import { eventBody, signatureHeader } from "./lib/pool.ts";
import { createScratchDatabase } from "./lib/postgres.ts";

const { values: flags } = parseArgs({
  options: {
    scenario: { type: "string", default: "tenant" },
    n: { type: "string", default: "20000" },
    warmup: { type: "string", default: "2000" },
    root: { type: "string", default: resolve(import.meta.dir, "..") },
    store: { type: "string", default: "sqlite" },
  },
});

const src = (file: string) => join(resolve(flags.root), "src", file);
const { createApp } = (await import(src("app.ts"))) as typeof AppModule;
const { loadKeyMaterial, parseConfig } = (await import(src("config.ts"))) as typeof ConfigModule;
const { createLogger } = (await import(src("logger.ts"))) as typeof LoggerModule;
const { createIdGenerator } = (await import(src("domain/ids.ts"))) as typeof IdsModule;

const BASE = "http://intake.test";
const dir = mkdtempSync(join(tmpdir(), "intake-inproc-"));
let dropDatabase = async () => {};
try {
  const env: Record<string, string> = { INTAKE_DATA_DIR: dir, INTAKE_GRPC_PORT: "0", INTAKE_API_DOCS: "false" };
  if (flags.store === "postgres") {
    if (flags.scenario === "feed1000floor") throw new Error("feed1000floor reads a SQLite file");
    const scratch = await createScratchDatabase();
    if ("unreachable" in scratch) throw new Error(`PostgreSQL: ${scratch.unreachable}`);
    dropDatabase = scratch.drop;
    env.DATABASE_URL = scratch.url;
    env.INTAKE_TOKEN_PEPPER = "inproc-pepper-inproc-pepper-inproc-pepper";
    env.INTAKE_SECRETS_KEY = Buffer.alloc(32, 7).toString("base64");
  } else if (flags.store !== "sqlite") {
    throw new Error(`--store sqlite or postgres, not ${flags.store}`);
  }
  const config = parseConfig(env);
  const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
  const boot = await app.domain.tokens.bootstrapTenant({ name: "Bench", permissionMode: "role_based" });
  const auth = { authorization: `Bearer ${boot.token}` };

  let handler: (request: Request) => Response | Promise<Response> = app.fetch;
  async function send(path: string, init: RequestInit = {}, expected = 200): Promise<Response> {
    const res = await handler(new Request(BASE + path, init));
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
  const FEED_EVENTS = 5_000;
  const feedScenario = flags.scenario === "feed1000" || flags.scenario === "feed1000floor";
  if (feedScenario) {
    const newId = createIdGenerator();
    const now = Date.now();
    for (let done = 0; done < FEED_EVENTS; done += 1_000) {
      const batch = Array.from({ length: 1_000 }, (_, i) => ({
        id: newId(),
        tenantId: boot.tenant.id,
        serviceId: target.id.slice(4),
        receivedAt: now,
        idempotencyKey: null,
        payload: new TextEncoder().encode(eventBody(done + i)),
      }));
      await app.store.events.insertBatch(batch);
    }
  }

  const paths: Record<string, string> = {
    tenant: "/v1/tenant",
    services20: "/v1/services?limit=20",
    services100: "/v1/services?limit=100",
    tokens20: "/v1/api_tokens?limit=20",
    audit20: "/v1/audit_events?limit=20",
    events100: `/v1/services/${target.id}/events?limit=100`,
    feed1000: "/v1/feed?limit=1000",
    feed1000floor: "/v1/feed?limit=1000",
  };
  const path = paths[flags.scenario];
  if (!path) throw new Error(`unknown scenario ${flags.scenario}; one of ${Object.keys(paths).join(", ")}`);
  let once = async () => {
    await (await send(path, { headers: auth })).arrayBuffer();
  };
  if (flags.scenario === "feed1000floor") handler = feedFloor(new Database(join(dir, "intake.sqlite")), boot.tenant.id);
  if (feedScenario) {
    // Page through the feed as bench scenario 8's readers do: from the start, over again at the
    // end (after FEED_EVENTS / 1000 full pages). Only the warm-up parses the pages and checks
    // them; measured pages cost the client a regular expression at the end of the text.
    let cursor = "";
    let pages = 0;
    let checking = true;
    once = async () => {
      const text = await (await send(`${path}${cursor ? `&after=${cursor}` : ""}`, { headers: auth })).text();
      if (checking) {
        const page = JSON.parse(text) as { data: { payload: { seq: number } }[] };
        if (page.data.length !== 1_000) throw new Error(`a feed page of ${page.data.length} events`);
        if (page.data[0]?.payload.seq !== pages * 1_000) throw new Error("the feed page is out of order");
      }
      const next = /"next_cursor":"([^"]*)"}$/.exec(text)?.[1];
      if (!next) throw new Error("a feed page without next_cursor");
      pages = (pages + 1) % (FEED_EVENTS / 1_000);
      cursor = pages === 0 ? "" : next;
    };
    for (let i = 0; i < FEED_EVENTS / 1_000; i++) await once();
    checking = false;
  }

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
  await dropDatabase();
}
