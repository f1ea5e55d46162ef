/**
 * Which PostgreSQL failures mean "the store cannot be reached" (DomainError unavailable), and
 * the scrubbing of values from every error that leaves the store.
 */
import { SQL as BunSQL } from "bun";
import { DomainError } from "../../domain/errors.ts";
import { withoutValues } from "../query-errors.ts";

/** Errors Bun raises itself when it cannot reach, authenticate to, or keep a connection to the server. */
const CLIENT_UNAVAILABLE = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ERR_POSTGRES_TLS_NOT_AVAILABLE",
  "ERR_POSTGRES_TLS_UPGRADE_FAILED",
  "ERR_POSTGRES_AUTHENTICATION_FAILED_PBKDF",
  "ERR_POSTGRES_UNKNOWN_AUTHENTICATION_METHOD",
  "ERR_POSTGRES_UNSUPPORTED_AUTHENTICATION_METHOD",
  "ERR_POSTGRES_SASL_SIGNATURE_MISMATCH",
]);

/**
 * SQLSTATEs of a server that is there but cannot serve: connection exceptions (08), failed
 * login (28), missing database (3D000), out of connections/disk/memory (53), shutting down
 * or starting up (57P01..57P03).
 */
function isServerUnavailable(sqlState: string): boolean {
  return (
    sqlState.startsWith("08") ||
    sqlState.startsWith("28") ||
    sqlState.startsWith("53") ||
    sqlState === "3D000" ||
    sqlState === "57P01" ||
    sqlState === "57P02" ||
    sqlState === "57P03"
  );
}

function isUnavailable(error: unknown): boolean {
  // drizzle wraps driver errors in DrizzleQueryError; the client's error is its cause.
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (!(e instanceof BunSQL.PostgresError)) continue;
    if (CLIENT_UNAVAILABLE.has(e.code)) return true;
    if (e.errno !== undefined && isServerUnavailable(e.errno)) return true;
  }
  return false;
}

/** Connection-level failures become `unavailable`; no error leaves with a parameter in it. */
export function mapError(error: unknown): unknown {
  if (error instanceof DomainError || !isUnavailable(error)) return withoutValues(error);
  return withoutValues(new DomainError("unavailable", "The store cannot be reached.", undefined, { cause: error }));
}
