/**
 * What every PostgreSQL repository shares: the pool (Bun's built-in client, drizzle's bun-sql
 * driver over it), the bound on every call, and the pool's replacement after a call overran
 * it. Each repository (tenants.ts, tokens.ts, services.ts, events.ts, audit.ts,
 * onboarding.ts) is a small factory over it; store.ts composes them.
 */
import { SQL as BunSQL } from "bun";
import { type BunSQLDatabase, drizzle } from "drizzle-orm/bun-sql";
import type { AuditRecord } from "../../domain/audit-types.ts";
import { DomainError } from "../../domain/errors.ts";
import { toAuditRow } from "../audit-rows.ts";
import type { ListStatement } from "../list-rows.ts";
import { applyMigrations } from "../migrate.ts";
import { committedMigrations } from "../migrations.ts" with { type: "macro" };
import { connectFailure } from "./connect-failure.ts";
import { mapError } from "./errors.ts";
import { auditEvents } from "./schema.ts";

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Pool size; Bun's default (10) when omitted. */
  max?: number;
  /**
   * Bound on every store call (waiting for a connection, connecting, every statement, a
   * whole transaction): past it the call rejects as `unavailable` and the pool is replaced.
   * INTAKE_DATABASE_TIMEOUT_MS; default 5000. Migrations are not bounded.
   */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 5_000;

/** Inlined at bundle time (src/store/migrations.ts): no drizzle/ folder is read at run time. */
const MIGRATIONS = committedMigrations("postgres");

/** pg_advisory_lock key: instances starting together apply migrations one at a time. */
const MIGRATION_LOCK_KEY = 0x1a7a4e;

export type Transaction = Parameters<Parameters<BunSQLDatabase["transaction"]>[0]>[0];

/** Inside the change's own transaction: a failure here rolls the change back with it. */
export async function writeAudit(tx: Transaction, record: AuditRecord | null): Promise<void> {
  if (record) await tx.insert(auditEvents).values(toAuditRow(record));
}

export interface PostgresPool {
  /** The current pool's client (Bun SQL); read it when a call starts, never keep it. */
  client(): BunSQL;
  /** drizzle over the current pool; read it when a call starts, never keep it. */
  db(): BunSQLDatabase;
  /** Bounds the call, translates connection-level failures, and scrubs values from errors. */
  guard<T>(operation: () => Promise<T>): Promise<T>;
  /** Drizzle prepared statements, built once per pool (Bun's client keeps one server-side per connection). */
  prepared<T>(build: (db: BunSQLDatabase) => T): () => T;
  /**
   * A list page (list-rows.ts) through Bun's client, as positional values: its texts are
   * constant per combination of filters, so each connection prepares each once.
   */
  listRows(statement: ListStatement): Promise<unknown[][]>;
  migrate(): Promise<void>;
  close(): Promise<void>;
}

/** Migrations only: they may legitimately run long, so they are not bounded. */
async function unbounded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw mapError(error);
  }
}

/** Connects lazily: the first query opens the pool. */
export function createPool(options: PostgresStoreOptions): PostgresPool {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const openPool = () =>
    new BunSQL(options.url, {
      ...(options.max === undefined ? {} : { max: options.max }),
      // Whole seconds only; the operation bound below is what callers actually see.
      connectionTimeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
      connection: {
        application_name: "intake",
        // A commit (the 202 of an ingest) must mean durable, whatever the server's default says.
        synchronous_commit: "on",
        // A transaction this client gave up on (it overran timeoutMs behind a partition) must
        // not keep its row locks on the server until TCP notices, hours later: the server ends
        // a session idle inside a transaction past twice the bound.
        idle_in_transaction_session_timeout: String(2 * timeoutMs),
      },
    });
  // Replaced together by `replacePool`; every call reads them when it starts.
  let client = openPool();
  let db = drizzle({ client });
  let closed = false;

  /**
   * A call that overran its bound left a connection in an unknown state: a silently dropped
   * network (no RST) keeps it, and every connection that tries it, waiting for TCP's own
   * give-up, minutes later. Replace the whole pool, once per generation: the old one is closed
   * at once, which rejects what still runs on it (an open transaction is rolled back by the
   * server when it sees the connection go), and the next call connects afresh, so the store
   * recovers as soon as the network does. docs/store.md.
   */
  const replacePool = (stale: BunSQL) => {
    if (closed || client !== stale) return;
    client = openPool();
    db = drizzle({ client });
    stale.close({ timeout: 0 }).catch(() => {});
  };

  return {
    client: () => client,
    db: () => db,

    async guard<T>(operation: () => Promise<T>): Promise<T> {
      const generation = client;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const overran = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          replacePool(generation);
          reject(new DomainError("unavailable", "The store did not answer in time."));
        }, timeoutMs);
      });
      try {
        return await Promise.race([operation(), overran]);
      } catch (error) {
        throw mapError(error);
      } finally {
        clearTimeout(timer);
      }
    },

    prepared<T>(build: (db: BunSQLDatabase) => T): () => T {
      let builtOn: BunSQLDatabase | undefined;
      let built: T | undefined;
      return () => {
        if (builtOn !== db || built === undefined) {
          built = build(db);
          builtOn = db;
        }
        return built;
      };
    },

    listRows: async (statement) => (await client.unsafe(statement.text, statement.params).values()) as unknown[][],

    migrate: () =>
      unbounded(async () => {
        // The advisory lock is per session, so the lock, the migration and the unlock must
        // share one connection: reserve it from the pool.
        // The first connection of a start: a missing database or role is said by name here.
        const reserved = await client.reserve().catch((error: unknown) => {
          throw connectFailure(error, options.url) ?? error;
        });
        try {
          await reserved.unsafe("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
          try {
            await applyMigrations(drizzle({ client: reserved }), MIGRATIONS);
          } finally {
            await reserved.unsafe("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
          }
        } finally {
          await reserved.release();
        }
      }),

    // Bounded like any call: a partitioned server must not hold a drain forever.
    close: async () => {
      closed = true;
      await client.close({ timeout: Math.max(1, Math.ceil(timeoutMs / 1000)) });
    },
  };
}
