/**
 * The Store port on PostgreSQL through drizzle's bun-sql driver (Bun's built-in client and
 * pool). Several Intake instances may share the database, so every invariant is held by the
 * database itself: unique indexes, one transaction per batch, a tenant row lock for revocation.
 * The pool and its bound are shared by the repositories (pool.ts), each in its own module.
 */
import type { Store } from "../../domain/ports/store.ts";
import { createAuditRepo } from "./audit.ts";
import { createEventSearch } from "./event-search.ts";
import { createEventRepo } from "./events.ts";
import { createExportRepo } from "./exports.ts";
import { createIncidentRepo } from "./incidents.ts";
import { createOnboarding } from "./onboarding.ts";
import { createPool, type PostgresStoreOptions } from "./pool.ts";
import { applySearchIndex } from "./search-index.ts";
import { createServiceRepo } from "./services.ts";
import { createStatsRepo } from "./stats.ts";
import { createTenantRepo } from "./tenants.ts";
import { createTokenRepo } from "./tokens.ts";

export { DELETE_OLDER_THAN } from "./events.ts";
export type { PostgresStoreOptions } from "./pool.ts";

/**
 * Connects lazily: the first query opens the pool. Every method rejects with
 * `DomainError("unavailable")` when the server cannot be reached. Call `migrate()` first.
 */
export function createPostgresStore(options: PostgresStoreOptions & { eventSearch?: boolean }): Store {
  const pool = createPool(options);
  return {
    dialect: "postgres",
    tenants: createTenantRepo(pool),
    tokens: createTokenRepo(pool),
    services: createServiceRepo(pool),
    events: { ...createEventRepo(pool), search: createEventSearch(pool) },
    audit: createAuditRepo(pool),
    incidents: createIncidentRepo(pool),
    stats: createStatsRepo(pool),
    exports: createExportRepo(pool),
    ...createOnboarding(pool),
    // INTAKE_EVENT_SEARCH (default true): §18's payload index built or dropped (docs/search.md).
    migrate: async () => {
      await pool.migrate();
      await applySearchIndex(pool, options.eventSearch ?? true);
    },
    close: pool.close,
  };
}
