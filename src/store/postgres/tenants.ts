/** Tenants on PostgreSQL (the TenantRepo port). */
import { eq, sql } from "drizzle-orm";
import type { TenantRepo } from "../../domain/ports/store.ts";
import type { TenantRecord } from "../../domain/types.ts";
import { type PostgresPool, writeAudit } from "./pool.ts";
import { tenants } from "./schema.ts";

export function createTenantRepo(pool: PostgresPool): TenantRepo {
  const { guard } = pool;
  const byId = pool.prepared((db) =>
    db
      .select()
      .from(tenants)
      .where(eq(tenants.id, sql.placeholder("id")))
      .prepare("tenant_get"),
  );

  return {
    get: (id) => guard(async () => (await byId().execute({ id }))[0] ?? null),

    any: () => guard(async () => (await pool.db().select({ id: tenants.id }).from(tenants).limit(1)).length > 0),

    rename: (id, name, audit) =>
      guard(() =>
        pool.db().transaction(async (tx): Promise<TenantRecord | null> => {
          // The row lock makes `before` the row this UPDATE changes, whatever runs concurrently.
          const [before] = await tx.select().from(tenants).where(eq(tenants.id, id)).for("no key update");
          if (!before) return null;
          const [after] = await tx.update(tenants).set({ name }).where(eq(tenants.id, id)).returning();
          if (!after) throw new Error("rename: the tenant vanished under its row lock");
          await writeAudit(tx, audit(before, after));
          return after;
        }),
      ),

    countNamed: (name) =>
      guard(async () => {
        const [row] = await pool
          .db()
          .select({ n: sql<number>`count(*)::int` })
          .from(tenants)
          .where(eq(tenants.name, name));
        return row?.n ?? 0;
      }),
  };
}
