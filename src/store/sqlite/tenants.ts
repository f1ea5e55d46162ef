/** Tenants on SQLite (the TenantRepo port). */
import { eq, sql } from "drizzle-orm";
import type { TenantRepo } from "../../domain/ports/store.ts";
import type { TenantRecord } from "../../domain/types.ts";
import { IMMEDIATE, type SqliteContext, writeAudit } from "./context.ts";
import { tenants } from "./schema.ts";

export function createTenantRepo(ctx: SqliteContext): TenantRepo {
  const { db, run } = ctx;
  const byId = ctx.prepared((db) =>
    db
      .select()
      .from(tenants)
      .where(eq(tenants.id, sql.placeholder("id")))
      .prepare(),
  );

  return {
    get: (id) => run((): TenantRecord | null => byId().get({ id }) ?? null),

    any: () => run(() => db.select({ id: tenants.id }).from(tenants).limit(1).all().length > 0),

    rename: (id, name, audit) =>
      run(() =>
        db.transaction((tx): TenantRecord | null => {
          const before = tx.select().from(tenants).where(eq(tenants.id, id)).get();
          if (!before) return null;
          const after = tx.update(tenants).set({ name }).where(eq(tenants.id, id)).returning().get();
          if (!after) throw new Error("rename: the tenant vanished inside its own transaction");
          writeAudit(tx, audit(before, after));
          return after;
        }, IMMEDIATE),
      ),

    countNamed: (name) =>
      run(
        (): number => db.select({ n: sql<number>`count(*)` }).from(tenants).where(eq(tenants.name, name)).get()?.n ?? 0,
      ),
  };
}
