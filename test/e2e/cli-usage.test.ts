/**
 * How the CLI is called: --version, help in all its spellings, and unknown commands and flags
 * as errors that name them (exit 2). Also: `help` lists every variable README.md documents.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { ENVIRONMENT } from "../../src/config-environment.ts";

const ROOT = join(import.meta.dir, "..", "..");

function cli(args: string[]) {
  const child = Bun.spawnSync(["bun", "src/cli.ts", ...args], {
    cwd: ROOT,
    // PORT=0 so that a wrongly started server would not collide; timeout kills it.
    env: { PATH: process.env.PATH ?? "", PORT: "0", INTAKE_GRPC_PORT: "0", DATABASE_URL: "sqlite::memory:" },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 30_000,
  });
  return { code: child.exitCode, stdout: child.stdout.toString(), stderr: child.stderr.toString() };
}

test("--version prints the package version and exits 0", () => {
  expect(cli(["--version"])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
});

test("help, -h, --help and `bootstrap --help` print the same usage and exit 0", () => {
  const help = cli(["help"]);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("usage: bun run intake <command>");
  for (const args of [["-h"], ["--help"], [], ["bootstrap", "--help"]]) expect(cli(args)).toEqual(help);
}, 120_000);

test("help lists every command, each flag of bootstrap, and every environment variable", () => {
  const { stdout } = cli(["help"]);
  for (const command of ["serve", "bootstrap", "migrate", "help"]) expect(stdout).toContain(`  ${command} `);
  for (const flag of ["--tenant-name", "--tenant-id", "--permission-mode", "--json", "--create"])
    expect(stdout).toContain(flag);
  for (const variable of ENVIRONMENT) expect(stdout).toContain(variable.name);
});

test("help's variables are exactly README.md's configuration table", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const table = readme.slice(
    readme.indexOf("## Configuration"),
    readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1),
  );
  const documented = [...table.matchAll(/^\| `([A-Z_]+)`(?: \/ `([A-Z_]+)`)? \|/gm)].flatMap((m) =>
    m[2] ? [m[1], m[2]] : [m[1]],
  );
  expect(documented.sort()).toEqual(ENVIRONMENT.map((v) => v.name).sort());
});

test("exit 2 for an unknown command, naming it, and nothing starts", () => {
  const { code, stdout, stderr } = cli(["srve"]);
  expect(code).toBe(2);
  expect(stdout).toBe("");
  expect(stderr).toContain('unknown command "srve"');
});

test("exit 2 for `serve --port 3302`, naming --port and pointing to PORT (it does not start on 3000)", () => {
  const { code, stdout, stderr } = cli(["serve", "--port", "3302"]);
  expect(code).toBe(2);
  expect(stdout).not.toContain("intake listening");
  expect(stderr).toContain("unknown flag --port");
  expect(stderr).toContain("PORT");
});

test("exit 2 for an unknown flag of bootstrap or a stray argument, naming it", () => {
  const flag = cli(["bootstrap", "--tenant-nam", "x"]);
  expect(flag.code).toBe(2);
  expect(flag.stderr).toContain("unknown flag --tenant-nam");
  const stray = cli(["migrate", "now"]);
  expect(stray.code).toBe(2);
  expect(stray.stderr).toContain("unexpected argument now");
  const global = cli(["--verbose"]);
  expect(global.code).toBe(2);
  expect(global.stderr).toContain("unknown flag --verbose");
});

test("help's variables include every variable the config modules read", () => {
  // src/config.ts and the modules it parses some variables with (config-tracing.ts, …).
  const files = [...new Bun.Glob("config*.ts").scanSync(join(ROOT, "src"))].filter(
    (f) => f !== "config-environment.ts",
  );
  expect(files).toContain("config.ts");
  const source = files.map((f) => readFileSync(join(ROOT, "src", f), "utf8")).join("\n");
  const read = new Set(
    // env.NAME, env["NAME"], and helpers called as integer(env, "NAME", …) or flag("NAME", …).
    [...source.matchAll(/env\.([A-Z_]+)|env\["([A-Z_]+)"\]|\((?:env, )?"([A-Z][A-Z0-9_]+)"/g)].map(
      (m) => m[1] ?? m[2] ?? m[3],
    ),
  );
  expect([...read].sort()).toEqual(ENVIRONMENT.map((v) => v.name).sort());
});
