/**
 * Why PostgreSQL refused a connection, in the words an operator needs. The server's own
 * message for these (`database "x" does not exist`) names a value, so the store's error
 * scrubbing (src/store/query-errors.ts) reduces it to codes (`sqlstate 3D000, routine
 * InitPostgres`); the names are rebuilt here from DATABASE_URL, which the operator wrote.
 */
import { SQL as BunSQL } from "bun";
import { DomainError } from "../../domain/errors.ts";

/** The first PostgreSQL server error in the chain, if any. */
function serverError(error: unknown): InstanceType<typeof BunSQL.PostgresError> | null {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof BunSQL.PostgresError) return e;
  }
  return null;
}

/** `unavailable`, caused by one line naming the database or role of `url`; null for other failures. */
export function connectFailure(error: unknown, url: string): DomainError | null {
  const sqlState = serverError(error)?.errno;
  if (sqlState === undefined || !URL.canParse(url)) return null;
  const parsed = new URL(url);
  // Bun, like libpq, connects as the OS user and to the database named after the role when the URL names none.
  const user = decodeURIComponent(parsed.username) || process.env.USER || "postgres";
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || user;
  const reason =
    sqlState === "3D000"
      ? `database "${database}" does not exist`
      : sqlState === "28000"
        ? `role "${user}" does not exist or may not log in`
        : sqlState === "28P01"
          ? `password authentication failed for user "${user}"`
          : null;
  if (reason === null) return null;
  return new DomainError("unavailable", "The store cannot be reached.", undefined, { cause: new Error(reason) });
}
