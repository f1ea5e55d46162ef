/**
 * The Store port on SQLite (bun:sqlite through drizzle): one connection per store, shared by
 * the repositories (context.ts), each in its own module; event writes on a file database go
 * through a worker's own connection (events.ts, event-writer.ts). docs/store.md.
 */
import type { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { Store } from "../../domain/ports/store.ts";
import { applyMigrations } from "../migrate.ts";
import { committedMigrations } from "../migrations.ts" with { type: "macro" };
import { createAuditRepo } from "./audit.ts";
import { mapError, openDatabase } from "./connection.ts";
import { createSqliteContext } from "./context.ts";
import { alignEventRowids } from "./event-rowids.ts";
import { createEventRepo } from "./events.ts";
import { createExportRepo } from "./exports.ts";
import { createIncidentRepo } from "./incidents.ts";
import { createOnboarding } from "./onboarding.ts";
import { applySearchIndex } from "./search-index.ts";
import { createServiceRepo } from "./services.ts";
import { createStatsRepo } from "./stats.ts";
import { createTenantRepo } from "./tenants.ts";
import { createTokenRepo } from "./tokens.ts";

export interface SqliteStoreOptions {
  /** A file path, or ":memory:" for a private in-process database. */
  path: string;
  /**
   * INTAKE_EVENT_SEARCH (default true): keep §18's payload index. False drops its triggers and
   * empties it at migrate(); true (again) recreates and rebuilds it there (docs/search.md).
   */
  eventSearch?: boolean;
}

/** Inlined at bundle time (src/store/migrations.ts): no drizzle/ folder is read at run time. */
const MIGRATIONS = committedMigrations("sqlite");

function openStoreDatabase(path: string): Database {
  try {
    return openDatabase(path);
  } catch (error) {
    throw mapError(error);
  }
}

/**
 * Opens (creating if needed) the database and applies the durability pragmas. Throws
 * `DomainError("unavailable")` when the file cannot be opened or is not a database.
 * Call `migrate()` before anything else.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const client = openStoreDatabase(options.path);
  const db = drizzle({ client });
  const ctx = createSqliteContext(client, db);
  const { closeWriter, ...events } = createEventRepo(ctx, options.path);
  const { setupCodes, createTenant, redeemSetupCode } = createOnboarding(ctx);

  return {
    dialect: "sqlite",
    tenants: createTenantRepo(ctx),
    tokens: createTokenRepo(ctx),
    services: createServiceRepo(ctx),
    events,
    audit: createAuditRepo(ctx),
    incidents: createIncidentRepo(ctx),
    stats: createStatsRepo(ctx),
    exports: createExportRepo(ctx),
    setupCodes,
    createTenant,
    redeemSetupCode,

    migrate: () =>
      ctx.run(() => {
        applyMigrations(db, MIGRATIONS);
        alignEventRowids(client);
        applySearchIndex(client, options.eventSearch ?? true);
      }),

    close: async () => {
      // The worker first: its in-flight batches settle and its connection closes before ours.
      await closeWriter();
      ctx.markClosed();
      return ctx.run(() => client.close());
    },
  };
}
