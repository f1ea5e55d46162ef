/**
 * `bun run build`: Intake as one executable, `dist/intake` (README.md "Ship it"). The server,
 * the CLI, the migrations of both dialects (inlined by src/store/migrations.ts) and the /docs
 * bundle are inside; copied alone to a machine without Bun or node_modules, it runs every
 * command `bun run intake` does.
 */
import { join, resolve } from "node:path";

const root = join(import.meta.dir, "..");
// `--outfile <path>` builds elsewhere (the binary test builds into a fresh directory).
const at = process.argv.indexOf("--outfile");
const outfile = at > 0 && process.argv[at + 1] ? resolve(process.argv[at + 1] as string) : join(root, "dist", "intake");

const result = await Bun.build({
  entrypoints: [
    join(root, "src/cli.ts"),
    // Workers are separate entry points in a compiled build (src/store/sqlite/event-writer.ts
    // finds it at its path under src/).
    join(root, "src/store/sqlite/event-writer-worker.ts"),
  ],
  root: join(root, "src"),
  compile: { outfile },
  // Elysia reads each hook's and handler's source (its "sucrose" inference, node_modules/elysia
  // dist/sucrose.mjs) to learn which parts of the request it uses, and splits a method such as
  // `transform(ctx) {` from its body at the first line break. Minified whitespace puts a whole
  // method on one line: the split fails, Elysia prints a non-JSON "[Sucrose] warning" on the
  // first request and assumes the hook uses everything (cookies parsed on every request). So
  // line breaks stay; names and syntax are still minified.
  minify: { whitespace: false, identifiers: true, syntax: true },
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.log(`built ${outfile}`);
