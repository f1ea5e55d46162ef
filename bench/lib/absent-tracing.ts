/**
 * The "absent code path" of the tracing goal (scenarios 2 and 3, bench/README.md): a copy of
 * this checkout's sources in which the per-request tracing hooks are not there at all, to
 * measure Intake with tracing unset against. Only the hooks a request or a commit passes with
 * tracing unset are cut (the edge's span checks, the group committer's wait and commit); each
 * cut is an exact text replacement, so a change to those lines makes the copy refuse (the rows
 * then say why) instead of measuring something else. node_modules is linked, not copied.
 */
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./procs.ts";

/** [file, the text with tracing, the text without]. */
const CUTS: Array<[string, string, string]> = [
  ["src/gateway/edge.ts", "span: tracer === null ? null : openSpan(tracer, request),", "span: null,"],
  [
    "src/gateway/edge.ts",
    "    if (x.span !== null) return within(x, () => enterNow(x, op, params, raw, query));\n",
    "",
  ],
  ["src/gateway/edge.ts", "    if (x.span !== null) return within(x, () => op.handle(input));\n", ""],
  [
    "src/gateway/edge.ts",
    "    if (x.span !== null) tracer?.endServer(x.span, x.route, response.status, x.requestId);\n",
    "",
  ],
  [
    "src/gateway/edge.ts",
    "return x.span === null ? serveNow(x, op, params, query) : within(x, () => serveNow(x, op, params, query));",
    "return serveNow(x, op, params, query);",
  ],
  ["src/domain/group-commit.ts", "wait: tracer ? tracer.commitWait() : null,", "wait: null,"],
  [
    "src/domain/group-commit.ts",
    `      results = await (tracer
        ? tracer.commit(
            batch.map((w) => w.wait),
            items.length,
            () => options.flush(items),
          )
        : options.flush(items));`,
    "      results = await options.flush(items);",
  ],
  ["src/domain/group-commit.ts", "        if (waiter.wait !== null) tracer?.endCommitWait(waiter.wait, error);\n", ""],
  ["src/domain/group-commit.ts", "      if (waiter.wait !== null) tracer?.endCommitWait(waiter.wait);\n", ""],
];

/** Builds the copy under `dir`; returns its root, or why it cannot be built from this checkout. */
export function absentTracingCheckout(dir: string): { root: string } | { refused: string } {
  const root = join(dir, "absent-tracing");
  if (!existsSync(root)) {
    for (const entry of ["src", "gen", "drizzle", "package.json", "tsconfig.json", "bunfig.toml"]) {
      if (existsSync(join(REPO_ROOT, entry))) cpSync(join(REPO_ROOT, entry), join(root, entry), { recursive: true });
    }
    symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"));
  }
  for (const [file, withTracing, without] of CUTS) {
    const path = join(root, file);
    const text = readFileSync(path, "utf8");
    if (text.includes(withTracing)) writeFileSync(path, text.replace(withTracing, without));
    else if (!readFileSync(join(REPO_ROOT, file), "utf8").includes(withTracing))
      return { refused: `${file} no longer has a tracing hook bench/lib/absent-tracing.ts cuts` };
  }
  return { root };
}
