/**
 * `bun run openapi:lint` (docs/api.md, SPEC §20): writes the OpenAPI document the app serves
 * (an in-memory SQLite app with the default configuration) to .openapi/openapi.json and runs
 * Spectral (`spectral:oas`, .spectral.yaml) and Redocly (`recommended`, redocly.yaml and
 * .redocly.lint-ignore.yaml, which names that path) over it. Exits 1 on any finding of either,
 * warnings included.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../src/app.ts";
import { loadKeyMaterial, parseConfig } from "../src/config.ts";
import { createLogger } from "../src/logger.ts";

const root = join(import.meta.dir, "..");
const file = join(root, ".openapi", "openapi.json");

const config = parseConfig({ DATABASE_URL: "sqlite::memory:", INTAKE_GRPC_PORT: "0" });
const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });
let text: string;
try {
  const res = await app.fetch(new Request("http://localhost:3000/openapi.json"));
  if (res.status !== 200) throw new Error(`/openapi.json answered ${res.status}`);
  text = JSON.stringify(await res.json(), null, 2);
} finally {
  await app.close();
}
mkdirSync(join(root, ".openapi"), { recursive: true });
writeFileSync(file, `${text}\n`);

const bin = (pkg: string, path: string) => join(root, "node_modules", pkg, path);
const run = (cmd: string[], stdout: "inherit" | "pipe" = "inherit") =>
  Bun.spawnSync(cmd, { cwd: root, stdout, stderr: "inherit" });

console.log("== spectral lint (spectral:oas, .spectral.yaml) .openapi/openapi.json");
// --fail-severity hint: a warning (or less) fails too.
const spectral = run([
  bin(".bin", "spectral"),
  "lint",
  "--ruleset",
  ".spectral.yaml",
  "--fail-severity",
  "hint",
  ".openapi/openapi.json",
]).exitCode;

console.log("== redocly lint (recommended, redocly.yaml) .openapi/openapi.json");
// Under Bun: Redocly's CLI warns about the Node.js version on every run otherwise. Its exit code
// ignores warnings, so the JSON report's totals decide.
const redoclyArgs = ["lint", "--config", "redocly.yaml", ".openapi/openapi.json"];
const cli = ["bun", "--bun", bin("@redocly/cli", "bin/cli.js")];
const report = run([...cli, ...redoclyArgs, "--format", "json"], "pipe");
const totals = (JSON.parse(report.stdout.toString()) as { totals: { errors: number; warnings: number } }).totals;
const redocly = totals.errors + totals.warnings;
if (redocly > 0) run([...cli, ...redoclyArgs]);
else console.log("redocly: no errors, no warnings");

if (spectral !== 0 || redocly > 0) {
  console.error(
    `openapi:lint: findings (spectral exit ${spectral}; redocly ${totals.errors} errors, ${totals.warnings} warnings)`,
  );
  process.exit(1);
}
console.log("openapi:lint: no findings");
