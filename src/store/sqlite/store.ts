/**
 * The Store port on SQLite (bun:sqlite through drizzle). One connection per store for
 * everything but event writes (inserts, retention deletes) on a file database, which go
 * through a worker's own connection (event-writer.ts) so that their fsync does not stop the
 * event loop. bun:sqlite is synchronous, so every call runs to completion before the next
 * starts, and write transactions use BEGIN IMMEDIATE so that another process (or the worker)
 * sharing the file waits (busy_timeout) instead of failing on a lock upgrade.
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import { and, eq, gt, inArray, isNull, lt, ne, or, type SQL, sql } from "drizzle-orm";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { ownerToKeep } from "../../domain/access.ts";
import type { AuditRecord } from "../../domain/audit-types.ts";
import type { InsertEventResult, NewEvent, RevokeOutcome, SecretRotation, Store } from "../../domain/ports/store.ts";
import type { ServiceRecord, TenantRecord, TokenRecord } from "../../domain/types.ts";
import { toAuditRow } from "../audit-rows.ts";
import {
  auditListStatement,
  auditRecord,
  type ListStatement,
  serviceListStatement,
  serviceSummary,
  sqlitePlaceholder,
  tokenListStatement,
  tokenSummary,
} from "../list-rows.ts";
import { applyMigrations } from "../migrate.ts";
import { committedMigrations } from "../migrations.ts" with { type: "macro" };
import { withoutValues } from "../query-errors.ts";
import { rotationColumns, serviceColumns } from "../service-columns.ts";
import { mapError, openDatabase } from "./connection.ts";
import { createEventExpiry, type ExpireEvents } from "./event-expire.ts";
import { createEventInsert, type InsertEvents } from "./event-insert.ts";
import { createEventReads, type EventReads } from "./event-reads.ts";
import { createEventWriter, type EventWriter } from "./event-writer.ts";
import { apiTokens, auditEvents, services, setupCodes, tenants } from "./schema.ts";

export interface SqliteStoreOptions {
  /** A file path, or ":memory:" for a private in-process database. */
  path: string;
}

/** Inlined at bundle time (src/store/migrations.ts): no drizzle/ folder is read at run time. */
const MIGRATIONS = committedMigrations("sqlite");

/** Runs a synchronous store operation as the port's promise, translating connection-level failures. */
function run<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(withoutValues(mapError(error)));
  }
}

function openStoreDatabase(path: string): Database {
  try {
    return openDatabase(path);
  } catch (error) {
    throw mapError(error);
  }
}

function activeOwnerCondition(now: number): SQL | undefined {
  return and(
    eq(apiTokens.role, "owner"),
    eq(apiTokens.scope, "read_write"),
    isNull(apiTokens.revokedAt),
    or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now)),
  );
}

type Transaction = Parameters<Parameters<BunSQLiteDatabase["transaction"]>[0]>[0];

/** Inside the change's own transaction: a throw here rolls the change back with it. */
function writeAudit(tx: Transaction, record: AuditRecord | null): void {
  if (record) tx.insert(auditEvents).values(toAuditRow(record)).run();
}

function buildStatements(db: BunSQLiteDatabase) {
  const p = sql.placeholder;
  return {
    tenantGet: db
      .select()
      .from(tenants)
      .where(eq(tenants.id, p("id")))
      .prepare(),
    tokenByDigest: db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.digest, p("digest")))
      .prepare(),
    tokenGet: db
      .select()
      .from(apiTokens)
      .where(and(eq(apiTokens.tenantId, p("tenantId")), eq(apiTokens.id, p("id"))))
      .prepare(),
    serviceGet: db
      .select()
      .from(services)
      .where(and(eq(services.tenantId, p("tenantId")), eq(services.id, p("id"))))
      .prepare(),
    serviceById: db
      .select()
      .from(services)
      .where(eq(services.id, p("id")))
      .prepare(),
    setupCodeUsable: db
      .select({ digest: setupCodes.digest })
      .from(setupCodes)
      .where(and(eq(setupCodes.digest, p("digest")), isNull(setupCodes.usedAt), gt(setupCodes.expiresAt, p("now"))))
      .prepare(),
    // Never moves last_used_at backwards: instances flush their buffers in any order.
    touchLastUsed: db
      .update(apiTokens)
      .set({ lastUsedAt: sql`${p("at")}` })
      .where(and(eq(apiTokens.id, p("id")), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, p("at")))))
      .prepare(),
  };
}

/**
 * Opens (creating if needed) the database and applies the durability pragmas. Throws
 * `DomainError("unavailable")` when the file cannot be opened or is not a database.
 * Call `migrate()` before anything else.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const client = openStoreDatabase(options.path);
  const db = drizzle({ client });
  // A file database writes events (inserts and the retention sweep's deletes) in a worker (see
  // event-writer.ts), created on the first such write, i.e. after migrate(); a :memory: (or "",
  // temporary) database is private to this connection and cannot be opened by another.
  let writer: EventWriter | undefined;
  const inWorker = options.path !== ":memory:" && options.path !== "";
  const eventWriter = () => {
    writer ??= createEventWriter({ path: options.path, mapError });
    return writer;
  };

  // bun:sqlite compiles a statement when it is prepared, which needs the tables: built once,
  // on first use after migrate(), then reused for every call.
  let statements: ReturnType<typeof buildStatements> | undefined;
  // bun:sqlite's close() leaves a connection with prepared statements open until they are
  // finalized, and they keep answering: after close() the store must refuse like a fresh query.
  let closed = false;
  const refuseIfClosed = () => {
    if (closed) throw new RangeError("Cannot use a closed database");
  };
  const stmt = () => {
    refuseIfClosed();
    statements ??= buildStatements(db);
    return statements;
  };
  // The event reads skip drizzle altogether (event-reads.ts); prepared on first use likewise.
  let eventStatements: EventReads | undefined;
  const eventReads = () => {
    refuseIfClosed();
    eventStatements ??= createEventReads(client);
    return eventStatements;
  };
  let insertEvents: InsertEvents | undefined;
  let expireEvents: ExpireEvents | undefined;
  // The list pages of services, tokens and audit events (list-rows.ts): raw statements, one per
  // text (a handful: which filters a page has), prepared on first use and kept.
  const listStatements = new Map<string, Statement>();
  const listRows = (statement: ListStatement): unknown[][] => {
    refuseIfClosed();
    let prepared = listStatements.get(statement.text);
    if (!prepared) {
      prepared = client.prepare(statement.text);
      listStatements.set(statement.text, prepared);
    }
    return prepared.values(...(statement.params as SQLQueryBindings[])) as unknown[][];
  };

  return {
    dialect: "sqlite",

    tenants: {
      get: (id) => run((): TenantRecord | null => stmt().tenantGet.get({ id }) ?? null),
      any: () => run(() => db.select({ id: tenants.id }).from(tenants).limit(1).all().length > 0),
      rename: (id, name, audit) =>
        run(() =>
          db.transaction(
            (tx): TenantRecord | null => {
              const before = tx.select().from(tenants).where(eq(tenants.id, id)).get();
              if (!before) return null;
              const after = tx.update(tenants).set({ name }).where(eq(tenants.id, id)).returning().get();
              if (!after) throw new Error("rename: the tenant vanished inside its own transaction");
              writeAudit(tx, audit(before, after));
              return after;
            },
            { behavior: "immediate" },
          ),
        ),
      countNamed: (name) =>
        run(
          (): number =>
            db.select({ n: sql<number>`count(*)` }).from(tenants).where(eq(tenants.name, name)).get()?.n ?? 0,
        ),
    },

    tokens: {
      findByDigest: (digest) => run((): TokenRecord | null => stmt().tokenByDigest.get({ digest }) ?? null),

      get: (tenantId, id) => run((): TokenRecord | null => stmt().tokenGet.get({ tenantId, id }) ?? null),

      list: (tenantId, query) =>
        run(() => listRows(tokenListStatement(sqlitePlaceholder, tenantId, query)).map(tokenSummary)),

      insert: (record, audit) =>
        run(() =>
          db.transaction(
            (tx) => {
              // Only the prefix is a conflict the caller can act on (mint again); a clash on id
              // or digest is a bug and still throws.
              const row = tx
                .insert(apiTokens)
                .values(record)
                .onConflictDoNothing({ target: apiTokens.prefix })
                .returning({ id: apiTokens.id })
                .get();
              if (!row) return "prefix_taken";
              writeAudit(tx, audit);
              return "ok";
            },
            { behavior: "immediate" },
          ),
        ),

      revoke: (tenantId, id, now, audit) =>
        run(() =>
          db.transaction(
            (tx): RevokeOutcome => {
              const target = tx
                .select()
                .from(apiTokens)
                .where(and(eq(apiTokens.tenantId, tenantId), eq(apiTokens.id, id)))
                .get();
              if (!target) return { kind: "not_found" };
              if (target.revokedAt !== null) return { kind: "already_revoked", record: target };
              const keep = ownerToKeep(target, now);
              if (keep) {
                const other = tx
                  .select({ id: apiTokens.id })
                  .from(apiTokens)
                  .where(
                    and(
                      eq(apiTokens.tenantId, tenantId),
                      ne(apiTokens.id, id),
                      activeOwnerCondition(now),
                      keep.nonExpiring ? isNull(apiTokens.expiresAt) : undefined,
                    ),
                  )
                  .limit(1)
                  .get();
                if (!other) return { kind: "last_owner" };
              }
              const record = tx
                .update(apiTokens)
                .set({ revokedAt: now })
                .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
                .returning()
                .get();
              if (!record) throw new Error("revoke: the token changed inside its own transaction");
              writeAudit(tx, audit);
              return { kind: "revoked", record };
            },
            // IMMEDIATE takes the write lock before the check, so check-then-update is atomic
            // against every other connection to the file.
            { behavior: "immediate" },
          ),
        ),

      touchLastUsed: (updates) =>
        run(() => {
          if (updates.length === 0) return;
          const statement = stmt().touchLastUsed;
          // One transaction: one fsync for the whole flush instead of one per token.
          db.transaction(
            () => {
              for (const update of updates) statement.run({ id: update.id, at: update.at });
            },
            { behavior: "immediate" },
          );
        }),
    },

    services: {
      insert: (record, audit) =>
        run(() =>
          db.transaction(
            (tx) => {
              const row = tx
                .insert(services)
                .values(record)
                .onConflictDoNothing({ target: [services.tenantId, services.serviceName] })
                .returning({ id: services.id })
                .get();
              if (!row) return "name_taken";
              writeAudit(tx, audit);
              return "ok";
            },
            { behavior: "immediate" },
          ),
        ),

      get: (tenantId, id) => run((): ServiceRecord | null => stmt().serviceGet.get({ tenantId, id }) ?? null),

      getById: (id) => run((): ServiceRecord | null => stmt().serviceById.get({ id }) ?? null),

      list: (tenantId, query) =>
        run(() => listRows(serviceListStatement(sqlitePlaceholder, tenantId, query)).map(serviceSummary)),

      update: (tenantId, id, changes, now, audit) =>
        run(() =>
          db.transaction(
            (tx): ServiceRecord | null => {
              const where = and(eq(services.tenantId, tenantId), eq(services.id, id));
              const before = tx.select().from(services).where(where).get();
              if (!before) return null;
              const after = tx.update(services).set(serviceColumns(changes, now)).where(where).returning().get();
              if (!after) throw new Error("update: the service vanished inside its own transaction");
              writeAudit(tx, audit(before, after));
              return after;
            },
            { behavior: "immediate" },
          ),
        ),

      rotateSecret: (tenantId, id, rotation: SecretRotation, audit) =>
        run(() =>
          db.transaction(
            (tx): ServiceRecord | null => {
              const row = tx
                .update(services)
                .set(rotationColumns(rotation, sql`${services.secretCiphertext}`))
                .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
                .returning()
                .get();
              if (!row) return null;
              writeAudit(tx, audit);
              return row;
            },
            { behavior: "immediate" },
          ),
        ),

      // Events go with it through ON DELETE CASCADE (foreign_keys is ON for this connection).
      delete: (tenantId, id, audit) =>
        run(() =>
          db.transaction(
            (tx) => {
              const row = tx
                .delete(services)
                .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
                .returning({ id: services.id })
                .get();
              if (!row) return false;
              writeAudit(tx, audit);
              return true;
            },
            { behavior: "immediate" },
          ),
        ),
    },

    events: {
      insertBatch: (batch: ReadonlyArray<NewEvent>) => {
        if (inWorker) {
          return eventWriter().insertBatch(batch);
        }
        // The same function the worker runs (event-insert.ts), on this connection.
        return run((): InsertEventResult[] => {
          refuseIfClosed();
          insertEvents ??= createEventInsert(client);
          return insertEvents(batch);
        });
      },

      list: (serviceId, query) => run(() => eventReads().list(serviceId, query)),
      feed: (tenantId, query) => run(() => eventReads().feed(tenantId, query)),
      feedHead: (tenantId) => run(() => eventReads().feedHead(tenantId)),
      get: (tenantId, id) => run(() => eventReads().get(tenantId, id)),

      // A short IMMEDIATE transaction per batch: ingest waits for at most one batch's delete.
      // On a file database it runs in the writer worker, between the group commits.
      deleteOlderThan: (cutoff, batch) => {
        if (inWorker) {
          return eventWriter().deleteOlderThan(cutoff, batch);
        }
        // The same function the worker runs (event-expire.ts), on this connection.
        return run((): number => {
          refuseIfClosed();
          expireEvents ??= createEventExpiry(client);
          return expireEvents(cutoff, batch);
        });
      },
    },

    audit: {
      list: (tenantId, query) =>
        run(() =>
          listRows(auditListStatement(sqlitePlaceholder, tenantId, query)).map((row) => auditRecord(row, tenantId)),
        ),

      // Oldest first, a bounded batch per statement: each call holds the write lock briefly.
      deleteOlderThan: (cutoff, batchSize) =>
        run(() => {
          const oldest = db
            .select({ id: auditEvents.id })
            .from(auditEvents)
            .where(lt(auditEvents.occurredAt, cutoff))
            .orderBy(auditEvents.occurredAt)
            .limit(batchSize);
          return db.delete(auditEvents).where(inArray(auditEvents.id, oldest)).returning({ id: auditEvents.id }).all()
            .length;
        }),
    },

    createTenant: (tenant, firstToken, audit) =>
      run(() =>
        db.transaction(
          (tx) => {
            tx.insert(tenants).values(tenant).run();
            tx.insert(apiTokens).values(firstToken).run();
            for (const record of audit) writeAudit(tx, record);
          },
          { behavior: "immediate" },
        ),
      ),

    setupCodes: {
      insert: (record) =>
        run(() => {
          db.insert(setupCodes).values(record).run();
        }),
    },

    redeemSetupCode: (digest, now, tenant, firstToken, audit) =>
      run(() => {
        // The route is open to anyone: a code that cannot be claimed costs one read on this
        // connection, not a write transaction (whose lock would wait on the event writer).
        if (!stmt().setupCodeUsable.get({ digest, now })) return false;
        return db.transaction(
          (tx) => {
            // The claim is conditional: of two redemptions that both read the code as usable,
            // the second finds it used here and writes nothing.
            const claimed = tx
              .update(setupCodes)
              .set({ usedAt: now, tenantId: tenant.id })
              .where(and(eq(setupCodes.digest, digest), isNull(setupCodes.usedAt), gt(setupCodes.expiresAt, now)))
              .returning({ digest: setupCodes.digest })
              .all();
            if (claimed.length === 0) return false;
            tx.insert(tenants).values(tenant).run();
            tx.insert(apiTokens).values(firstToken).run();
            for (const record of audit) writeAudit(tx, record);
            return true;
          },
          { behavior: "immediate" },
        );
      }),

    migrate: () => run(() => void applyMigrations(db, MIGRATIONS)),

    close: async () => {
      // The worker first: its in-flight batches settle and its connection closes before ours.
      await writer?.close();
      closed = true;
      return run(() => client.close());
    },
  };
}
