/**
 * What Intake's process alone costs a request, apart from anything Intake does with it: the bare
 * GET of bench/baseline.ts served from a bare process and, side by side, the very same handler
 * from a process that first started Intake's whole app (`FLOOR_IN_INTAKE=1`: its modules, its
 * SQLite store and cache, its timers; no request goes to it). Pinned as the read scenarios are
 * (both servers on CPU 0, both wrk on CPU 1), 32 connections each, a 2 s warm-up side by side,
 * then rounds of 2 s (which one is launched first alternates); prints each round's ratio (the
 * handler in Intake's process over the bare one) and the median. It is the least a handler
 * inside Intake's process, such as the health probe (scenario 1), can cost against the bare GET.
 *
 * Usage: bun bench/process-cost.ts [--rounds 10]
 */
import { parseArgs } from "node:util";
import { freePort, pinProcess, REPO_ROOT, stop, track, waitReady } from "./lib/procs.ts";
import { median } from "./lib/report.ts";
import { runWrk } from "./lib/wrk.ts";

const { values: flags } = parseArgs({ options: { rounds: { type: "string", default: "10" } } });
const rounds = Number(flags.rounds);

async function serve(env: Record<string, string>) {
  const port = freePort();
  const child = track(
    Bun.spawn(["bun", "bench/baseline.ts"], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: String(port), ...env },
      stdout: "ignore",
      stderr: "ignore",
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/v1/health`, child, "/dev/null");
  await pinProcess(child.pid, "0");
  return { child, url };
}

const bare = await serve({});
const inIntake = await serve({ FLOOR_IN_INTAKE: "1" });
const get = (url: string, durationS: number) =>
  runWrk({ url: `${url}/v1/health`, connections: 32, threads: 1, durationS, script: "get.lua", cpus: "1" });
try {
  await Promise.all([get(inIntake.url, 2), get(bare.url, 2)]);
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const [a, b] =
      round % 2 === 0
        ? await Promise.all([get(inIntake.url, 2), get(bare.url, 2)])
        : (await Promise.all([get(bare.url, 2), get(inIntake.url, 2)])).reverse();
    if (!a || !b) throw new Error("a wrk run returned nothing");
    ratios.push(a.rps / b.rps);
    console.log(
      `round ${round}/${rounds}: in Intake's process ${Math.round(a.rps)} | bare ${Math.round(b.rps)} req/s = ${(a.rps / b.rps).toFixed(3)}`,
    );
  }
  console.log(
    `the bare GET in Intake's process vs in a bare one: median ${median(ratios).toFixed(3)}, per round ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`,
  );
} finally {
  await stop(bare.child);
  await stop(inIntake.child);
}
