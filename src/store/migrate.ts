/**
 * Applies embedded migrations through drizzle's own dialect migrator (the one its
 * folder-reading `migrate()` calls after reading the files), so the bookkeeping table and the
 * hash checks are drizzle's. `dialect` and `session` are drizzle internals its public
 * `migrate()` uses; they are reached in this one place.
 */
import type { MigrationMeta } from "drizzle-orm/migrator";

interface DrizzleInternals {
  dialect: { migrate(migrations: MigrationMeta[], session: unknown, config: { migrationsFolder: string }): unknown };
  session: unknown;
}

export function applyMigrations(db: object, migrations: MigrationMeta[]): unknown {
  const { dialect, session } = db as DrizzleInternals;
  return dialect.migrate(migrations, session, { migrationsFolder: "(embedded)" });
}
