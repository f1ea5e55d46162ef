/**
 * Audit events on PostgreSQL (the AuditRepo port): read and swept here, written only by the
 * mutations of the other repositories, inside their own transactions (pool.ts writeAudit).
 */
import { inArray, lt } from "drizzle-orm";
import type { AuditRepo } from "../../domain/ports/store.ts";
import { auditListStatement, auditRecord, postgresPlaceholder } from "../list-rows.ts";
import type { PostgresPool } from "./pool.ts";
import { auditEvents } from "./schema.ts";

export function createAuditRepo(pool: PostgresPool): AuditRepo {
  const { guard } = pool;
  return {
    list: (tenantId, query) =>
      guard(async () =>
        (await pool.listRows(auditListStatement(postgresPlaceholder, tenantId, query))).map((row) =>
          auditRecord(row, tenantId),
        ),
      ),

    // Oldest first, a bounded batch per statement: each call holds its row locks briefly.
    deleteOlderThan: (cutoff, batchSize) =>
      guard(async () => {
        const db = pool.db();
        const oldest = db
          .select({ id: auditEvents.id })
          .from(auditEvents)
          .where(lt(auditEvents.occurredAt, cutoff))
          .orderBy(auditEvents.occurredAt)
          .limit(batchSize);
        const rows = await db
          .delete(auditEvents)
          .where(inArray(auditEvents.id, oldest))
          .returning({ id: auditEvents.id });
        return rows.length;
      }),
  };
}
