/** Medians, rows and the markdown table of a run. */
import type { Noise } from "./noise.ts";

export interface Sample {
  rps: number;
  p50Us: number;
  p99Us: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
}

export interface Series {
  scenario: number;
  label: string;
  samples: Sample[];
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Ratio of req/s of `a` to `b`, paired per round (a's round i against b's round i, which ran
 * right after it), then the median: slow drifts in the machine's load cancel within a pair.
 */
export function pairedRatio(a: Series, b: Series): number {
  const n = Math.min(a.samples.length, b.samples.length);
  return median(Array.from({ length: n }, (_, i) => (a.samples[i] as Sample).rps / (b.samples[i] as Sample).rps));
}

export interface Summary {
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50Us: number;
  p99Us: number;
  non2xx: number;
  errors: number;
  requests: number;
}

export function summarize(series: Series): Summary {
  const s = series.samples;
  return {
    rps: median(s.map((x) => x.rps)),
    rpsMin: Math.min(...s.map((x) => x.rps)),
    rpsMax: Math.max(...s.map((x) => x.rps)),
    p50Us: median(s.map((x) => x.p50Us)),
    p99Us: median(s.map((x) => x.p99Us)),
    non2xx: s.reduce((a, x) => a + x.non2xx, 0),
    errors: s.reduce((a, x) => a + x.socketErrors + x.timeouts, 0),
    requests: s.reduce((a, x) => a + x.requests, 0),
  };
}

/** "floor misses": Intake missed the goal, and so did its floor in the same run (run.ts, `againstFloor`). */
export type Status = "met" | "missed" | "floor misses" | "skipped" | "failed" | "reported";

export interface Row {
  scenario: number;
  title: string;
  goal: string;
  measured: string;
  status: Status;
}

export interface ScenarioNoise {
  scenario: number;
  seconds: number;
  noise: Noise;
}

export const fmtRps = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "–");
export const fmtMs = (us: number) => (Number.isFinite(us) ? (us / 1000).toFixed(2) : "–");
export const fmtRatio = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : "–");

export function renderMarkdown(opts: {
  header: string[];
  rows: Row[];
  series: Series[];
  noise: ScenarioNoise[];
}): string {
  const out: string[] = [...opts.header, ""];
  out.push("| # | scenario | goal | measured | result |", "|---|---|---|---|---|");
  for (const r of opts.rows) out.push(`| ${r.scenario} | ${r.title} | ${r.goal} | ${r.measured} | ${r.status} |`);
  out.push("", "Per target (median over rounds; min–max of req/s shows the spread):", "");
  out.push(
    "| # | target | rounds | req/s median | req/s min–max | p50 ms | p99 ms | non-2xx | socket errors + timeouts |",
    "|---|---|---|---|---|---|---|---|---|",
  );
  for (const s of opts.series) {
    const m = summarize(s);
    out.push(
      `| ${s.scenario} | ${s.label} | ${s.samples.length} | ${fmtRps(m.rps)} | ${fmtRps(m.rpsMin)}–${fmtRps(m.rpsMax)} | ${fmtMs(m.p50Us)} | ${fmtMs(m.p99Us)} | ${m.non2xx} | ${m.errors} |`,
    );
  }
  out.push("", "Noise (CPU of processes outside the bench, share of all cores, during each scenario):", "");
  out.push("| # | seconds | others' CPU | bench's CPU | load avg (1 min) at end |", "|---|---|---|---|---|");
  for (const n of opts.noise) {
    out.push(
      `| ${n.scenario} | ${n.seconds.toFixed(0)} | ${n.noise.othersPct.toFixed(1)}% | ${n.noise.oursPct.toFixed(1)}% | ${n.noise.load1.toFixed(2)} |`,
    );
  }
  return `${out.join("\n")}\n`;
}

// Rows whose goals are ratios (the scenarios' helpers).

/** "0.99× side by side (12,000 vs 12,100 req/s), p99 …": a side-by-side pair's ratio of `a` to `b`. */
export function beside(a: Series, b: Series): string {
  const [sa, sb] = [summarize(a), summarize(b)];
  return `${fmtRatio(pairedRatio(a, b))} side by side (${fmtRps(sa.rps)} vs ${fmtRps(sb.rps)} req/s), p99 ${fmtMs(sa.p99Us)} vs ${fmtMs(sb.p99Us)} ms`;
}

/**
 * The status of a goal whose floor (the least work the contract requires) the same run measured
 * the same way, given each part of the goal as [Intake meets it, the floor meets it]: "floor
 * misses" when every part Intake misses, the floor misses too. No implementation of the contract
 * could then have met it on this machine in this run (issue 17: "where the floor itself misses
 * it, that shown with the floor's figure from the same run").
 */
export function againstFloor(...parts: Array<[intakeMeets: boolean, floorMeets: boolean]>): Status {
  if (parts.every(([intake]) => intake)) return "met";
  return parts.every(([intake, floor]) => intake || !floor) ? "floor misses" : "missed";
}

/** A row whose goal is a paired throughput ratio of `measured` to `reference` of at least `goal`. */
export function ratioRow(scenario: number, title: string, goal: number, measured: Series, reference: Series): Row {
  const r = pairedRatio(measured, reference);
  return {
    scenario,
    title,
    goal: `≥ ${goal.toFixed(2)}×`,
    measured: `${fmtRatio(r)} (${fmtRps(summarize(measured).rps)} vs ${fmtRps(summarize(reference).rps)} req/s)`,
    status: r >= goal ? "met" : "missed",
  };
}

/** The same for a pair that ran side by side (see `sideBySide`): `a`'s paired ratio to `b`. */
export function besideRow(scenario: number, title: string, goal: number, a: Series, b: Series): Row {
  return {
    scenario,
    title,
    goal: `≥ ${goal.toFixed(2)}×`,
    measured: beside(a, b),
    status: pairedRatio(a, b) >= goal ? "met" : "missed",
  };
}
