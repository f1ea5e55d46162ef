/**
 * What the two RateLimit fields cost a response by themselves, on a bare `Bun.serve` and no
 * Intake at all: the same small JSON body answered with two header fields (Content-Type,
 * X-Request-Id) or four (plus `RateLimit-Policy` and `RateLimit`, values of Intake's length),
 * every field in the Response's init. wrk (-t1 -c32) alternates the two, rounds of `--duration`
 * seconds; prints the medians and the median of per-round paired ratios. This is the floor of
 * the "limits configured but unspent" goal (docs/rate-limits.md): no implementation that sends
 * the fields can keep more than this ratio of an authenticated GET's throughput, less the
 * difference its own per-request work makes.
 *
 *   bun bench/header-cost.ts [--rounds 8] [--duration 3]
 */
import { parseArgs } from "node:util";
import { runWrk } from "./lib/wrk.ts";

const { values: flags } = parseArgs({
  options: { rounds: { type: "string", default: "8" }, duration: { type: "string", default: "3" } },
});
const body = JSON.stringify({
  id: "6f1c2a34-9d8e-4b7a-a1c2-3d4e5f6a7b8c",
  name: "Bench",
  permission_mode: "role_based",
  created_at: "2026-11-23T00:00:00.000Z",
});
const requestId = "req_0123456789abcdef0123456789abcdef";
let remaining = 999_999_999;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  development: false,
  routes: {
    "/two": () =>
      new Response(body, { headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId } }),
    "/four": () =>
      new Response(body, {
        headers: {
          "content-type": "application/json; charset=utf-8",
          "x-request-id": requestId,
          "ratelimit-policy": '"api";q=1000000000;w=3600',
          ratelimit: `"api";r=${remaining--};t=3600`,
        },
      }),
  },
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const run = (path: string, durationS: number) =>
  runWrk({ url: `http://127.0.0.1:${server.port}${path}`, connections: 32, threads: 1, durationS, script: "get.lua" });
try {
  await run("/two", 1);
  await run("/four", 1);
  const two: number[] = [];
  const four: number[] = [];
  for (let round = 0; round < Number(flags.rounds); round++) {
    two.push((await run("/two", Number(flags.duration))).rps);
    four.push((await run("/four", Number(flags.duration))).rps);
  }
  console.log(`two fields: ${Math.round(median(two))} req/s; four fields: ${Math.round(median(four))} req/s`);
  console.log(
    `four vs two, median of paired rounds: ${median(four.map((f, i) => f / (two[i] as number))).toFixed(3)}×`,
  );
} finally {
  server.stop(true);
}
