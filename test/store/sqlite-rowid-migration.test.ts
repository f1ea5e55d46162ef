/**
 * Migration 0013 on a store written before it (docs/export.md, "Indexes"): every event's rowid
 * becomes its feed position (src/store/sqlite/event-rowids.ts, at migrate()), the FTS5 index
 * (keyed by rowid) is rebuilt over the moved rows, and the export and the search read them in
 * position order; rowids renumbered later (a VACUUM) are moved back at the next start.
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { applyMigrations } from "../../src/store/migrate.ts";
import { applySearchIndex } from "../../src/store/sqlite/search-index.ts";
import { createSqliteStore } from "../../src/store/sqlite/store.ts";

const dir = mkdtempSync(join(tmpdir(), "intake-rowid-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("migration 0013 gives every stored event rowid = position and rebuilds the search index over them", async () => {
  const path = join(dir, "before.sqlite");
  const migrations = readMigrationFiles({ migrationsFolder: join(import.meta.dir, "../../drizzle/sqlite") });
  const before = migrations.findIndex((m) => m.sql.some((s) => s.includes("DROP INDEX `events_position_idx`")));
  expect(before).toBeGreaterThan(0);
  // A store as it was before 0013, search on: rowids in insertion order, positions not.
  const old = new Database(path, { create: true });
  applyMigrations(drizzle({ client: old }), migrations.slice(0, before));
  applySearchIndex(old, true);
  old.run(
    "INSERT INTO tenants (id, name, permission_mode, created_at) VALUES ('t', 'T', 'flat', 1);" +
      "INSERT INTO services (id, tenant_id, service_name, is_monitored, secret_ciphertext, signing_secret_prefix, created_at, updated_at) " +
      "VALUES ('s', 't', 'svc', 1, 'x', 'whsec_x', 1, 1)",
  );
  const rows = [
    [`${"0".repeat(31)}1`, 7, "alpha-word"],
    [`${"0".repeat(31)}2`, 3, "beta-word"],
    [`${"0".repeat(31)}3`, 12, "alpha-word beta-word"],
  ] as const;
  for (const [id, position, word] of rows) {
    old
      .query(
        "INSERT INTO events (id, service_id, tenant_id, received_at, payload, position) VALUES (?1, 's', 't', 1, ?2, ?3)",
      )
      .run(id, new TextEncoder().encode(JSON.stringify({ word })), position);
  }
  old.run("UPDATE feed_head SET head = 12 WHERE id = 1");
  old.close();

  const store = createSqliteStore({ path });
  try {
    await store.migrate();
    const check = new Database(path, { readonly: true });
    expect(check.query("SELECT rowid AS r, position AS p FROM events ORDER BY rowid").all()).toEqual([
      { r: 3, p: 3 },
      { r: 7, p: 7 },
      { r: 12, p: 12 },
    ]);
    expect(check.query("SELECT count(*) AS n FROM sqlite_master WHERE name = 'events_position_idx'").get()).toEqual({
      n: 0,
    });
    check.close();
    const ids = (found: { id: string }[]) => found.map((e) => e.id);
    const [first, second, third] = rows.map(([id]) => id) as [string, string, string];
    expect(ids(await store.events.search("t", { terms: ["alpha-word"], limit: 10 }))).toEqual([third, first]);
    expect(ids(await store.events.search("t", { terms: ["beta-word"], limit: 10 }))).toEqual([third, second]);
    const page = await store.exports.read(0, 10);
    expect(page.items.map((item) => item.position)).toEqual([3, 7, 12]);
    // A new event goes in at rowid = its position, above the moved ones.
    const newId = `${Date.now().toString(16).padStart(12, "0")}${"0".repeat(20)}`;
    const payload = new TextEncoder().encode('{"word":"alpha-word"}');
    await store.events.insertBatch([
      { id: newId, tenantId: "t", serviceId: "s", receivedAt: Date.now(), idempotencyKey: null, payload },
    ]);
    expect(ids(await store.events.search("t", { terms: ["alpha-word"], limit: 10 }))).toEqual([newId, third, first]);
    expect((await store.exports.read(12, 10)).items.map((item) => item.position)).toEqual([13]);
  } finally {
    await store.close();
  }
  // Renumbered behind the store's back: the next start moves them back.
  const vacuumed = new Database(path);
  vacuumed.run("PRAGMA busy_timeout = 5000");
  vacuumed.run("UPDATE events SET rowid = rowid + 100");
  vacuumed.close();
  const again = createSqliteStore({ path });
  try {
    await again.migrate();
    expect((await again.exports.read(0, 10)).items.map((item) => item.position)).toEqual([3, 7, 12, 13]);
    expect((await again.events.search("t", { terms: ["beta-word"], limit: 10 })).length).toBe(2);
  } finally {
    await again.close();
  }
});
