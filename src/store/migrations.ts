/**
 * The committed migrations of both dialects, read at BUNDLE time (imported `with { type:
 * "macro" }`) by drizzle's own reader, so the SQL travels inside the code: `bun run` and the
 * one-file build (`bun run build`, README.md "Ship it") apply exactly the same statements,
 * and the compiled binary needs no drizzle/ folder beside it. Adding a migration with
 * `bun run db:generate` is all it takes; nothing here lists them.
 */
import { join } from "node:path";
import { type MigrationMeta, readMigrationFiles } from "drizzle-orm/migrator";

export type Dialect = "sqlite" | "postgres";

/** Called as a macro: its JSON result is inlined where it is called. */
export function committedMigrations(dialect: Dialect): MigrationMeta[] {
  return readMigrationFiles({ migrationsFolder: join(import.meta.dir, "../../drizzle", dialect) });
}
