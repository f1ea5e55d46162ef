/**
 * Signed ingest at a steady rate (bench scenario 9: live delivery "at 5,000 events/s of
 * ingest"), in a process of its own so that sending costs the bench's measuring reader nothing.
 * wrk has no pacing of its own (its `delay()` cannot read a clock), so this sends from the
 * harness's pre-signed pool (bench/lib/pool.ts) on a schedule: request k is due at
 * start + k / rate, and `PACE_LANES` keep-alive clients take the next due request in turn, so a
 * slow answer delays no schedule but its own lane's.
 *
 * Usage: PACE_URL=http://127.0.0.1:<port> PACE_POOL=<pool file> PACE_RATE=5000 bun bench/paced-ingest.ts
 * Prints "ready" once sending; on SIGTERM stops and prints one JSON line:
 * { sent, accepted, seconds } (accepted = 202 answers).
 */
import { readPool } from "./lib/pool.ts";
import { requiredEnv } from "./lib/procs.ts";

const base = requiredEnv("PACE_URL");
const rate = Number(requiredEnv("PACE_RATE"));
// In flight at most: the rate holds while an answer takes up to lanes / rate (25 ms at 5,000/s).
// 32 lanes held it only while answers took under 6.4 ms: on a slower 2-core VM two instances
// on PostgreSQL answered in ~9 ms and the load fell to 3,666 events/s (2026-11-26).
const lanes = Number(process.env.PACE_LANES ?? "128");
const pool = readPool(requiredEnv("PACE_POOL")).map(({ path, signature, body }) => {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== null) headers["x-service-signature"] = signature;
  return { url: `${base}${path}`, headers, body };
});
if (pool.length === 0) throw new Error("empty request pool");

let stopping = false;
let next = 0;
let sent = 0;
let accepted = 0;
const started = performance.now();

async function lane(): Promise<void> {
  while (!stopping) {
    const k = next++;
    const wait = started + (k * 1000) / rate - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    if (stopping) return;
    const { url, headers, body } = pool[k % pool.length]!;
    try {
      const res = await fetch(url, { method: "POST", headers, body });
      await res.arrayBuffer();
      sent++;
      if (res.status === 202) accepted++;
    } catch {
      sent++;
    }
  }
}

const running = Promise.all(Array.from({ length: lanes }, lane));
process.stdout.write("ready\n");
process.on("SIGTERM", async () => {
  stopping = true;
  const seconds = (performance.now() - started) / 1000;
  await running;
  process.stdout.write(`${JSON.stringify({ sent, accepted, seconds })}\n`);
  process.exit(0);
});
