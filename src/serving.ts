/**
 * One `serve` per SQLite store, and where it listens (docs/operations.md, "One server per
 * SQLite store"). SQLite is the one-instance mode: a second server on the same file would keep
 * its own cache, accepting for that cache's lifetime a token the first one revoked. So `serve`
 * holds an OS lock on `<database>.lock` for as long as it runs (a killed process releases it
 * with everything else it held), and records `<database>.serving.json` beside it: its pid,
 * then where it listens, removed at shutdown. A second `serve` is refused naming the first;
 * `setup-link`, run in another shell, points its link at the running server.
 * PostgreSQL serves several instances at once: neither file is written for it.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type Config, ConfigError, describeStore, rootCause } from "./config.ts";
import { holdExclusiveLock, isBusy } from "./store/sqlite/connection.ts";

export interface ServingRecord {
  pid: number;
  started_at: string;
  /** `http://host:port/` once the HTTP listener accepts; null while the server is starting. */
  url: string | null;
  grpc_port: number | null;
}

/**
 * How long a starting server waits for the lock: `setup-link` takes it for an instant to learn
 * whether a recorded server still runs; a server that runs holds it for good.
 */
const CLAIM_WAIT_MS = 2_000;

/** The store's SQLite file, or null when there is none to guard (PostgreSQL, `sqlite::memory:`). */
function sqliteFile(config: Config): string | null {
  const { database } = config;
  return database.kind === "sqlite" && database.path !== ":memory:" ? database.path : null;
}

export function servingPaths(databasePath: string) {
  return { lock: `${databasePath}.lock`, record: `${databasePath}.serving.json` };
}

function readRecord(path: string): ServingRecord | null {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<ServingRecord>;
    if (typeof parsed.pid !== "number" || typeof parsed.started_at !== "string") return null;
    return {
      pid: parsed.pid,
      started_at: parsed.started_at,
      url: typeof parsed.url === "string" ? parsed.url : null,
      grpc_port: typeof parsed.grpc_port === "number" ? parsed.grpc_port : null,
    };
  } catch {
    return null;
  }
}

/** Written whole or not at all: a reader never sees half a record. */
function writeRecord(path: string, record: ServingRecord): void {
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  renameSync(partial, path);
}

export interface StoreClaim {
  /** Records where the server listens, once it does. */
  announce(url: string, grpcPort: number | null): void;
  /** Removes the record and lets go of the lock (after the store is closed). */
  release(): void;
}

/**
 * Takes the store for this process, or refuses (ConfigError, one line) naming the process that
 * serves it. Null when there is nothing to guard, or when the file's directory is missing
 * (opening the store then says so).
 */
export function claimStore(config: Config): StoreClaim | null {
  const file = sqliteFile(config);
  if (file === null || !existsSync(dirname(file))) return null;
  const { lock, record } = servingPaths(file);
  let held: ReturnType<typeof holdExclusiveLock>;
  try {
    held = holdExclusiveLock(lock, CLAIM_WAIT_MS);
  } catch (error) {
    if (!isBusy(error)) {
      throw new ConfigError([`${config.databaseVariable}: cannot take the lock ${lock}: ${rootCause(error)}`]);
    }
    const other = readRecord(record);
    const who = other
      ? `pid ${other.pid}${other.url ? `, listening at ${other.url}` : ", starting"}, since ${other.started_at}`
      : `which holds ${lock}`;
    throw new ConfigError([
      `${config.databaseVariable}: ${describeStore(config.database)} is already served by another intake (${who}); ` +
        "a SQLite store has one server: stop that one first, or use PostgreSQL to run several",
    ]);
  }
  const started = new Date().toISOString();
  const write = (url: string | null, grpcPort: number | null) =>
    writeRecord(record, { pid: process.pid, started_at: started, url, grpc_port: grpcPort });
  try {
    write(null, null);
  } catch (error) {
    held.close();
    throw new ConfigError([`${config.databaseVariable}: cannot write ${record}: ${rootCause(error)}`]);
  }
  let released = false;
  return {
    announce: (url, grpcPort) => write(url, grpcPort),
    release() {
      if (released) return;
      released = true;
      // The record goes first: a server that takes the lock next writes its own, which must stay.
      rmSync(record, { force: true });
      held.close();
    },
  };
}

/**
 * The server serving this store right now, as it recorded itself; null when none does (no
 * record, or a record left by a process that is gone: its lock is free).
 */
export function runningServer(config: Config): ServingRecord | null {
  const file = sqliteFile(config);
  if (file === null) return null;
  const { lock, record } = servingPaths(file);
  const found = readRecord(record);
  if (found === null) return null;
  try {
    // Free: whoever wrote the record is gone. Let go at once, for a server that may be starting.
    holdExclusiveLock(lock, 0).close();
    return null;
  } catch (error) {
    return isBusy(error) ? found : null;
  }
}
