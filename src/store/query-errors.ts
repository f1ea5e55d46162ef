/**
 * What a store error may carry out of the store. drizzle wraps every driver error in a
 * DrizzleQueryError whose message is the SQL *and its parameters* (token digests, names,
 * sealed secrets, event payloads), and a PostgreSQL error's message or detail can quote a
 * value too ("invalid input syntax for type bigint: …", "Key (digest)=(…) already exists").
 * Every error a store method rejects with passes through `withoutValues`, so whatever logs
 * it later (the edge's "internal error" line) can only print names and codes. docs/store.md.
 */

import { SQLiteError } from "bun:sqlite";
import { SQL as BunSQL } from "bun";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { DomainError } from "../domain/errors.ts";

/** A failed statement, described by codes and schema names only. */
export class StoreQueryError extends Error {
  override readonly name = "StoreQueryError";
}

/** The driver error at the root of drizzle's wrapping, if any. */
function rootCause(error: unknown): unknown {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e instanceof DrizzleQueryError && e.cause !== undefined; depth++) e = e.cause;
  return e;
}

/** Codes and schema object names: never the message, detail or hint, which may quote a value. */
function describePostgres(error: InstanceType<typeof BunSQL.PostgresError>): string {
  const parts = [error.code];
  if (error.errno) parts.push(`sqlstate ${error.errno}`);
  if (error.routine) parts.push(`routine ${error.routine}`);
  for (const [label, value] of [
    ["table", error.table],
    ["column", error.column],
    ["constraint", error.constraint],
  ] as const) {
    if (value) parts.push(`${label} ${value}`);
  }
  return `query failed: ${parts.join(", ")}`;
}

function describe(error: unknown): string {
  const root = rootCause(error);
  if (root instanceof BunSQL.PostgresError) return describePostgres(root);
  // SQLite's messages name constraints and columns ("UNIQUE constraint failed: api_tokens.prefix"),
  // never values; the code says the rest.
  if (root instanceof SQLiteError) return `query failed: ${root.code ?? "SQLITE_ERROR"}: ${root.message}`;
  if (root instanceof DrizzleQueryError) return "query failed";
  if (root instanceof Error) return `query failed: ${root.name}`;
  return "query failed";
}

/** True when the error (or a cause) could print a statement's parameters or a value. */
function carriesValues(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DrizzleQueryError || e instanceof BunSQL.PostgresError) return true;
  }
  return false;
}

/**
 * The error with every value-bearing part replaced by a description made of codes and names.
 * A DomainError keeps its code and message (the edge maps it); its cause is replaced.
 */
export function withoutValues(error: unknown): unknown {
  if (error instanceof DomainError) {
    if (!carriesValues(error.cause)) return error;
    return new DomainError(error.code, error.message, error.details, {
      cause: new StoreQueryError(describe(error.cause)),
    });
  }
  if (!carriesValues(error)) return error;
  return new StoreQueryError(describe(error));
}
