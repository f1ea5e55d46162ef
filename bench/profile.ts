/**
 * Top frames of a `bun --cpu-prof` profile (Chrome .cpuprofile), ranked by sample COUNT.
 * Bun's own markdown weighs each sample by the gap since the previous one, and on a shared
 * machine a descheduled process makes single samples "last" a second; counts do not lie that way.
 *
 * Usage: bun bench/profile.ts <file.cpuprofile> [--top N]
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT } from "./lib/procs.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "25" } },
});
const file = positionals[0];
if (!file) {
  process.stderr.write("usage: bun bench/profile.ts <file.cpuprofile> [--top N]\n");
  process.exit(2);
}
const top = Number(values.top);
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const node of profile.nodes) {
  byId.set(node.id, node);
  for (const child of node.children ?? []) parent.set(child, node.id);
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const path = url.replace(/^file:\/\//, "");
  const where = path ? `${path.startsWith(REPO_ROOT) ? relative(REPO_ROOT, path) : path}:${lineNumber + 1}` : "native";
  return `${functionName || "(anonymous)"} ${where}`;
}

const IDLE = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"]);
const self = new Map<string, number>();
const total = new Map<string, number>();
let busy = 0;
for (const id of profile.samples) {
  const node = byId.get(id);
  if (!node || IDLE.has(node.callFrame.functionName)) continue;
  busy++;
  const leaf = frameName(node);
  self.set(leaf, (self.get(leaf) ?? 0) + 1);
  // Inclusive: each frame once per sample, however often it recurses.
  const seen = new Set<string>();
  for (let n: ProfileNode | undefined = node; n; n = byId.get(parent.get(n.id) ?? -1)) {
    const name = frameName(n);
    if (seen.has(name) || IDLE.has(n.callFrame.functionName)) continue;
    seen.add(name);
    total.set(name, (total.get(name) ?? 0) + 1);
  }
}

const rank = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
const pct = (n: number) => `${((100 * n) / Math.max(1, busy)).toFixed(1)}%`;
const out: string[] = [`${busy} busy samples in ${file}`, "", `top ${top} by self samples:`];
for (const [name, n] of rank(self)) out.push(`  ${pct(n).padStart(6)}  ${name}`);
out.push("", `top ${top} by inclusive samples:`);
for (const [name, n] of rank(total)) out.push(`  ${pct(n).padStart(6)}  ${name}`);
process.stdout.write(`${out.join("\n")}\n`);
