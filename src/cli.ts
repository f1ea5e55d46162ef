/**
 * `bun run intake <command>`: serve | bootstrap | migrate. Bad configuration ends the
 * process with one line per problem, naming the variable.
 */
import { parseArgs } from "node:util";
import { createDomain, openStore } from "./app.ts";
import { createMemoryCache } from "./cache/memory.ts";
import { ConfigError, loadKeyMaterial, parseConfig } from "./config.ts";
import { DomainError } from "./domain/errors.ts";
import { systemClock } from "./domain/types.ts";
import { createLogger } from "./logger.ts";
import { serve } from "./serve.ts";

const USAGE = `usage:
  bun run intake serve
  bun run intake bootstrap --tenant-name <name> [--permission-mode flat|role_based] --json
  bun run intake bootstrap --tenant-id <uuid> --json
  bun run intake setup-link [--expires-in <seconds, default 3600>] [--base-url <url>] [--json]
  bun run intake migrate`;

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function bootstrap(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      "tenant-name": { type: "string" },
      "tenant-id": { type: "string" },
      "permission-mode": { type: "string", default: "role_based" },
      json: { type: "boolean", default: false },
    },
  });
  const mode = values["permission-mode"];
  if (mode !== "flat" && mode !== "role_based") fail("--permission-mode must be flat or role_based");
  if (!values["tenant-name"] === !values["tenant-id"])
    fail(`give exactly one of --tenant-name or --tenant-id\n${USAGE}`);
  const config = parseConfig(process.env);
  if (config.database.kind === "sqlite" && config.database.path === ":memory:") {
    fail("DATABASE_URL=sqlite::memory: lives inside one process; the CLI cannot reach it. Use a file or PostgreSQL.");
  }
  const keys = loadKeyMaterial(config);
  const logger = createLogger((line) => process.stderr.write(`${line}\n`), { level: config.logLevel });
  const store = await openStore(config);
  const cache = createMemoryCache();
  try {
    const { tokens } = createDomain({ store, cache, keys, config, logger, clock: systemClock });
    const made = values["tenant-name"]
      ? await tokens.bootstrapTenant({ name: values["tenant-name"], permissionMode: mode })
      : await tokens.mintRecoveryToken(values["tenant-id"] as string);
    const out = { tenant_id: made.tenant.id, token_id: `tok_${made.record.id}`, token: made.token };
    if (values.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      process.stdout.write(
        `tenant ${out.tenant_id}\ntoken id ${out.token_id}\ntoken ${out.token}\n(shown once: store it now)\n`,
      );
    }
  } finally {
    await cache.close();
    await store.close();
  }
}

/** A one-time console setup link (docs/console.md): only the code's digest is stored. */
async function setupLink(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      "expires-in": { type: "string", default: "3600" },
      "base-url": { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const raw = values["expires-in"];
  const expiresIn = Number(raw);
  if (!/^\d+$/.test(raw) || expiresIn < 60 || expiresIn > 7 * 86_400) {
    fail(`--expires-in must be a whole number of seconds from 60 to 604800 (got "${raw}")`, 2);
  }
  const config = parseConfig(process.env);
  if (config.database.kind === "sqlite" && config.database.path === ":memory:") {
    fail("DATABASE_URL=sqlite::memory: lives inside one process; the CLI cannot reach it. Use a file or PostgreSQL.");
  }
  const base = (values["base-url"] ?? `http://${config.host}:${config.port}`).replace(/\/+$/, "");
  if (!URL.canParse(base))
    fail(`--base-url must be an absolute URL such as https://intake.example.com (got "${base}")`, 2);
  const keys = loadKeyMaterial(config);
  const logger = createLogger((line) => process.stderr.write(`${line}\n`), { level: config.logLevel });
  const store = await openStore(config);
  const cache = createMemoryCache();
  try {
    const { tokens } = createDomain({ store, cache, keys, config, logger, clock: systemClock });
    const made = await tokens.issueSetupCode({ expiresInSeconds: expiresIn });
    // The code rides in the fragment: browsers never send it, so no access log can hold it.
    const out = { url: `${base}/console/setup#code=${made.code}`, expires_at: new Date(made.expiresAt).toISOString() };
    if (values.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else process.stdout.write(`${out.url}\n(works once, until ${out.expires_at})\n`);
  } finally {
    await cache.close();
    await store.close();
  }
}

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve": {
      const config = parseConfig(process.env);
      await serve(config, loadKeyMaterial(config), createLogger(undefined, { level: config.logLevel }));
      return;
    }
    case "bootstrap":
      return bootstrap(rest);
    case "setup-link":
      return setupLink(rest);
    case "migrate": {
      const config = parseConfig(process.env);
      const store = await openStore(config);
      await store.close();
      process.stdout.write(`migrations applied (${config.database.kind})\n`);
      return;
    }
    default:
      fail(USAGE, command === undefined || command === "help" || command === "--help" ? 0 : 2);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) fail(error.problems.map((p) => `config: ${p}`).join("\n"));
  if (error instanceof DomainError)
    fail(`${error.code}: ${error.message}${error.details ? ` ${JSON.stringify(error.details)}` : ""}`);
  fail(`intake: ${error instanceof Error ? error.message : String(error)}`);
});
