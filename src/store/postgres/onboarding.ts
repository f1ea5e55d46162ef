/**
 * Onboarding on PostgreSQL: setup codes, and a tenant created with its first token (by the
 * CLI's bootstrap, or by redeeming a setup code), each with its audit records in one transaction.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import type { SetupCodeRepo, Store } from "../../domain/ports/store.ts";
import { type PostgresPool, writeAudit } from "./pool.ts";
import { apiTokens, setupCodes, tenants } from "./schema.ts";

export type PostgresOnboarding = Pick<Store, "createTenant" | "redeemSetupCode"> & { setupCodes: SetupCodeRepo };

export function createOnboarding(pool: PostgresPool): PostgresOnboarding {
  const { guard } = pool;
  return {
    setupCodes: {
      insert: (record) =>
        guard(async () => {
          await pool.db().insert(setupCodes).values(record);
        }),
    },

    createTenant: (tenant, firstToken, audit) =>
      guard(() =>
        pool.db().transaction(async (tx) => {
          await tx.insert(tenants).values(tenant);
          await tx.insert(apiTokens).values(firstToken);
          for (const record of audit) await writeAudit(tx, record);
        }),
      ),

    redeemSetupCode: (digest, now, tenant, firstToken, audit) =>
      guard(async () => {
        const db = pool.db();
        const usable = and(eq(setupCodes.digest, digest), isNull(setupCodes.usedAt), gt(setupCodes.expiresAt, now));
        // The route is open to anyone: a code that cannot be claimed costs one read, not a
        // write transaction.
        const found = await db.select({ digest: setupCodes.digest }).from(setupCodes).where(usable).limit(1);
        if (found.length === 0) return false;
        return db.transaction(async (tx) => {
          // A conditional UPDATE claims the code: a concurrent redemption waits on the row lock,
          // then finds used_at set and claims nothing (READ COMMITTED re-checks the row).
          const claimed = await tx
            .update(setupCodes)
            .set({ usedAt: now, tenantId: tenant.id })
            .where(usable)
            .returning({ digest: setupCodes.digest });
          if (claimed.length === 0) return false;
          await tx.insert(tenants).values(tenant);
          await tx.insert(apiTokens).values(firstToken);
          for (const record of audit) await writeAudit(tx, record);
          return true;
        });
      }),
  };
}
