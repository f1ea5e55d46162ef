/** Services on PostgreSQL (the ServiceRepo port). */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceRepo } from "../../domain/ports/store.ts";
import type { ServiceRecord } from "../../domain/types.ts";
import { postgresPlaceholder, serviceListStatement, serviceSummary } from "../list-rows.ts";
import { rotationColumns, serviceColumns } from "../service-columns.ts";
import { type PostgresPool, writeAudit } from "./pool.ts";
import { services } from "./schema.ts";

export function createServiceRepo(pool: PostgresPool): ServiceRepo {
  const { guard } = pool;
  const byId = pool.prepared((db) =>
    db
      .select()
      .from(services)
      .where(eq(services.id, sql.placeholder("id")))
      .prepare("service_by_id"),
  );

  return {
    insert: (record, audit) =>
      guard(() =>
        pool.db().transaction(async (tx) => {
          const rows = await tx
            .insert(services)
            .values(record)
            .onConflictDoNothing({ target: [services.tenantId, services.serviceName] })
            .returning({ id: services.id });
          if (rows.length === 0) return "name_taken";
          await writeAudit(tx, audit);
          return "ok";
        }),
      ),

    get: (tenantId, id) =>
      guard(
        async () =>
          (
            await pool
              .db()
              .select()
              .from(services)
              .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
          )[0] ?? null,
      ),

    getById: (id) => guard(async () => (await byId().execute({ id }))[0] ?? null),

    list: (tenantId, query) =>
      guard(async () =>
        (await pool.listRows(serviceListStatement(postgresPlaceholder, tenantId, query))).map(serviceSummary),
      ),

    update: (tenantId, id, changes, now, audit) =>
      guard(() =>
        pool.db().transaction(async (tx): Promise<ServiceRecord | null> => {
          const where = and(eq(services.tenantId, tenantId), eq(services.id, id));
          // The row lock makes `before` the row this UPDATE changes, whatever runs concurrently.
          const [before] = await tx.select().from(services).where(where).for("no key update");
          if (!before) return null;
          const [after] = await tx.update(services).set(serviceColumns(changes, now)).where(where).returning();
          if (!after) throw new Error("update: the service vanished under its row lock");
          await writeAudit(tx, audit(before, after));
          return after;
        }),
      ),

    rotateSecret: (tenantId, id, rotation, audit) =>
      guard(() =>
        pool.db().transaction(async (tx): Promise<ServiceRecord | null> => {
          const [row] = await tx
            .update(services)
            .set(rotationColumns(rotation, sql`${services.secretCiphertext}`))
            .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
            .returning();
          if (!row) return null;
          await writeAudit(tx, audit);
          return row;
        }),
      ),

    // Events go with it through ON DELETE CASCADE, in the same transaction as the audit record.
    delete: (tenantId, id, audit) =>
      guard(() =>
        pool.db().transaction(async (tx) => {
          const rows = await tx
            .delete(services)
            .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
            .returning({ id: services.id });
          if (rows.length === 0) return false;
          await writeAudit(tx, audit);
          return true;
        }),
      ),
  };
}
