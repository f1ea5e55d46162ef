/**
 * How noisy the machine was during a scenario: CPU busy time of the whole machine from
 * /proc/stat, minus the time of this harness and its children (servers, wrk). What is left is
 * other people's work competing for the same 2 cores.
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { livePids } from "./procs.ts";

export interface CpuSnapshot {
  /** Jiffies. */
  machineBusy: number;
  machineTotal: number;
  ours: number;
}

function processTicks(pid: number | "self", includeChildren: boolean): number {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
    // utime, stime, cutime, cstime are fields 14..17 of the full line: 11..14 after the name.
    const at = (i: number) => Number(fields[i] ?? 0);
    return at(11) + at(12) + (includeChildren ? at(13) + at(14) : 0);
  } catch {
    return 0;
  }
}

export function snapshot(): CpuSnapshot {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  // Reaped children (finished wrk runs, stopped servers) are in our cutime/cstime.
  const ours = processTicks("self", true) + livePids().reduce((sum, pid) => sum + processTicks(pid, false), 0);
  return { machineBusy: total - idle, machineTotal: total, ours };
}

export interface Noise {
  /** Share of all cores used by processes outside this bench, in percent. */
  othersPct: number;
  /** Share of all cores used by the bench (servers, wrk, harness), in percent. */
  oursPct: number;
  load1: number;
}

export function noiseSince(start: CpuSnapshot): Noise {
  const end = snapshot();
  const total = Math.max(1, end.machineTotal - start.machineTotal);
  const busy = end.machineBusy - start.machineBusy;
  const ours = Math.min(busy, end.ours - start.ours);
  const load1 = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  return { othersPct: (100 * Math.max(0, busy - ours)) / total, oursPct: (100 * ours) / total, load1 };
}

export const CORES = cpus().length;
