/**
 * The alert floor's cost by CPU, the steadier figure on a shared machine (bench scenario 15 judges
 * throughput side by side): bench/floor-ingest-bare.ts with FLOOR_ALERTS=1 taking the alert pool
 * (bench/lib/alert-pool.ts) and without it taking the plain pool, each on a store of its own, each
 * alone under wrk (128 connections, 4 s, 6 alternating rounds after a warm-up), and per event the
 * CPU of the floor process and, on PostgreSQL, of its database's backends (pg_stat_activity's pids).
 *
 * Usage: bun bench/alert-floor-cpu.ts [postgres|sqlite]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { writeAlertPool } from "./lib/alert-pool.ts";
import { writePool } from "./lib/pool.ts";
import { createScratchDatabase, PG_SERVER, type ScratchDatabase } from "./lib/postgres.ts";
import { cleanEnv, freePort, installCleanup, processCpuNs, REPO_ROOT, stop, track, waitReady } from "./lib/procs.ts";
import { median } from "./lib/report.ts";
import { ensureWrk, runWrk } from "./lib/wrk.ts";

const store = process.argv[2] ?? "postgres";
if (store !== "postgres" && store !== "sqlite")
  throw new Error("usage: bun bench/alert-floor-cpu.ts [postgres|sqlite]");
await ensureWrk();
installCleanup();
const dir = mkdtempSync(join(tmpdir(), "intake-alert-floor-"));
const svc = { id: `svc_${"0f".repeat(16)}`, secret: `whsec_${"b".repeat(32)}` };
const admin = new SQL(`${PG_SERVER}/postgres`, { max: 1 });

interface Side {
  name: string;
  url: string;
  child: ReturnType<typeof Bun.spawn>;
  db: ScratchDatabase | null;
  pool: string;
  /** Per round: CPU µs per event of the floor, of its backends; req/s. */
  cpu: number[];
  backends: number[];
  rps: number[];
}

/** The CPU of `db`'s backends so far (0 for SQLite). */
async function backendsNs(db: ScratchDatabase | null): Promise<number> {
  if (!db) return 0;
  const rows: Array<{ pid: number }> = await admin.unsafe("select pid from pg_stat_activity where datname = $1", [
    new URL(db.url).pathname.slice(1),
  ]);
  let ns = 0;
  for (const { pid } of rows) {
    try {
      ns += processCpuNs(pid);
    } catch {
      // the backend ended between the listing and the read
    }
  }
  return ns;
}

async function run(side: Side, seconds: number, kept: boolean): Promise<void> {
  const [cpu, backends] = [processCpuNs(side.child.pid), await backendsNs(side.db)];
  const r = await runWrk({
    url: side.url,
    connections: 128,
    threads: 1,
    durationS: seconds,
    script: "pool.lua",
    args: [side.pool],
  });
  if (r.non2xx + r.socketErrors + r.timeouts > 0) throw new Error(`${side.name}: requests failed`);
  if (!kept) return;
  side.cpu.push((processCpuNs(side.child.pid) - cpu) / 1000 / r.requests);
  side.backends.push(((await backendsNs(side.db)) - backends) / 1000 / r.requests);
  side.rps.push(r.rps);
}

const sides: Side[] = [];
try {
  for (const alerts of [true, false]) {
    const name = alerts ? "alert" : "plain";
    const db = store === "postgres" ? await createScratchDatabase() : null;
    if (db && "unreachable" in db) throw new Error(`PostgreSQL: ${db.unreachable}`);
    const port = freePort();
    const where: Record<string, string> = db
      ? { FLOOR_DATABASE_URL: db.url }
      : { FLOOR_DATABASE: join(dir, `${name}.sqlite`) };
    const env = { PORT: String(port), FLOOR_SERVICE_ID: svc.id, FLOOR_SECRET: svc.secret, ...where };
    const child = track(
      Bun.spawn(["bun", "bench/floor-ingest-bare.ts"], {
        cwd: REPO_ROOT,
        env: cleanEnv(alerts ? { ...env, FLOOR_ALERTS: "1" } : env),
        stdout: "ignore",
        stderr: Bun.file(join(dir, `${name}.err`)),
      }),
    );
    const url = `http://127.0.0.1:${port}`;
    sides.push({ name, url, child, db, pool: join(dir, `${name}.pool`), cpu: [], backends: [], rps: [] });
    await waitReady(`${url}/`, child, join(dir, `${name}.err`));
    (alerts ? writeAlertPool : writePool)(join(dir, `${name}.pool`), `/v1/ingest/${svc.id}`, svc.secret, 1_000);
  }
  const [alert, plain] = sides as [Side, Side];
  await run(alert, 3, false);
  await run(plain, 3, false);
  for (let round = 0; round < 6; round++) {
    for (const side of round % 2 === 0 ? [alert, plain] : [plain, alert]) await run(side, 4, true);
  }
  const total = (s: Side) => s.cpu.map((c, i) => c + (s.backends[i] ?? 0));
  for (const s of sides) {
    console.log(
      `${s.name}: floor ${median(s.cpu).toFixed(1)} µs/event, backends ${median(s.backends).toFixed(1)}, ` +
        `total ${median(total(s)).toFixed(1)} (per round ${total(s)
          .map((t) => t.toFixed(0))
          .join(" ")}); ${Math.round(median(s.rps))} req/s alone`,
    );
  }
  const ratios = total(plain).map((p, i) => p / (total(alert)[i] ?? Number.NaN));
  console.log(
    `alert vs plain by CPU (plain's CPU per event over alert's, per round): median ${median(ratios).toFixed(2)}, ` +
      `${ratios.map((r) => r.toFixed(2)).join(" ")}`,
  );
} finally {
  for (const s of sides) await stop(s.child);
  for (const s of sides) await s.db?.drop();
  await admin.close();
  rmSync(dir, { recursive: true, force: true });
}
