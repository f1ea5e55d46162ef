/** API tokens on SQLite (the TokenRepo port). */
import { and, eq, gt, isNull, lt, ne, or, sql } from "drizzle-orm";
import { ownerToKeep } from "../../domain/access.ts";
import type { RevokeOutcome, TokenRepo } from "../../domain/ports/store.ts";
import type { TokenRecord } from "../../domain/types.ts";
import { sqlitePlaceholder, tokenListStatement, tokenSummary } from "../list-rows.ts";
import { IMMEDIATE, type SqliteContext, writeAudit } from "./context.ts";
import { apiTokens } from "./schema.ts";

export function createTokenRepo(ctx: SqliteContext): TokenRepo {
  const { db, run } = ctx;
  const p = sql.placeholder;
  const statements = ctx.prepared((db) => ({
    byDigest: db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.digest, p("digest")))
      .prepare(),
    get: db
      .select()
      .from(apiTokens)
      .where(and(eq(apiTokens.tenantId, p("tenantId")), eq(apiTokens.id, p("id"))))
      .prepare(),
    // Never moves last_used_at backwards: instances flush their buffers in any order.
    touchLastUsed: db
      .update(apiTokens)
      .set({ lastUsedAt: sql`${p("at")}` })
      .where(and(eq(apiTokens.id, p("id")), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, p("at")))))
      .prepare(),
  }));

  return {
    findByDigest: (digest) => run((): TokenRecord | null => statements().byDigest.get({ digest }) ?? null),

    get: (tenantId, id) => run((): TokenRecord | null => statements().get.get({ tenantId, id }) ?? null),

    list: (tenantId, query) =>
      run(() => ctx.listRows(tokenListStatement(sqlitePlaceholder, tenantId, query)).map(tokenSummary)),

    insert: (record, audit) =>
      run(() =>
        db.transaction((tx) => {
          // Only the prefix is a conflict the caller can act on (mint again); a clash on id
          // or digest is a bug and still throws.
          const row = tx
            .insert(apiTokens)
            .values(record)
            .onConflictDoNothing({ target: apiTokens.prefix })
            .returning({ id: apiTokens.id })
            .get();
          if (!row) return "prefix_taken";
          writeAudit(tx, audit);
          return "ok";
        }, IMMEDIATE),
      ),

    revoke: (tenantId, id, now, audit) =>
      run(() =>
        // IMMEDIATE takes the write lock before the check, so check-then-update is atomic
        // against every other connection to the file.
        db.transaction((tx): RevokeOutcome => {
          const target = tx
            .select()
            .from(apiTokens)
            .where(and(eq(apiTokens.tenantId, tenantId), eq(apiTokens.id, id)))
            .get();
          if (!target) return { kind: "not_found" };
          if (target.revokedAt !== null) return { kind: "already_revoked", record: target };
          const keep = ownerToKeep(target, now);
          if (keep) {
            const other = tx
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
              .limit(1)
              .get();
            if (!other) return { kind: "last_owner" };
          }
          const record = tx
            .update(apiTokens)
            .set({ revokedAt: now })
            .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
            .returning()
            .get();
          if (!record) throw new Error("revoke: the token changed inside its own transaction");
          writeAudit(tx, audit);
          return { kind: "revoked", record };
        }, IMMEDIATE),
      ),

    touchLastUsed: (updates) =>
      run(() => {
        if (updates.length === 0) return;
        const statement = statements().touchLastUsed;
        // One transaction: one fsync for the whole flush instead of one per token.
        db.transaction(() => {
          for (const update of updates) statement.run({ id: update.id, at: update.at });
        }, IMMEDIATE);
      }),
  };
}
