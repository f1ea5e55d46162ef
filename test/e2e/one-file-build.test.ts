/**
 * The one-file build (README.md "Ship it"): `bun run build`'s executable, copied ALONE into an
 * empty directory and run with no Bun on PATH and no node_modules or drizzle/ folder beside
 * it, migrates, bootstraps, makes a setup link and serves — ingest included, whose SQLite commits run in the
 * embedded worker, /docs, whose browser bundle is embedded, and the console, bundled ahead of
 * time into the binary. Its output is JSON lines only, and its help and hints say `./intake`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Launch, runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { serviceAvailable } from "../support/services.ts";
import { sign } from "../support/signing.ts";
import { createTestDatabase, randomKeyEnv } from "../support/stack.ts";

const ROOT = join(import.meta.dir, "../..");
/** No directory on it holds bun: the binary must not need it. */
const NO_BUN_PATH = "/nonexistent";

const postgres = await serviceAvailable("postgres");

let buildDir: string;
let binary: string;

beforeAll(async () => {
  buildDir = mkdtempSync(join(tmpdir(), "intake-build-"));
  binary = join(buildDir, "intake");
  const build = Bun.spawn(["bun", "scripts/build.ts", "--outfile", binary], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`bun run build failed (${code}):\n${stderr}`);
}, 120_000);

afterAll(async () => {
  await stopAll();
  rmSync(buildDir, { recursive: true, force: true });
});

/** A fresh empty directory holding nothing but a copy of the binary. */
function aloneInEmptyDirectory(): Launch {
  const dir = mkdtempSync(join(tmpdir(), "intake-alone-"));
  copyFileSync(binary, join(dir, "intake"));
  expect(readdirSync(dir)).toEqual(["intake"]);
  return { command: ["./intake"], cwd: dir };
}

describe("dist/intake copied alone into an empty directory", () => {
  test("migrate, bootstrap, setup-link and serve work on SQLite: a signed event is stored (202) and read back", async () => {
    const launch = aloneInEmptyDirectory();
    const env = { PATH: NO_BUN_PATH };

    // An empty directory has no store: migrate says to pass --create, then makes one with it.
    await expect(runCli(["migrate"], env, 30_000, launch)).rejects.toThrow(/--create/);
    expect(await runCli(["migrate", "--create"], env, 30_000, launch)).toContain("migrations applied (sqlite)");
    const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Alone", "--json"], env, 30_000, launch)) as {
      token: string;
    };

    const link = JSON.parse(await runCli(["setup-link", "--json"], env, 30_000, launch)) as { url: string };
    expect(link.url).toMatch(/\/console\/setup#code=setup_[0-9A-Za-z]{43}$/);

    const server = await startIntake("binary", env, 20_000, launch);
    try {
      expect((await server.fetch("/v1/health")).status).toBe(200);
      // Every JSON-body route shape once: bearer with a body (services), no bearer (setup), ingest.
      expect(
        (
          await server.fetch("/v1/setup", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ setup_code: `setup_${"0".repeat(43)}`, tenant_name: "x" }),
          })
        ).status,
      ).toBe(401);
      const created = await server.fetch("/v1/services", {
        method: "POST",
        token: boot.token,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ service_name: "billing" }),
      });
      expect(created.status).toBe(201);
      const service = (await created.json()) as { id: string; signing_secret: string };

      const payload = '{"type":"invoice.paid"}';
      const ingested = await server.fetch(`/v1/ingest/${service.id}`, {
        method: "POST",
        headers: { "x-service-signature": sign(service.signing_secret, payload, Date.now()) },
        body: payload,
      });
      expect(ingested.status).toBe(202);

      const events = (await (
        await server.fetch(`/v1/services/${service.id}/events`, { token: boot.token })
      ).json()) as {
        data: Array<{ payload: unknown }>;
      };
      expect(events.data.map((e) => e.payload)).toEqual([{ type: "invoice.paid" }]);

      // The console, bundled ahead of time into the binary: its page and every asset it names.
      const page = await server.fetch("/console");
      expect(page.status).toBe(200);
      const html = await page.text();
      const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) expect((await server.fetch(asset)).status).toBe(200);

      const bundle = await server.fetch("/docs/assets/scalar-api-reference.js");
      expect(bundle.status).toBe(200);
      expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);

      // Nothing but JSON log lines on stdout and stderr (Elysia once printed a "[Sucrose] warning" here).
      await server.stop();
      const notJson = server.lines.filter((line) => {
        try {
          return typeof JSON.parse(line) !== "object";
        } catch {
          return true;
        }
      });
      expect(notJson).toEqual([]);
    } finally {
      await server.stop();
      rmSync(launch.cwd, { recursive: true, force: true });
    }
  }, 60_000);

  test("help, a usage error and serve's first-run hint name the command as it was run: ./intake, not bun run intake", async () => {
    const launch = aloneInEmptyDirectory();
    try {
      await runCli(["migrate", "--create"], { PATH: NO_BUN_PATH }, 30_000, launch);
      const server = await startIntake("first run", { PATH: NO_BUN_PATH }, 20_000, launch);
      for (let i = 0; i < 100 && !server.lines.some((l) => l.includes("setup-link")); i++) await Bun.sleep(20);
      await server.stop();
      const hint = server.lines.find((l) => l.includes("setup-link")) ?? "";
      expect(hint).toContain("`./intake setup-link`");
      expect(hint).toContain("`./intake bootstrap --tenant-name <name> --json`");

      const help = await runCli(["help"], { PATH: NO_BUN_PATH }, 30_000, launch);
      expect(help).toContain("usage: ./intake <command> [flags]");
      expect(help).toContain("./intake bootstrap --tenant-id <uuid>");
      expect(help).not.toContain("bun run");
      await expect(runCli(["srve"], { PATH: NO_BUN_PATH }, 30_000, launch)).rejects.toThrow(
        "run `./intake help` for the usage",
      );
    } finally {
      rmSync(launch.cwd, { recursive: true, force: true });
    }
  }, 30_000);

  test.skipIf(!postgres)(
    "migrate applies the PostgreSQL migrations embedded in the binary",
    async () => {
      const launch = aloneInEmptyDirectory();
      const database = await createTestDatabase();
      try {
        const env = { PATH: NO_BUN_PATH, DATABASE_URL: database.url, ...randomKeyEnv() };
        expect(await runCli(["migrate"], env, 30_000, launch)).toContain("migrations applied (postgres)");
        const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Pg", "--json"], env, 30_000, launch)) as {
          token_id: string;
        };
        expect(boot.token_id).toMatch(/^tok_[0-9a-f]{32}$/);
      } finally {
        await database.drop();
        rmSync(launch.cwd, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
