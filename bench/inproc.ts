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
 * Scenarios: tenant (authenticated GET /v1/tenant, bench scenario 2), tenantfloor (the same
 * requests to scenario 2's floor, bench/lib/auth-floor.ts: the in-process denominator of
 * tenant; a long `--warmup` (100000) lets both settle before they are compared), tenantbare (the
 * same floor in a process that loads nothing of Intake: what the process itself costs a
 * handler), services20, services100,
 * tokens20 (lists on a tenant with 40 services and 25 tokens), audit20 (its audit log: the 67
 * events of that seeding, 20 a page), events100 (a page of 100 events of
 * 1 KiB), feed1000 (bench scenario 8: 5,000 events of 1 KiB written through the store port like
 * bench/lib/feed.ts, then `GET /v1/feed?limit=1000` paged from the start, starting over at the
 * end; n counts pages), feed1000floor (the same pages from bench scenario 8's floor handler,
 * bench/lib/feed-floor.ts, on the same file: the in-process denominator), ingest (bench
 * scenarios 3 and 4: signed 1 KiB events to one service, 64 in flight so group commit forms
 * batches; n counts events), ingestfloor (the same requests to bench/floor-ingest.ts's handler,
 * bench/lib/ingest-floor.ts, on the app's own store: the in-process denominator of ingest),
 * alertingest (bench scenario 15: ingest's requests with bench/lib/alert-pool.ts's 1 KiB alert
 * events, opening, joining and resolving incidents on 100 keys; ingest is its denominator). To
 * profile: `bun --cpu-prof bench/inproc.ts ...`, then bench/profile.ts on the file.
 *
 * `--store postgres` runs the app on a scratch database of the local PostgreSQL server
 * (bench/lib/postgres.ts; dropped at the end) instead of a SQLite file; feed1000floor is
 * SQLite only. The app then has no REDIS_URL, so its feed wake-ups go through PostgreSQL's
 * LISTEN/NOTIFY (scenario 4's configuration), and the ingest scenarios also print the CPU of
 * the scratch database's backends per event, the transactions committed in it per 1,000
 * events (a batch's insert, a NOTIFY) and its buffer accesses per event (pg_stat_database's
 * blks_hit + blks_read: the work of its statements, which other load on the machine does not
 * change, unlike CPU time).
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
import { SQL } from "bun";
import type * as AppModule from "../src/app.ts";
import type * as ConfigModule from "../src/config.ts";
import type * as IdsModule from "../src/domain/ids.ts";
import type * as LoggerModule from "../src/logger.ts";
import { alertBody } from "./lib/alert-pool.ts";
import { authFloor } from "./lib/auth-floor.ts";
import { feedFloor } from "./lib/feed-floor.ts";
import { ingestFloor } from "./lib/ingest-floor.ts";
import { eventBody, signatureHeader } from "./lib/pool.ts";
import { createScratchDatabase } from "./lib/postgres.ts";
import { processCpuNs } from "./lib/procs.ts";

const { values: flags } = parseArgs({
  options: {
    scenario: { type: "string", default: "tenant" },
    n: { type: "string", default: "20000" },
    warmup: { type: "string", default: "2000" },
    root: { type: "string", default: resolve(import.meta.dir, "..") },
    store: { type: "string", default: "sqlite" },
  },
});

/** This process's CPU (all threads) and the wall time per request of `run`, which sends `n`. */
async function timed(n: number, run: () => Promise<void>): Promise<{ cpuUs: number; wallUs: number }> {
  const cpu = process.cpuUsage();
  const started = Bun.nanoseconds();
  await run();
  const wallUs = (Bun.nanoseconds() - started) / n / 1000;
  const spent = process.cpuUsage(cpu);
  return { cpuUs: (spent.user + spent.system) / n, wallUs };
}

if (flags.scenario === "tenantbare") {
  // Scenario 2's floor in a process that holds nothing else (no app, no store, no framework
  // loaded): against tenantfloor, what living in a process of Intake's size costs the very same
  // handler (a larger heap to collect). Measured as the app's scenarios are (`timed`).
  const floor = authFloor();
  const headers = { authorization: `Bearer service_live_${"a".repeat(43)}` };
  const once = async () => {
    await floor(new Request("http://intake.test/v1/tenant", { headers }), false).arrayBuffer();
  };
  const repeat = async (count: number) => {
    for (let i = 0; i < count; i++) await once();
  };
  await repeat(Number(flags.warmup));
  const n = Number(flags.n);
  const { cpuUs, wallUs } = await timed(n, () => repeat(n));
  console.log(`tenantbare: cpu ${cpuUs.toFixed(2)} µs/request, wall ${wallUs.toFixed(2)} µs/request (n=${n})`);
  process.exit(0);
}

const src = (file: string) => join(resolve(flags.root), "src", file);
const { createApp } = (await import(src("app.ts"))) as typeof AppModule;
const { loadKeyMaterial, parseConfig } = (await import(src("config.ts"))) as typeof ConfigModule;
const { createLogger } = (await import(src("logger.ts"))) as typeof LoggerModule;
const { createIdGenerator } = (await import(src("domain/ids.ts"))) as typeof IdsModule;

const BASE = "http://intake.test";
const TOLERANCE_SECONDS = "86400";
const INGEST_IN_FLIGHT = 64;
const dir = mkdtempSync(join(tmpdir(), "intake-inproc-"));
let dropDatabase = async () => {};
try {
  const env: Record<string, string> = {
    INTAKE_DATA_DIR: dir,
    INTAKE_GRPC_PORT: "0",
    INTAKE_API_DOCS: "false",
    INTAKE_SIGNATURE_TOLERANCE_SECONDS: TOLERANCE_SECONDS,
  };
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
  const boot = await app.domain.onboarding.bootstrapTenant({ name: "Bench", permissionMode: "role_based" });
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
    tenantfloor: "/v1/tenant",
    services20: "/v1/services?limit=20",
    services100: "/v1/services?limit=100",
    tokens20: "/v1/api_tokens?limit=20",
    audit20: "/v1/audit_events?limit=20",
    events100: `/v1/services/${target.id}/events?limit=100`,
    feed1000: "/v1/feed?limit=1000",
    feed1000floor: "/v1/feed?limit=1000",
  };
  const ingestScenario = ["ingest", "ingestfloor", "alertingest"].includes(flags.scenario as string);
  if (ingestScenario) paths[flags.scenario] = `/v1/ingest/${target.id}`;
  const path = paths[flags.scenario];
  if (!path)
    throw new Error(
      `unknown scenario ${flags.scenario}; one of ${Object.keys(paths).join(", ")}, ingest, ingestfloor, alertingest`,
    );
  let once = async () => {
    await (await send(path, { headers: auth })).arrayBuffer();
  };
  // A batch of `count` requests; the ingest scenarios keep INGEST_IN_FLIGHT of them in flight.
  let batch = async (count: number) => {
    for (let i = 0; i < count; i++) await once();
  };
  let drainFloor = async () => {};
  if (ingestScenario) {
    const now = Math.floor(Date.now() / 1000);
    const pool = Array.from({ length: 1_000 }, (_, i) => {
      const body = flags.scenario === "alertingest" ? alertBody(i, 1_000) : eventBody(i);
      return { body, signature: signatureHeader(target.signing_secret, body, now) };
    });
    if (flags.scenario === "ingestfloor") {
      const floor = await ingestFloor({
        store: app.store,
        serviceId: target.id.slice(4),
        secret: target.signing_secret,
        toleranceSeconds: Number(TOLERANCE_SECONDS),
      });
      handler = floor.fetch;
      drainFloor = floor.drain;
    }
    let next = 0;
    once = async () => {
      const { body, signature } = pool[next++ % pool.length] as (typeof pool)[number];
      // Content-Length as wrk sends it (the served path reads a declared body whole).
      const headers = {
        "content-type": "application/json",
        "content-length": String(body.length),
        "x-service-signature": signature,
      };
      await (await send(path, { method: "POST", headers, body }, 202)).arrayBuffer();
    };
    batch = async (count: number) => {
      let left = count;
      const sender = async () => {
        while (left-- > 0) await once();
      };
      await Promise.all(Array.from({ length: INGEST_IN_FLIGHT }, sender));
    };
  }
  if (flags.scenario === "tenantfloor") {
    const floor = authFloor();
    handler = (request) => floor(request, false);
  }
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

  await batch(Number(flags.warmup));
  const n = Number(flags.n);
  // PostgreSQL: the CPU of the scratch database's backends (other databases on the server are
  // other people's) and the transactions committed in it, per request.
  const server = flags.store === "postgres" && ingestScenario ? await postgresSide(env.DATABASE_URL as string) : null;
  const serverBefore = await server?.sample();
  const { cpuUs, wallUs } = await timed(n, () => batch(n));
  let serverText = "";
  if (server && serverBefore) {
    const after = await server.sample();
    const serverUs = (after.cpuNs - serverBefore.cpuNs) / n / 1000;
    const commits = ((after.commits - serverBefore.commits) * 1000) / n;
    const blocks = (after.blocks - serverBefore.blocks) / n;
    serverText = `, PostgreSQL backends cpu ${serverUs.toFixed(2)} µs/request, ${commits.toFixed(1)} commits per 1,000 requests, ${blocks.toFixed(1)} buffer accesses per request`;
    await server.close();
  }
  console.log(
    `${flags.scenario}: cpu ${cpuUs.toFixed(2)} µs/request, wall ${wallUs.toFixed(2)} µs/request${serverText} (n=${n})`,
  );
  await drainFloor();
  await app.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
  await dropDatabase();
}

/**
 * The scratch database's side of the ingest scenarios: the CPU of its backends (pids from
 * pg_stat_activity, /proc/<pid>/task/<tid>/schedstat) and its committed transactions
 * (pg_stat_database, flushed by the server about once a second: each sample waits for that).
 */
async function postgresSide(url: string) {
  const sql = new SQL(url, { max: 1 });
  const database = new URL(url).pathname.slice(1);
  return {
    async sample(): Promise<{ cpuNs: number; commits: number; blocks: number }> {
      await Bun.sleep(1_200);
      const backends: Array<{ pid: number }> = await sql.unsafe(
        "select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [database],
      );
      let cpuNs = 0;
      for (const { pid } of backends) {
        try {
          cpuNs += processCpuNs(pid);
        } catch {
          // the backend ended between the listing and the read
        }
      }
      const [row] = await sql.unsafe(
        "select xact_commit, blks_hit + blks_read as blocks from pg_stat_database where datname = $1",
        [database],
      );
      const { xact_commit, blocks } = row as { xact_commit: string; blocks: string };
      return { cpuNs, commits: Number(xact_commit), blocks: Number(blocks) };
    },
    close: () => sql.close(),
  };
}
