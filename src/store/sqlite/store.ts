/**
 * The Store port on SQLite (bun:sqlite through drizzle). One connection per store for
 * everything but event inserts on a file database, which go through a worker's own connection
 * (event-writer.ts) so that their fsync does not stop the event loop. bun:sqlite is
 * synchronous, so every call runs to completion before the next starts, and write
 * transactions use BEGIN IMMEDIATE so that another process (or the worker) sharing the file
 * waits (busy_timeout) instead of failing on a lock upgrade.
 */
import type { Database } from "bun:sqlite";
import { and, asc, desc, eq, gt, isNull, lt, max, ne, or, type SQL, sql } from "drizzle-orm";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { ownerToKeep } from "../../domain/access.ts";
import { idFloor } from "../../domain/ids.ts";
import type {
  InsertEventResult,
  NewEvent,
  PageQuery,
  RevokeOutcome,
  SecretRotation,
  ServiceChanges,
  Store,
} from "../../domain/ports/store.ts";
import type { EventRecord, ServiceRecord, TenantRecord, TokenRecord } from "../../domain/types.ts";
import { applyMigrations } from "../migrate.ts";
import { committedMigrations } from "../migrations.ts" with { type: "macro" };
import { withoutValues } from "../query-errors.ts";
import { mapError, openDatabase } from "./connection.ts";
import { createEventInsert, type InsertEvents } from "./event-insert.ts";
import { createEventWriter, type EventWriter } from "./event-writer.ts";
import { apiTokens, events, services, setupCodes, tenants } from "./schema.ts";

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

/**
 * `<name>First` (no cursor) and `<name>After` (`id < :before`): one table's page, newest first,
 * `LIMIT :limit`, prepared.
 */
function listPages<N extends string, T extends typeof apiTokens | typeof services | typeof events>(
  db: BunSQLiteDatabase,
  name: N,
  table: T,
  where: SQL | undefined,
) {
  const build = (before: SQL | undefined) =>
    db
      .select()
      .from(table as typeof apiTokens)
      .where(and(where, before))
      .orderBy(desc(table.id))
      .limit(sql.placeholder("limit"))
      .prepare() as unknown as PageStatement<T["$inferSelect"]>;
  return {
    [`${name}First`]: build(undefined),
    [`${name}After`]: build(lt(table.id, sql.placeholder("before"))),
  } as Record<`${N}First` | `${N}After`, PageStatement<T["$inferSelect"]>>;
}

/** What `page` needs of a prepared list statement. */
interface PageStatement<Row> {
  all(params: Record<string, unknown>): Row[];
}

/** Runs a first/after pair with the page's parameters. */
function page<Row, P extends object>(
  first: { all(params: P & { limit: number }): Row[] },
  after: { all(params: P & { limit: number; before: string }): Row[] },
  params: P,
  query: PageQuery,
): Row[] {
  return query.before === undefined
    ? first.all({ ...params, limit: query.limit })
    : after.all({ ...params, limit: query.limit, before: query.before });
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
    // The list pages, prepared once like the lookups: building a query with drizzle on every
    // call cost more than reading and mapping its rows (docs/store.md). Each comes twice, as
    // the first page and as the page after a cursor.
    ...listPages(db, "tokens", apiTokens, and(eq(apiTokens.tenantId, p("tenantId")), isNull(apiTokens.revokedAt))),
    ...listPages(db, "tokensWithRevoked", apiTokens, eq(apiTokens.tenantId, p("tenantId"))),
    ...listPages(db, "services", services, eq(services.tenantId, p("tenantId"))),
    ...listPages(db, "events", events, eq(events.serviceId, p("serviceId"))),
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
/** ServiceChanges → the columns they set; a rate limit is written whole or cleared whole. */
function serviceColumns(changes: ServiceChanges, now: number) {
  return {
    ...(changes.isMonitored !== undefined && { isMonitored: changes.isMonitored }),
    ...(changes.rateLimit !== undefined && {
      rateLimitLimit: changes.rateLimit?.limit ?? null,
      rateLimitWindowSeconds: changes.rateLimit?.windowSeconds ?? null,
    }),
    updatedAt: now,
  };
}

export function createSqliteStore(options: SqliteStoreOptions): Store {
  const client = openStoreDatabase(options.path);
  const db = drizzle({ client });
  // A file database commits events in a worker (see event-writer.ts), created on the first
  // batch, i.e. after migrate(); a :memory: (or "", temporary) database is private to this
  // connection and cannot be opened by another.
  let writer: EventWriter | undefined;
  const inWorker = options.path !== ":memory:" && options.path !== "";

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
  let insertEvents: InsertEvents | undefined;

  return {
    dialect: "sqlite",

    tenants: {
      get: (id) => run((): TenantRecord | null => stmt().tenantGet.get({ id }) ?? null),
      any: () => run(() => db.select({ id: tenants.id }).from(tenants).limit(1).all().length > 0),
      rename: (id, name) =>
        run(
          (): TenantRecord | null =>
            db.update(tenants).set({ name }).where(eq(tenants.id, id)).returning().get() ?? null,
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
        run((): TokenRecord[] => {
          const st = stmt();
          return query.includeRevoked
            ? page(st.tokensWithRevokedFirst, st.tokensWithRevokedAfter, { tenantId }, query)
            : page(st.tokensFirst, st.tokensAfter, { tenantId }, query);
        }),

      insert: (record) =>
        run(() => {
          // Only the prefix is a conflict the caller can act on (mint again); a clash on id
          // or digest is a bug and still throws.
          const row = db
            .insert(apiTokens)
            .values(record)
            .onConflictDoNothing({ target: apiTokens.prefix })
            .returning({ id: apiTokens.id })
            .get();
          return row ? "ok" : "prefix_taken";
        }),

      revoke: (tenantId, id, now) =>
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
      insert: (record) =>
        run(() => {
          const row = db
            .insert(services)
            .values(record)
            .onConflictDoNothing({ target: [services.tenantId, services.serviceName] })
            .returning({ id: services.id })
            .get();
          return row ? "ok" : "name_taken";
        }),

      get: (tenantId, id) => run((): ServiceRecord | null => stmt().serviceGet.get({ tenantId, id }) ?? null),

      getById: (id) => run((): ServiceRecord | null => stmt().serviceById.get({ id }) ?? null),

      list: (tenantId, query) =>
        run((): ServiceRecord[] => page(stmt().servicesFirst, stmt().servicesAfter, { tenantId }, query)),

      update: (tenantId, id, changes, now) =>
        run(
          (): ServiceRecord | null =>
            db
              .update(services)
              .set(serviceColumns(changes, now))
              .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
              .returning()
              .get() ?? null,
        ),

      rotateSecret: (tenantId, id, rotation: SecretRotation) =>
        run(
          (): ServiceRecord | null =>
            db
              .update(services)
              .set({
                // The right-hand side of SET reads the row as it was before the UPDATE.
                previousSecretCiphertext: sql`${services.secretCiphertext}`,
                secretCiphertext: rotation.ciphertext,
                signingSecretPrefix: rotation.prefix,
                secretRotatedAt: rotation.rotatedAt,
                previousSecretExpiresAt: rotation.previousExpiresAt,
                updatedAt: rotation.rotatedAt,
              })
              .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
              .returning()
              .get() ?? null,
        ),

      // Events go with it through ON DELETE CASCADE (foreign_keys is ON for this connection).
      delete: (tenantId, id) =>
        run(
          () =>
            db
              .delete(services)
              .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
              .returning({ id: services.id })
              .get() !== undefined,
        ),
    },

    events: {
      insertBatch: (batch: ReadonlyArray<NewEvent>) => {
        if (inWorker) {
          writer ??= createEventWriter({ path: options.path, mapError });
          return writer.insertBatch(batch);
        }
        // The same function the worker runs (event-insert.ts), on this connection.
        return run((): InsertEventResult[] => {
          refuseIfClosed();
          insertEvents ??= createEventInsert(client);
          return insertEvents(batch);
        });
      },

      list: (serviceId, query) =>
        run((): EventRecord[] => page(stmt().eventsFirst, stmt().eventsAfter, { serviceId }, query)),

      feed: (tenantId, query) =>
        run((): EventRecord[] =>
          db
            .select()
            .from(events)
            .where(
              and(
                eq(events.tenantId, tenantId),
                query.serviceId === undefined ? undefined : eq(events.serviceId, query.serviceId),
                gt(events.position, query.after),
              ),
            )
            .orderBy(asc(events.position))
            .limit(query.limit)
            .all(),
        ),

      feedHead: (tenantId) =>
        run(
          (): number =>
            db
              .select({ head: max(events.position) })
              .from(events)
              .where(eq(events.tenantId, tenantId))
              .get()?.head ?? 0,
        ),

      get: (tenantId, id) =>
        run(
          (): EventRecord | null =>
            db
              .select()
              .from(events)
              .where(and(eq(events.id, id), eq(events.tenantId, tenantId)))
              .get() ?? null,
        ),

      // A short IMMEDIATE transaction per batch: ingest waits for at most one batch's delete.
      deleteOlderThan: (cutoff, batch) =>
        run(
          (): number =>
            client
              .query(
                "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id < ?1 AND received_at < ?2 ORDER BY id LIMIT ?3)",
              )
              .run(idFloor(cutoff), cutoff, batch).changes,
        ),
    },

    createTenant: (tenant, firstToken) =>
      run(() =>
        db.transaction(
          (tx) => {
            tx.insert(tenants).values(tenant).run();
            tx.insert(apiTokens).values(firstToken).run();
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

    redeemSetupCode: (digest, now, tenant, firstToken) =>
      run(() =>
        db.transaction(
          (tx) => {
            // The claim comes first and is conditional: a used or expired code writes nothing.
            const claimed = tx
              .update(setupCodes)
              .set({ usedAt: now, tenantId: tenant.id })
              .where(and(eq(setupCodes.digest, digest), isNull(setupCodes.usedAt), gt(setupCodes.expiresAt, now)))
              .returning({ digest: setupCodes.digest })
              .all();
            if (claimed.length === 0) return false;
            tx.insert(tenants).values(tenant).run();
            tx.insert(apiTokens).values(firstToken).run();
            return true;
          },
          { behavior: "immediate" },
        ),
      ),

    migrate: () => run(() => void applyMigrations(db, MIGRATIONS)),

    close: async () => {
      // The worker first: its in-flight batches settle and its connection closes before ours.
      await writer?.close();
      closed = true;
      return run(() => client.close());
    },
  };
}
