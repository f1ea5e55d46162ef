/** Services on SQLite (the ServiceRepo port). */
import { and, eq, sql } from "drizzle-orm";
import type { ServiceRepo } from "../../domain/ports/store.ts";
import type { ServiceRecord } from "../../domain/types.ts";
import { serviceListStatement, serviceSummary, sqlitePlaceholder } from "../list-rows.ts";
import { rotationColumns, serviceColumns } from "../service-columns.ts";
import { IMMEDIATE, type SqliteContext, writeAudit } from "./context.ts";
import { services } from "./schema.ts";

export function createServiceRepo(ctx: SqliteContext): ServiceRepo {
  const { db, run } = ctx;
  const p = sql.placeholder;
  const statements = ctx.prepared((db) => ({
    get: db
      .select()
      .from(services)
      .where(and(eq(services.tenantId, p("tenantId")), eq(services.id, p("id"))))
      .prepare(),
    byId: db
      .select()
      .from(services)
      .where(eq(services.id, p("id")))
      .prepare(),
  }));

  return {
    insert: (record, audit) =>
      run(() =>
        db.transaction((tx) => {
          const row = tx
            .insert(services)
            .values(record)
            .onConflictDoNothing({ target: [services.tenantId, services.serviceName] })
            .returning({ id: services.id })
            .get();
          if (!row) return "name_taken";
          writeAudit(tx, audit);
          return "ok";
        }, IMMEDIATE),
      ),

    get: (tenantId, id) => run((): ServiceRecord | null => statements().get.get({ tenantId, id }) ?? null),

    getById: (id) => run((): ServiceRecord | null => statements().byId.get({ id }) ?? null),

    list: (tenantId, query) =>
      run(() => ctx.listRows(serviceListStatement(sqlitePlaceholder, tenantId, query)).map(serviceSummary)),

    update: (tenantId, id, changes, now, audit) =>
      run(() =>
        db.transaction((tx): ServiceRecord | null => {
          const where = and(eq(services.tenantId, tenantId), eq(services.id, id));
          const before = tx.select().from(services).where(where).get();
          if (!before) return null;
          const after = tx.update(services).set(serviceColumns(changes, now)).where(where).returning().get();
          if (!after) throw new Error("update: the service vanished inside its own transaction");
          writeAudit(tx, audit(before, after));
          return after;
        }, IMMEDIATE),
      ),

    rotateSecret: (tenantId, id, rotation, audit) =>
      run(() =>
        db.transaction((tx): ServiceRecord | null => {
          const row = tx
            .update(services)
            .set(rotationColumns(rotation, sql`${services.secretCiphertext}`))
            .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
            .returning()
            .get();
          if (!row) return null;
          writeAudit(tx, audit);
          return row;
        }, IMMEDIATE),
      ),

    // Events go with it through ON DELETE CASCADE (foreign_keys is ON for this connection).
    delete: (tenantId, id, audit) =>
      run(() =>
        db.transaction((tx) => {
          const row = tx
            .delete(services)
            .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
            .returning({ id: services.id })
            .get();
          if (!row) return false;
          writeAudit(tx, audit);
          return true;
        }, IMMEDIATE),
      ),
  };
}
