import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { DomainError } from "../../src/domain/errors.ts";
import { createPostgresStore } from "../../src/store/postgres/store.ts";
import { serviceAvailable, TEST_POSTGRES_URL } from "../support/services.ts";
import { runAuditContract } from "./audit-contract.ts";
import { runIncidentContract } from "./incidents-contract.ts";
import { runSearchContract } from "./search-contract.ts";
import { creationAudit, NOW, runStoreContract, tenantRecord, tokenRecord } from "./store-contract.ts";

const ok = await serviceAvailable("postgres");

/** The test server's URL pointed at another database. */
function urlFor(database: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

describe.skipIf(!ok)("postgres store", () => {
  // One admin connection creates and drops a database per test world: drizzle-kit's
  // migrations name the "public" schema, so a schema per world would not isolate them.
  let admin: SQL | undefined;
  const adminSql = () => {
    admin ??= new SQL(TEST_POSTGRES_URL, { max: 2 });
    return admin;
  };
  afterAll(async () => {
    await admin?.close();
  });

  async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
    const name = `intake_test_${crypto.randomUUID().replaceAll("-", "")}`;
    await adminSql().unsafe(`create database "${name}"`);
    return {
      url: urlFor(name),
      drop: async () => {
        await adminSql().unsafe(`drop database if exists "${name}" with (force)`);
      },
    };
  }

  runStoreContract("postgres", async () => {
    const database = await freshDatabase();
    const store = createPostgresStore({ url: database.url, max: 4 });
    return {
      store,
      another: () => createPostgresStore({ url: database.url, max: 4 }),
      cleanup: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  runAuditContract("postgres", async () => {
    const database = await freshDatabase();
    const store = createPostgresStore({ url: database.url, max: 4 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  // Two stores on one database are two instances: two pools racing on the same rows.
  runIncidentContract("postgres", async () => {
    const database = await freshDatabase();
    const store = createPostgresStore({ url: database.url, max: 4 });
    return {
      store,
      another: () => createPostgresStore({ url: database.url, max: 4 }),
      exec: async (statement) => {
        const sql = new SQL(database.url, { max: 1 });
        try {
          await sql.unsafe(statement);
        } finally {
          await sql.close();
        }
      },
      cleanup: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  runSearchContract("postgres", async () => {
    const database = await freshDatabase();
    const store = createPostgresStore({ url: database.url, max: 4 });
    return {
      store,
      another: () => createPostgresStore({ url: database.url, max: 4 }),
      reopen: (eventSearch) => createPostgresStore({ url: database.url, max: 2, eventSearch }),
      exec: async (statement) => {
        const sql = new SQL(database.url, { max: 1 });
        try {
          await sql.unsafe(statement);
        } finally {
          await sql.close();
        }
      },
      cleanup: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  describe("postgres store specifics", () => {
    test("instances starting together migrate once, without tripping over each other", async () => {
      const database = await freshDatabase();
      const stores = Array.from({ length: 3 }, () => createPostgresStore({ url: database.url, max: 2 }));
      try {
        await Promise.all(stores.map((s) => s.migrate()));
        const applied = await stores[0]?.services.list("t", { limit: 1 });
        expect(applied).toEqual([]);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await database.drop();
      }
    });

    test("a refused setup code (unknown, expired, used) costs no write: it is answered while another session blocks writes to setup_codes", async () => {
      const database = await freshDatabase();
      const store = createPostgresStore({ url: database.url, max: 2, timeoutMs: 2_000 });
      const blocker = new SQL(database.url, { max: 1 });
      try {
        await store.migrate();
        const attempt = (digest: string) => {
          const tenant = tenantRecord();
          const owner = tokenRecord(tenant.id, { role: "owner", scope: "read_write" });
          return store.redeemSetupCode(digest, NOW, tenant, owner, creationAudit(tenant, owner));
        };
        const used = "a".repeat(64);
        const expired = "b".repeat(64);
        await store.setupCodes.insert({ digest: used, createdAt: NOW - 1, expiresAt: NOW + 60_000 });
        await store.setupCodes.insert({ digest: expired, createdAt: NOW - 2, expiresAt: NOW - 1 });
        expect(await attempt(used)).toBe(true);

        // SHARE mode lets readers through and makes every UPDATE of the table wait.
        const release = Promise.withResolvers<void>();
        const holding = Promise.withResolvers<void>();
        const held = blocker.begin(async (tx) => {
          await tx.unsafe("lock table setup_codes in share mode");
          holding.resolve();
          await release.promise;
        });
        await holding.promise;
        try {
          expect(await attempt("c".repeat(64))).toBe(false);
          expect(await attempt(expired)).toBe(false);
          expect(await attempt(used)).toBe(false);
        } finally {
          release.resolve();
          await held;
        }
      } finally {
        await store.close();
        await blocker.close();
        await database.drop();
      }
    });

    test("a database that does not exist is unavailable (DomainError)", async () => {
      const store = createPostgresStore({ url: urlFor(`intake_missing_${Date.now()}`), max: 1 });
      try {
        const error = await store.tenants.get(crypto.randomUUID()).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DomainError);
        expect(error).toMatchObject({ code: "unavailable" });
      } finally {
        await store.close();
      }
    });
  });
});

// Needs no server: it proves the mapping when there is none.
describe("postgres store without a server", () => {
  test("an unreachable PostgreSQL rejects with DomainError unavailable, not a raw driver error", async () => {
    const store = createPostgresStore({ url: "postgres://postgres@127.0.0.1:1/test", max: 1 });
    try {
      for (const call of [
        () => store.tenants.get(crypto.randomUUID()),
        () => store.tokens.findByDigest("0".repeat(64)),
        () =>
          store.events.insertBatch([
            {
              id: "0".repeat(32),
              tenantId: crypto.randomUUID(),
              serviceId: "1".repeat(32),
              receivedAt: 1,
              idempotencyKey: "k",
              payload: new Uint8Array([123, 125]),
            },
          ]),
        () => store.migrate(),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DomainError);
        expect(error).toMatchObject({ code: "unavailable", message: "The store cannot be reached." });
        expect((error as Error).cause).toBeInstanceOf(Error);
      }
    } finally {
      await store.close();
    }
  });
});
