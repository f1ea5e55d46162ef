/**
 * Onboarding on SQLite: setup codes, and a tenant created with its first token (by the CLI's
 * bootstrap, or by redeeming a setup code), each with its audit records in one transaction.
 */
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { SetupCodeRepo, Store } from "../../domain/ports/store.ts";
import { IMMEDIATE, type SqliteContext, writeAudit } from "./context.ts";
import { apiTokens, setupCodes, tenants } from "./schema.ts";

export type SqliteOnboarding = Pick<Store, "createTenant" | "redeemSetupCode"> & { setupCodes: SetupCodeRepo };

export function createOnboarding(ctx: SqliteContext): SqliteOnboarding {
  const { db, run } = ctx;
  const p = sql.placeholder;
  const usable = ctx.prepared((db) =>
    db
      .select({ digest: setupCodes.digest })
      .from(setupCodes)
      .where(and(eq(setupCodes.digest, p("digest")), isNull(setupCodes.usedAt), gt(setupCodes.expiresAt, p("now"))))
      .prepare(),
  );

  return {
    setupCodes: {
      insert: (record) =>
        run(() => {
          db.insert(setupCodes).values(record).run();
        }),
    },

    createTenant: (tenant, firstToken, audit) =>
      run(() =>
        db.transaction((tx) => {
          tx.insert(tenants).values(tenant).run();
          tx.insert(apiTokens).values(firstToken).run();
          for (const record of audit) writeAudit(tx, record);
        }, IMMEDIATE),
      ),

    redeemSetupCode: (digest, now, tenant, firstToken, audit) =>
      run(() => {
        // The route is open to anyone: a code that cannot be claimed costs one read on this
        // connection, not a write transaction (whose lock would wait on the event writer).
        if (!usable().get({ digest, now })) return false;
        return db.transaction((tx) => {
          // The claim is conditional: of two redemptions that both read the code as usable,
          // the second finds it used here and writes nothing.
          const claimed = tx
            .update(setupCodes)
            .set({ usedAt: now, tenantId: tenant.id })
            .where(and(eq(setupCodes.digest, digest), isNull(setupCodes.usedAt), gt(setupCodes.expiresAt, now)))
            .returning({ digest: setupCodes.digest })
            .all();
          if (claimed.length === 0) return false;
          tx.insert(tenants).values(tenant).run();
          tx.insert(apiTokens).values(firstToken).run();
          for (const record of audit) writeAudit(tx, record);
          return true;
        }, IMMEDIATE);
      }),
  };
}
