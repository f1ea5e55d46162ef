/**
 * Audit events on SQLite (the AuditRepo port): read and swept here, written only by the
 * mutations of the other repositories, inside their own transactions (context.ts writeAudit).
 */
import { inArray, lt } from "drizzle-orm";
import type { AuditRepo } from "../../domain/ports/store.ts";
import { auditListStatement, auditRecord, sqlitePlaceholder } from "../list-rows.ts";
import type { SqliteContext } from "./context.ts";
import { auditEvents } from "./schema.ts";

export function createAuditRepo(ctx: SqliteContext): AuditRepo {
  const { db, run } = ctx;
  return {
    list: (tenantId, query) =>
      run(() =>
        ctx.listRows(auditListStatement(sqlitePlaceholder, tenantId, query)).map((row) => auditRecord(row, tenantId)),
      ),

    // Oldest first, a bounded batch per statement: each call holds the write lock briefly.
    deleteOlderThan: (cutoff, batchSize) =>
      run(() => {
        const oldest = db
          .select({ id: auditEvents.id })
          .from(auditEvents)
          .where(lt(auditEvents.occurredAt, cutoff))
          .orderBy(auditEvents.occurredAt)
          .limit(batchSize);
        return db.delete(auditEvents).where(inArray(auditEvents.id, oldest)).returning({ id: auditEvents.id }).all()
          .length;
      }),
  };
}
