/**
 * What every SQLite repository shares: the store's one connection (bun:sqlite, and drizzle
 * over it), how a synchronous operation becomes the port's promise, statements prepared once,
 * and the refusal after close. Each repository (tenants.ts, tokens.ts, services.ts, events.ts,
 * audit.ts, onboarding.ts) is a small factory over it; store.ts composes them.
 *
 * bun:sqlite is synchronous, so every call runs to completion before the next starts, and
 * write transactions use BEGIN IMMEDIATE so that another process (or the event writer worker)
 * sharing the file waits (busy_timeout) instead of failing on a lock upgrade.
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { AuditRecord } from "../../domain/audit-types.ts";
import { toAuditRow } from "../audit-rows.ts";
import type { ListStatement } from "../list-rows.ts";
import { withoutValues } from "../query-errors.ts";
import { mapError } from "./connection.ts";
import { auditEvents } from "./schema.ts";

export type Transaction = Parameters<Parameters<BunSQLiteDatabase["transaction"]>[0]>[0];

/** Every write transaction: takes the write lock before it reads, so check-then-write is atomic. */
export const IMMEDIATE = { behavior: "immediate" } as const;

/** Inside the change's own transaction: a throw here rolls the change back with it. */
export function writeAudit(tx: Transaction, record: AuditRecord | null): void {
  if (record) tx.insert(auditEvents).values(toAuditRow(record)).run();
}

export interface SqliteContext {
  readonly client: Database;
  readonly db: BunSQLiteDatabase;
  /** Runs a synchronous operation as the port's promise, translating connection-level failures. */
  run<T>(operation: () => T): Promise<T>;
  /** Throws like a fresh query on a closed database. */
  refuseIfClosed(): void;
  /**
   * Statements built on first use (bun:sqlite compiles a statement when it is prepared, which
   * needs the tables: after migrate()), then reused for every call.
   */
  prepared<T>(build: (db: BunSQLiteDatabase) => T): () => T;
  /** A list page (list-rows.ts): raw statements, one per text, prepared on first use and kept. */
  listRows(statement: ListStatement): unknown[][];
  /** From now on every call refuses. */
  markClosed(): void;
}

export function createSqliteContext(client: Database, db: BunSQLiteDatabase): SqliteContext {
  // bun:sqlite's close() leaves a connection with prepared statements open until they are
  // finalized, and they keep answering: after close() the store must refuse like a fresh query.
  let closed = false;
  const refuseIfClosed = () => {
    if (closed) throw new RangeError("Cannot use a closed database");
  };
  const listStatements = new Map<string, Statement>();

  return {
    client,
    db,
    run<T>(operation: () => T): Promise<T> {
      try {
        return Promise.resolve(operation());
      } catch (error) {
        return Promise.reject(withoutValues(mapError(error)));
      }
    },
    refuseIfClosed,
    prepared<T>(build: (db: BunSQLiteDatabase) => T): () => T {
      let built: T | undefined;
      return () => {
        refuseIfClosed();
        built ??= build(db);
        return built;
      };
    },
    listRows(statement) {
      refuseIfClosed();
      let prepared = listStatements.get(statement.text);
      if (!prepared) {
        prepared = client.prepare(statement.text);
        listStatements.set(statement.text, prepared);
      }
      return prepared.values(...(statement.params as SQLQueryBindings[])) as unknown[][];
    },
    markClosed() {
      closed = true;
    },
  };
}
