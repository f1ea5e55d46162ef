import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../src/domain/errors.ts";
import { createEventReads } from "../../src/store/sqlite/event-reads.ts";
import { createEventSearch } from "../../src/store/sqlite/event-search.ts";
import { DUE } from "../../src/store/sqlite/incidents.ts";
import { createSqliteStore } from "../../src/store/sqlite/store.ts";
import { runAuditContract } from "./audit-contract.ts";
import { runIncidentContract } from "./incidents-contract.ts";
import { runSearchContract } from "./search-contract.ts";
import { creationAudit, NOW, runStoreContract, tenantRecord, tokenRecord } from "./store-contract.ts";

const dir = mkdtempSync(join(tmpdir(), "intake-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

let files = 0;
function tempPath(): string {
  files += 1;
  return join(dir, `store-${files}.sqlite`);
}

/** A freshly migrated store file, opened raw for `fn` (statements explained there, not run), closed after. */
async function onMigratedFile(fn: (db: Database) => void): Promise<void> {
  const path = tempPath();
  const store = createSqliteStore({ path });
  await store.migrate();
  await store.close();
  const db = new Database(path);
  try {
    fn(db);
  } finally {
    db.close();
  }
}

/** `EXPLAIN QUERY PLAN` of `text` with `params`: its steps' details joined by " | ". */
function queryPlan(db: Database, text: string, params: readonly unknown[]): string {
  const rows = db.query(`EXPLAIN QUERY PLAN ${text}`).all(...(params as string[])) as { detail: string }[];
  return rows.map((r) => r.detail).join(" | ");
}

runStoreContract("sqlite :memory:", async () => {
  const store = createSqliteStore({ path: ":memory:" });
  return { store, cleanup: () => store.close() };
});

runStoreContract("sqlite file", async () => {
  const path = tempPath();
  const store = createSqliteStore({ path });
  return {
    store,
    // A second store on the file is what a second process would have: its own connection and writer.
    another: () => {
      const other = createSqliteStore({ path });
      return other;
    },
    cleanup: async () => {
      await store.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    },
  };
});

runAuditContract("sqlite :memory:", async () => {
  const store = createSqliteStore({ path: ":memory:" });
  return { store, cleanup: () => store.close() };
});

// A file database: a second store is a second process, and `exec` a connection of its own.
runIncidentContract("sqlite file", async () => {
  const path = tempPath();
  const store = createSqliteStore({ path });
  return {
    store,
    another: () => createSqliteStore({ path }),
    exec: async (statement) => {
      const db = new Database(path);
      try {
        db.run("PRAGMA busy_timeout = 5000");
        db.run(statement);
      } finally {
        db.close();
      }
    },
    cleanup: async () => {
      await store.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    },
  };
});

// A file database: a second store (a second instance) and a reopened one share it.
runSearchContract("sqlite file", async () => {
  const path = tempPath();
  const store = createSqliteStore({ path });
  return {
    store,
    another: () => createSqliteStore({ path }),
    reopen: (eventSearch) => createSqliteStore({ path, eventSearch }),
    exec: async (statement) => {
      const db = new Database(path);
      try {
        db.run("PRAGMA busy_timeout = 5000");
        db.run(statement);
      } finally {
        db.close();
      }
    },
    cleanup: async () => {
      await store.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    },
  };
});

describe("sqlite store specifics", () => {
  const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

  /** With the usual umask (0022), under which SQLite alone would create these 0644. */
  async function withUmask(run: () => Promise<void>): Promise<void> {
    const previous = process.umask(0o022);
    try {
      await run();
    } finally {
      process.umask(previous);
    }
  }

  test("the database file and its -wal and -shm are created 0600", async () => {
    await withUmask(async () => {
      const path = tempPath();
      const store = createSqliteStore({ path });
      try {
        // migrate() wrote through the WAL: -wal and -shm exist while the store is open.
        await store.migrate();
        expect([path, `${path}-wal`, `${path}-shm`].map(mode)).toEqual(["600", "600", "600"]);
      } finally {
        await store.close();
      }
    });
  });

  test("a refused setup code (unknown, expired, used) costs no write: it is answered while another connection holds the write lock", async () => {
    const path = tempPath();
    const store = createSqliteStore({ path });
    await store.migrate();
    const attempt = (digest: string, now = NOW) => {
      const tenant = tenantRecord();
      const owner = tokenRecord(tenant.id, { role: "owner", scope: "read_write" });
      return store.redeemSetupCode(digest, now, tenant, owner, creationAudit(tenant, owner));
    };
    const used = "a".repeat(64);
    const expired = "b".repeat(64);
    await store.setupCodes.insert({ digest: used, createdAt: NOW - 1, expiresAt: NOW + 60_000 });
    await store.setupCodes.insert({ digest: expired, createdAt: NOW - 2, expiresAt: NOW - 1 });
    expect(await attempt(used)).toBe(true);

    // Another process (or the event writer) holds the write lock: anything that needs it waits.
    const holder = new Database(path);
    holder.exec("BEGIN IMMEDIATE");
    try {
      const contender = new Database(path);
      contender.exec("PRAGMA busy_timeout = 0");
      expect(() => contender.exec("BEGIN IMMEDIATE")).toThrow(/locked|busy/i);
      contender.close();
      expect(await attempt("c".repeat(64))).toBe(false);
      expect(await attempt(expired)).toBe(false);
      expect(await attempt(used)).toBe(false);
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
      await store.close();
    }
  });

  test("a file database is in WAL mode and what one store commits a new store on the file reads", async () => {
    const path = tempPath();
    const writer = createSqliteStore({ path });
    await writer.migrate();
    const tenant = { id: crypto.randomUUID(), name: "Durable", permissionMode: "flat" as const, createdAt: 1 };
    const token = {
      id: "0190f4c0a1b27c3d8e9f0a1b2c3d4e5f",
      tenantId: tenant.id,
      name: "first",
      scope: "read_write" as const,
      role: "owner" as const,
      prefix: "service_live_abcdefgh",
      digest: "d".repeat(64),
      createdAt: 1,
      createdBy: null,
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
    };
    await writer.createTenant(tenant, token, [
      {
        id: "0190f4c0a1b27c3d8e9f0a1b2c3d4e60",
        tenantId: tenant.id,
        occurredAt: 1,
        action: "tenant.create",
        actor: { type: "operator" },
        target: { type: "tenant", id: tenant.id },
        requestId: null,
        changes: null,
      },
    ]);
    await writer.close();

    const peek = new Database(path, { readonly: true });
    expect(peek.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    peek.close();

    const reader = createSqliteStore({ path });
    await reader.migrate();
    expect(await reader.tenants.get(tenant.id)).toEqual(tenant);
    expect(await reader.tokens.findByDigest(token.digest)).toEqual(token);
    await reader.close();
  });

  test("§18 pages read an index, never every row: q through the FTS5 index, filters through their (…, position) index bounded by primary-key seeks", async () => {
    await onMigratedFile((db) => {
      // The statements the store prepares, each explained instead of run.
      const plans: string[] = [];
      const explaining = {
        prepare: (text: string) => ({
          all: (...params: unknown[]) => {
            plans.push(queryPlan(db, text, params));
            return [];
          },
        }),
      } as unknown as Database;
      const search = createEventSearch(explaining);
      const before = 3;
      // The time bounds' two primary-key seeks, each run once (search-query.ts).
      const BOUNDS =
        " | SCALAR SUBQUERY 2 | SEARCH events USING INDEX sqlite_autoindex_events_1 (id>?)" +
        " | SCALAR SUBQUERY 1 | SEARCH events USING INDEX sqlite_autoindex_events_1 (id<?)";
      search("t", { limit: 21 });
      search("t", { serviceId: "s", receivedAfter: 1, receivedBefore: 5, limit: 21, before });
      search("t", { serviceId: "s", type: "invoice.paid", receivedAfter: 1, receivedBefore: 5, limit: 21 });
      search("t", { incidentId: "i", serviceId: "s", limit: 21 });
      search("t", { terms: ["cus_123", "paid"], serviceId: "s", type: "x", limit: 21 });
      search("t", { terms: ["cus_123"], receivedAfter: 1, receivedBefore: 5, limit: 21, before });
      expect(plans).toEqual([
        "SEARCH e USING INDEX events_tenant_position_idx (tenant_id=?)",
        `SEARCH e USING INDEX events_service_position_idx (service_id=? AND position>? AND position<?)${BOUNDS}`,
        `SEARCH e USING INDEX events_service_type_position_idx (service_id=? AND type=? AND position>? AND position<?)${BOUNDS}`,
        "SEARCH e USING INDEX events_incident_id_idx (incident_id=?) | USE TEMP B-TREE FOR ORDER BY",
        // rowid = position: FTS5 yields its matches newest first, no sort of every match.
        "SCAN events_fts VIRTUAL TABLE INDEX 192:M1 | SEARCH e USING INTEGER PRIMARY KEY (rowid=?)",
        // …and takes the time bounds' positions as its own rowid range (M1><).
        "SCAN events_fts VIRTUAL TABLE INDEX 192:M1>< | SCALAR SUBQUERY 1 | SEARCH events USING INDEX sqlite_autoindex_events_1 (id<?) | SCALAR SUBQUERY 2 | SEARCH events USING INDEX sqlite_autoindex_events_1 (id>?) | REUSE SUBQUERY 1 | REUSE SUBQUERY 2 | SEARCH e USING INTEGER PRIMARY KEY (rowid=?)",
      ]);
    });
  });

  test("a service's event listing walks (service_id, position) newest first: no other index, no sort", async () => {
    await onMigratedFile((db) => {
      const texts: string[] = [];
      createEventReads({ prepare: (text: string) => texts.push(text) } as unknown as Database);
      const listing = texts.filter((text) => text.includes("ORDER BY position DESC"));
      expect(listing).toHaveLength(2);
      for (const text of listing) {
        const params = text.includes("?3") ? ["s", 21, 5] : ["s", 21];
        expect(queryPlan(db, text, params)).toMatch(
          /^SEARCH events USING INDEX events_service_position_idx \(service_id=\?( AND position<\?)?\)$/,
        );
      }
    });
  });

  test("§17 auto-resolve reads each auto-resolving service's open incidents through incidents_open_key_unique, not every open incident", async () => {
    await onMigratedFile((db) => {
      expect(queryPlan(db, DUE, [NOW, 100])).toBe(
        "SCAN s | SEARCH i USING INDEX incidents_open_key_unique (service_id=?) | USE TEMP B-TREE FOR ORDER BY",
      );
    });
  });

  test("a path that cannot be opened is unavailable (DomainError), not a raw SQLite error", () => {
    const error = thrownBy(() => createSqliteStore({ path: join(dir, "no-such-dir", "intake.sqlite") }));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: "unavailable", message: "The store cannot be reached." });
    expect((error as Error).cause).toMatchObject({ code: "SQLITE_CANTOPEN" });
  });

  test("a file that is not a database is unavailable (DomainError), not a raw SQLite error", () => {
    const path = tempPath();
    writeFileSync(path, "this is not a database, just text long enough to have a header page".repeat(10));
    const error = thrownBy(() => createSqliteStore({ path }));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: "unavailable" });
  });
});
