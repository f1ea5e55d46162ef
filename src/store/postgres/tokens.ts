/** API tokens on PostgreSQL (the TokenRepo port). */
import { and, eq, gt, inArray, isNull, lt, ne, or, sql } from "drizzle-orm";
import { ownerToKeep } from "../../domain/access.ts";
import type { RevokeOutcome, TokenRepo } from "../../domain/ports/store.ts";
import { postgresPlaceholder, tokenListStatement, tokenSummary } from "../list-rows.ts";
import { type PostgresPool, writeAudit } from "./pool.ts";
import { apiTokens, tenants } from "./schema.ts";

export function createTokenRepo(pool: PostgresPool): TokenRepo {
  const { guard } = pool;
  const byDigest = pool.prepared((db) =>
    db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.digest, sql.placeholder("digest")))
      .prepare("token_by_digest"),
  );

  return {
    findByDigest: (digest) => guard(async () => (await byDigest().execute({ digest }))[0] ?? null),

    get: (tenantId, id) =>
      guard(
        async () =>
          (
            await pool
              .db()
              .select()
              .from(apiTokens)
              .where(and(eq(apiTokens.tenantId, tenantId), eq(apiTokens.id, id)))
          )[0] ?? null,
      ),

    list: (tenantId, query) =>
      guard(async () =>
        (await pool.listRows(tokenListStatement(postgresPlaceholder, tenantId, query))).map(tokenSummary),
      ),

    insert: (record, audit) =>
      guard(() =>
        pool.db().transaction(async (tx) => {
          // Only the prefix is a conflict the caller can act on (mint again); a clash on id
          // or digest is a bug and still throws.
          const rows = await tx
            .insert(apiTokens)
            .values(record)
            .onConflictDoNothing({ target: apiTokens.prefix })
            .returning({ id: apiTokens.id });
          if (rows.length === 0) return "prefix_taken";
          await writeAudit(tx, audit);
          return "ok";
        }),
      ),

    revoke: (tenantId, id, now, audit) =>
      guard(() =>
        pool.db().transaction(async (tx): Promise<RevokeOutcome> => {
          // Serializes revocations per tenant across every instance: the "is another owner
          // active?" check below cannot interleave with a concurrent revoke. NO KEY UPDATE,
          // not UPDATE, so that inserts referencing the tenant (FK KEY SHARE) are not blocked.
          const locked = await tx
            .select({ id: tenants.id })
            .from(tenants)
            .where(eq(tenants.id, tenantId))
            .for("no key update");
          if (locked.length === 0) return { kind: "not_found" };

          const [target] = await tx
            .select()
            .from(apiTokens)
            .where(and(eq(apiTokens.tenantId, tenantId), eq(apiTokens.id, id)));
          if (!target) return { kind: "not_found" };
          if (target.revokedAt !== null) return { kind: "already_revoked", record: target };
          const keep = ownerToKeep(target, now);
          if (keep) {
            const others = await tx
              .select({ id: apiTokens.id })
              .from(apiTokens)
              .where(
                and(
                  eq(apiTokens.tenantId, tenantId),
                  ne(apiTokens.id, id),
                  eq(apiTokens.role, "owner"),
                  eq(apiTokens.scope, "read_write"),
                  isNull(apiTokens.revokedAt),
                  or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now)),
                  keep.nonExpiring ? isNull(apiTokens.expiresAt) : undefined,
                ),
              )
              .limit(1);
            if (others.length === 0) return { kind: "last_owner" };
          }
          const [record] = await tx
            .update(apiTokens)
            .set({ revokedAt: now })
            .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
            .returning();
          if (!record) throw new Error("revoke: the token changed under the tenant lock");
          await writeAudit(tx, audit);
          return { kind: "revoked", record };
        }),
      ),

    touchLastUsed: (updates) =>
      guard(async () => {
        // Keep the latest time per token, then update in id order so that two instances
        // flushing overlapping sets lock rows in the same order and cannot deadlock.
        const latest = new Map<string, number>();
        for (const u of updates) latest.set(u.id, Math.max(u.at, latest.get(u.id) ?? u.at));
        const ids = [...latest.keys()].sort();
        if (ids.length === 0) return;
        const at = sql.join(
          ids.map((id) => sql`when ${id} then ${latest.get(id)}::bigint`),
          sql` `,
        );
        const newTime = sql`(case ${apiTokens.id} ${at} end)`;
        // Never moves last_used_at backwards: instances flush their buffers in any order.
        await pool
          .db()
          .update(apiTokens)
          .set({ lastUsedAt: newTime })
          .where(and(inArray(apiTokens.id, ids), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, newTime))));
      }),
  };
}
