/**
 * The SQLite store in a process of its own started from another directory (moved out of
 * test/store/sqlite.test.ts, which runs in process): migrate() finds its migrations next to
 * the code, not relative to the working directory.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "intake-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("migrate() finds its migrations from any working directory", async () => {
  const path = join(dir, "store.sqlite");
  const script = `
    const { createSqliteStore } = await import(${JSON.stringify(join(import.meta.dir, "../../src/store/sqlite/store.ts"))});
    const store = createSqliteStore({ path: ${JSON.stringify(path)} });
    await store.migrate();
    console.log(JSON.stringify(await store.services.list("t", { limit: 1 })));
    await store.close();
  `;
  const child = Bun.spawnSync(["bun", "-e", script], { cwd: tmpdir(), stderr: "pipe" });
  expect(child.stderr.toString()).toBe("");
  expect(child.stdout.toString().trim()).toBe("[]");
  expect(child.exitCode).toBe(0);
});
