/**
 * Opening a SQLite connection with Intake's pragmas. Shared by the store's own connection and
 * the event-writer worker's (src/store/sqlite/event-writer-worker.ts), so both connections to
 * one file behave alike; kept free of drizzle so the worker loads nothing it does not use.
 */
import { Database } from "bun:sqlite";
import { closeSync, constants, openSync } from "node:fs";
import { DomainError } from "../../domain/errors.ts";

/**
 * Primary result codes (errno & 0xff) that mean the database itself cannot be used: the file
 * cannot be opened or read, the disk fails or is full, or another process holds the lock past
 * busy_timeout. Anything else (constraint, misuse, SQL error) is a bug and propagates as is.
 */
const UNAVAILABLE_CODES = new Set([
  3, // SQLITE_PERM
  5, // SQLITE_BUSY
  6, // SQLITE_LOCKED
  8, // SQLITE_READONLY
  10, // SQLITE_IOERR
  11, // SQLITE_CORRUPT
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
  15, // SQLITE_PROTOCOL
  26, // SQLITE_NOTADB
]);

function isUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const errno = (e as { errno?: unknown }).errno;
    if (e.name === "SQLiteError" && typeof errno === "number" && UNAVAILABLE_CODES.has(errno & 0xff)) return true;
  }
  return false;
}

/** Connection-level failures become `DomainError("unavailable")`; anything else stays as is. */
export function mapError(error: unknown): unknown {
  if (error instanceof DomainError || !isUnavailable(error)) return error;
  return new DomainError("unavailable", "The store cannot be reached.", undefined, { cause: error });
}

/** Owner read/write only: the file holds token digests, sealed secrets and event payloads. */
const FILE_MODE = 0o600;

/**
 * Creates the database file, if it does not exist yet, with mode 0600 before SQLite opens it.
 * SQLite would create it 0644 (under the usual umask); and it creates `-wal`, `-shm` and
 * `-journal` later with the database file's own mode, so these follow without a process-wide
 * umask (which would change every other file the process writes) or a chmod after each is
 * created (docs/store.md, "File modes"). An existing file keeps the mode its owner gave it.
 */
function createPrivately(path: string): void {
  if (path === ":memory:" || path === "" || path.startsWith("file:")) return;
  try {
    closeSync(openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, FILE_MODE));
  } catch {
    // It exists already, or cannot be created (a missing directory): SQLite's own open then
    // reports that, as unavailable.
  }
}

/** Opens the file (or ":memory:"); throws SQLite's own error, which the caller maps. */
export function openDatabase(path: string): Database {
  let client: Database | undefined;
  try {
    createPrivately(path);
    client = new Database(path, { create: true, readwrite: true });
    // Set first so that the pragmas below wait for a lock held by another process (or our worker).
    client.exec("PRAGMA busy_timeout = 5000");
    if (path !== ":memory:") client.exec("PRAGMA journal_mode = WAL");
    // FULL: in WAL mode a commit is fsynced before it returns, so an acknowledged event survives power loss.
    client.exec("PRAGMA synchronous = FULL");
    client.exec("PRAGMA foreign_keys = ON");
    return client;
  } catch (error) {
    client?.close();
    throw error;
  }
}

/**
 * An OS lock on `path` (SQLite's own file lock on a database that stays empty), held until the
 * returned connection closes or the process ends, however it ends: a killed process leaves no
 * lock behind, and a reused pid means nothing. Another process holding it past `waitMs` makes
 * this throw SQLite's SQLITE_BUSY (`isBusy`).
 */
export function holdExclusiveLock(path: string, waitMs: number): Database {
  let client: Database | undefined;
  try {
    createPrivately(path);
    client = new Database(path, { create: true, readwrite: true });
    client.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(waitMs))}`);
    // The transaction never writes; in memory, its journal leaves no file beside the lock.
    client.exec("PRAGMA journal_mode = MEMORY");
    client.exec("PRAGMA locking_mode = EXCLUSIVE");
    client.exec("BEGIN EXCLUSIVE");
    return client;
  } catch (error) {
    client?.close();
    throw error;
  }
}

/** SQLITE_BUSY: another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  const errno = (error as { errno?: unknown }).errno;
  return error instanceof Error && typeof errno === "number" && (errno & 0xff) === 5;
}
