/**
 * `bun run intake <command>` (`./intake <command>` in the one-file build). Every command and its
 * flags are declared once in COMMANDS: parsing (unknown flags are errors that name them) and
 * `help` both read that table; help and hints name the command as it was invoked (`invokedAs`).
 * Bad configuration ends the process with one line per problem, naming the variable.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "./adapters.ts";
import { createDomain, type Domain } from "./app.ts";
import { createMemoryCache } from "./cache/memory.ts";
import { type Config, ConfigError, describeStore, invokedAs, loadKeyMaterial, parseConfig, version } from "./config.ts";
import { ENVIRONMENT } from "./config-environment.ts";
import { DomainError } from "./domain/errors.ts";
import { systemClock } from "./domain/types.ts";
import { createLogger } from "./logger.ts";
import { serve } from "./serve.ts";
import { runningServer } from "./serving.ts";

interface Flag {
  name: string;
  type: "string" | "boolean";
  /** How the value is shown in usage, e.g. `<name>`. */
  value?: string;
  help: string;
}

type Values = Record<string, string | boolean | undefined>;

interface Command {
  name: string;
  summary: string;
  flags: Flag[];
  /** Extra usage lines (alternative forms); the first line is built from `flags`. */
  forms?: string[];
  run(values: Values): Promise<void>;
}

/** An error in how the CLI was called (exit 2), as opposed to a failure while running (exit 1). */
class UsageError extends Error {}

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

/** Notes for the operator that must not mix with a command's output (e.g. --json). */
function note(message: string) {
  process.stderr.write(`${message}\n`);
}

/**
 * An operator command run from another directory (or with another INTAKE_DATA_DIR) than the
 * server would otherwise make a new SQLite store whose tokens the server has never heard of.
 * Commands that write take `--create` to allow it.
 */
function refuseNewStore(command: string, config: Config, create: boolean) {
  const { database } = config;
  if (database.kind !== "sqlite" || database.path === ":memory:" || existsSync(database.path)) return;
  if (create) {
    // The file's own directory (DATABASE_URL=sqlite:<path> may name one outside the data dir).
    mkdirSync(dirname(database.path), { recursive: true, mode: 0o700 });
    return;
  }
  const variable = config.databaseVariable;
  const shown = variable === "INTAKE_DATA_DIR" ? (process.env.INTAKE_DATA_DIR ?? "./data") : process.env.DATABASE_URL;
  fail(
    `${command}: no store at ${database.path} (${variable}=${shown}, from ${process.cwd()}). ` +
      `Run it where the server runs, with the server's ${variable}, or pass --create to make a new store there.`,
  );
}

/** The configuration of an operator command that writes to a server's store (not `sqlite::memory:`). */
function operatorConfig(command: string, create: boolean): Config {
  const config = parseConfig(process.env);
  if (config.database.kind === "sqlite" && config.database.path === ":memory:") {
    fail("DATABASE_URL=sqlite::memory: lives inside one process; the CLI cannot reach it. Use a file or PostgreSQL.");
  }
  refuseNewStore(command, config, create);
  return config;
}

/** Runs `work` with the domain's tokens over the configured store, closing the store after. */
async function withOnboarding(
  config: Config,
  work: (onboarding: Domain["onboarding"]) => Promise<void>,
): Promise<void> {
  const keys = loadKeyMaterial(config);
  const logger = createLogger((line) => process.stderr.write(`${line}\n`), { level: config.logLevel });
  const store = await openStore(config);
  const cache = createMemoryCache();
  try {
    await work(createDomain({ store, cache, keys, config, logger, clock: systemClock }).onboarding);
  } finally {
    await cache.close();
    await store.close();
  }
}

async function bootstrap(values: Values) {
  const mode = values["permission-mode"] ?? "role_based";
  if (mode !== "flat" && mode !== "role_based") throw new UsageError("--permission-mode must be flat or role_based");
  if (!values["tenant-name"] === !values["tenant-id"])
    throw new UsageError("give exactly one of --tenant-name or --tenant-id");
  const config = operatorConfig("bootstrap", values.create === true);
  await withOnboarding(config, async (onboarding) => {
    const name = values["tenant-name"];
    const made =
      typeof name === "string"
        ? await onboarding.bootstrapTenant({ name, permissionMode: mode })
        : { ...(await onboarding.mintRecoveryToken(values["tenant-id"] as string)), sameName: 0 };
    const where = describeStore(config.database);
    if (made.sameName > 0) {
      note(
        `note: ${made.sameName} other tenant(s) in this store are also named "${made.tenant.name}"; ` +
          "created a new one anyway (use --tenant-id <uuid> to mint a token for an existing tenant)",
      );
    }
    const out = { tenant_id: made.tenant.id, token_id: `tok_${made.record.id}`, token: made.token };
    if (values.json) {
      // stdout stays exactly the documented JSON; where it was written goes to stderr.
      note(`store: ${where}`);
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      process.stdout.write(
        `store ${where}\ntenant ${out.tenant_id}\ntoken id ${out.token_id}\ntoken ${out.token}\n(shown once: store it now)\n`,
      );
    }
  });
}

/**
 * Where the link points without --base-url: the server serving this store, as it recorded
 * itself beside the store (src/serving.ts); else HOST and PORT from this shell's environment,
 * saying so on stderr, since a server started with another PORT would not answer there.
 */
function linkBase(config: Config): string {
  const running = runningServer(config);
  if (running?.url) {
    const url = new URL(running.url);
    // A server on every address (0.0.0.0, ::) is reached on this machine at localhost.
    if (url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "localhost";
    note(
      `setup-link: the link points at the server serving this store (pid ${running.pid}, ${url.origin}); --base-url <url> names another origin`,
    );
    return url.origin;
  }
  const fallback = `http://${config.host}:${config.port}`;
  const why =
    config.database.kind === "postgres"
      ? "a PostgreSQL store may have several servers"
      : `no server is serving ${config.database.path} now`;
  note(
    `setup-link: ${why}; the link uses HOST and PORT from this environment (${fallback}); --base-url <url> names another origin`,
  );
  return fallback;
}

/** A one-time console setup link (docs/console.md): only the code's digest is stored. */
async function setupLink(values: Values) {
  const raw = typeof values["expires-in"] === "string" ? values["expires-in"] : "3600";
  const expiresIn = Number(raw);
  if (!/^\d+$/.test(raw) || expiresIn < 60 || expiresIn > 7 * 86_400) {
    throw new UsageError(`--expires-in must be a whole number of seconds from 60 to 604800 (got "${raw}")`);
  }
  // A link is for a running server's store: no --create here.
  const config = operatorConfig("setup-link", false);
  const given = values["base-url"];
  const base = (typeof given === "string" ? given : linkBase(config)).replace(/\/+$/, "");
  if (!URL.canParse(base))
    throw new UsageError(`--base-url must be an absolute URL such as https://intake.example.com (got "${base}")`);
  await withOnboarding(config, async (onboarding) => {
    const made = await onboarding.issueSetupCode({ expiresInSeconds: expiresIn });
    // The code rides in the fragment: browsers never send it, so no access log can hold it.
    const out = { url: `${base}/console/setup#code=${made.code}`, expires_at: new Date(made.expiresAt).toISOString() };
    if (values.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else process.stdout.write(`${out.url}\n(works once, until ${out.expires_at})\n`);
  });
}

const COMMANDS: Command[] = [
  {
    name: "serve",
    summary: "apply migrations, then serve HTTP (PORT) and gRPC (INTAKE_GRPC_PORT) until SIGTERM/SIGINT",
    flags: [],
    async run() {
      const config = parseConfig(process.env);
      await serve(config, loadKeyMaterial(config), createLogger(undefined, { level: config.logLevel }));
    },
  },
  {
    name: "bootstrap",
    summary: "create a tenant and its first owner read_write token (or mint one for an existing tenant)",
    flags: [
      { name: "tenant-name", type: "string", value: "<name>", help: "name of the new tenant" },
      { name: "tenant-id", type: "string", value: "<uuid>", help: "mint a fresh owner token for this tenant instead" },
      {
        name: "permission-mode",
        type: "string",
        value: "flat|role_based",
        help: "the new tenant's permission mode (default role_based)",
      },
      {
        name: "json",
        type: "boolean",
        help: "print {tenant_id, token_id, token} as one JSON line (the store's location goes to stderr)",
      },
      { name: "create", type: "boolean", help: "make the SQLite store (and data dir) if it does not exist yet" },
    ],
    forms: [
      "bootstrap --tenant-name <name> [--permission-mode flat|role_based] [--json] [--create]",
      "bootstrap --tenant-id <uuid> [--json]",
    ],
    run: bootstrap,
  },
  {
    name: "setup-link",
    summary: "print a one-time link to the console's setup page (docs/console.md)",
    flags: [
      {
        name: "expires-in",
        type: "string",
        value: "<seconds>",
        help: "how long the link works, 60 to 604800 (default 3600)",
      },
      {
        name: "base-url",
        type: "string",
        value: "<url>",
        help: "the origin people reach Intake at (default: where the server serving this store listens, else http://HOST:PORT)",
      },
      { name: "json", type: "boolean", help: 'print {"url", "expires_at"} as one JSON line' },
    ],
    run: setupLink,
  },
  {
    name: "migrate",
    summary: "apply the store's migrations and exit",
    flags: [
      { name: "create", type: "boolean", help: "make the SQLite store (and its directory) if it does not exist yet" },
    ],
    async run(values) {
      const config = operatorConfig("migrate", values.create === true);
      const store = await openStore(config);
      await store.close();
      process.stdout.write(`migrations applied (${config.database.kind}): ${describeStore(config.database)}\n`);
    },
  },
  {
    name: "help",
    summary: "this text (also -h, --help, and <command> --help)",
    flags: [],
    async run() {
      process.stdout.write(`${usage()}\n`);
    },
  },
];

function usage(): string {
  const self = invokedAs();
  const out = [`intake ${version(process.env)}`, "", `usage: ${self} <command> [flags]`, "", "commands:"];
  for (const command of COMMANDS) {
    out.push(`  ${command.name.padEnd(10)} ${command.summary}`);
    for (const form of command.forms ?? []) out.push(`             ${self} ${form}`);
    for (const flag of command.flags) {
      const left = `--${flag.name}${flag.value ? ` ${flag.value}` : ""}`;
      out.push(`             ${left.padEnd(34)} ${flag.help}`);
    }
  }
  out.push("  --version  print the version", "", "environment (read by serve, bootstrap and migrate):");
  for (const v of ENVIRONMENT) out.push(`  ${v.name.padEnd(36)} ${v.meaning} (default: ${v.fallback})`);
  return out.join("\n");
}

async function main(argv: string[]) {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "--help") return void process.stdout.write(`${usage()}\n`);
  if (name === "--version" || name === "-v") return void process.stdout.write(`${version(process.env)}\n`);
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    throw new UsageError(
      name.startsWith("-")
        ? `unknown flag ${name}`
        : `unknown command "${name}" (commands: ${COMMANDS.map((c) => c.name).join(", ")})`,
    );
  }
  if (rest.includes("-h") || rest.includes("--help")) return void process.stdout.write(`${usage()}\n`);
  let values: Values;
  try {
    const options = Object.fromEntries(command.flags.map((f) => [f.name, { type: f.type }]));
    ({ values } = parseArgs({ args: rest, options, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(`${command.name}: ${argumentProblem(error, rest)}`);
  }
  await command.run(values);
}

/** parseArgs' message, reduced to the argument it is about, plus the variable to use instead. */
function argumentProblem(error: unknown, args: string[]): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const flag = /'([^']+)'/.exec(message)?.[1] ?? message;
    const name = flag.replace(/^-+/, "").split("=")[0] ?? "";
    const variable = ENVIRONMENT.find(
      (v) =>
        v.name
          .toLowerCase()
          .replace(/^intake_/, "")
          .replaceAll("_", "-") === name,
    );
    return `unknown flag ${flag}${variable ? ` (set ${variable.name} in the environment instead)` : ""}`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const arg = /'([^']+)'/.exec(message)?.[1] ?? args.find((a) => !a.startsWith("-"));
    return `unexpected argument ${arg}`;
  }
  return message;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) fail(`intake: ${error.message}\nrun \`${invokedAs()} help\` for the usage`, 2);
  if (error instanceof ConfigError) fail(error.problems.map((p) => `config: ${p}`).join("\n"));
  if (error instanceof DomainError)
    fail(`${error.code}: ${error.message}${error.details ? ` ${JSON.stringify(error.details)}` : ""}`);
  fail(`intake: ${error instanceof Error ? error.message : String(error)}`);
});
