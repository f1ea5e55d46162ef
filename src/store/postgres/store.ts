/**
 * The Store port on PostgreSQL through drizzle's bun-sql driver (Bun's built-in client and
 * pool). Several Intake instances may share the database, so every invariant is held by the
 * database itself: unique indexes, one transaction per batch, a tenant row lock for revocation.
 */
import { SQL as BunSQL } from "bun";
import { and, eq, gt, inArray, isNull, lt, ne, or, sql } from "drizzle-orm";
import { type BunSQLDatabase, drizzle } from "drizzle-orm/bun-sql";
import { ownerToKeep } from "../../domain/access.ts";
import type { AuditRecord } from "../../domain/audit.ts";
import { DomainError } from "../../domain/errors.ts";
import { idFloor } from "../../domain/ids.ts";
import type { InsertEventResult, NewEvent, RevokeOutcome, Store } from "../../domain/ports/store.ts";
import type { ServiceRecord, TenantRecord } from "../../domain/types.ts";
import { toAuditRow } from "../audit-rows.ts";
import {
  auditListStatement,
  auditRecord,
  type ListStatement,
  postgresPlaceholder,
  serviceListStatement,
  serviceSummary,
  tokenListStatement,
  tokenSummary,
} from "../list-rows.ts";
import { applyMigrations } from "../migrate.ts";
import { committedMigrations } from "../migrations.ts" with { type: "macro" };
import { withoutValues } from "../query-errors.ts";
import { rotationColumns, serviceColumns } from "../service-columns.ts";
import * as eventReads from "./event-reads.ts";
import { apiTokens, auditEvents, services, setupCodes, tenants } from "./schema.ts";

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Pool size; Bun's default (10) when omitted. */
  max?: number;
  /**
   * Bound on every store call (waiting for a connection, connecting, every statement, a
   * whole transaction): past it the call rejects as `unavailable` and the pool is replaced.
   * INTAKE_DATABASE_TIMEOUT_MS; default 5000. Migrations are not bounded.
   */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 5_000;

/** Inlined at bundle time (src/store/migrations.ts): no drizzle/ folder is read at run time. */
const MIGRATIONS = committedMigrations("postgres");

/** pg_advisory_lock key: instances starting together apply migrations one at a time. */
const MIGRATION_LOCK_KEY = 0x1a7a4e;

/** Errors Bun raises itself when it cannot reach, authenticate to, or keep a connection to the server. */
const CLIENT_UNAVAILABLE = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ERR_POSTGRES_TLS_NOT_AVAILABLE",
  "ERR_POSTGRES_TLS_UPGRADE_FAILED",
  "ERR_POSTGRES_AUTHENTICATION_FAILED_PBKDF",
  "ERR_POSTGRES_UNKNOWN_AUTHENTICATION_METHOD",
  "ERR_POSTGRES_UNSUPPORTED_AUTHENTICATION_METHOD",
  "ERR_POSTGRES_SASL_SIGNATURE_MISMATCH",
]);

/**
 * SQLSTATEs of a server that is there but cannot serve: connection exceptions (08), failed
 * login (28), missing database (3D000), out of connections/disk/memory (53), shutting down
 * or starting up (57P01..57P03).
 */
function isServerUnavailable(sqlState: string): boolean {
  return (
    sqlState.startsWith("08") ||
    sqlState.startsWith("28") ||
    sqlState.startsWith("53") ||
    sqlState === "3D000" ||
    sqlState === "57P01" ||
    sqlState === "57P02" ||
    sqlState === "57P03"
  );
}

function isUnavailable(error: unknown): boolean {
  // drizzle wraps driver errors in DrizzleQueryError; the client's error is its cause.
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (!(e instanceof BunSQL.PostgresError)) continue;
    if (CLIENT_UNAVAILABLE.has(e.code)) return true;
    if (e.errno !== undefined && isServerUnavailable(e.errno)) return true;
  }
  return false;
}

/** Connection-level failures become `unavailable`; no error leaves with a parameter in it. */
function mapError(error: unknown): unknown {
  if (error instanceof DomainError || !isUnavailable(error)) return withoutValues(error);
  return withoutValues(new DomainError("unavailable", "The store cannot be reached.", undefined, { cause: error }));
}

/** Migrations only: they may legitimately run long, so they are not bounded. */
async function unbounded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw mapError(error);
  }
}

type Transaction = Parameters<Parameters<BunSQLDatabase["transaction"]>[0]>[0];

/** Inside the change's own transaction: a failure here rolls the change back with it. */
async function writeAudit(tx: Transaction, record: AuditRecord | null): Promise<void> {
  if (record) await tx.insert(auditEvents).values(toAuditRow(record));
}

function buildStatements(db: BunSQLDatabase) {
  const p = sql.placeholder;
  // Built once; Bun's client also keeps a server-side prepared statement per connection for each text.
  return {
    tenantGet: db
      .select()
      .from(tenants)
      .where(eq(tenants.id, p("id")))
      .prepare("tenant_get"),
    tokenByDigest: db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.digest, p("digest")))
      .prepare("token_by_digest"),
    serviceById: db
      .select()
      .from(services)
      .where(eq(services.id, p("id")))
      .prepare("service_by_id"),
  };
}

/**
 * The event batch as constant statements over column arrays (`unnest`): one text whatever the
 * batch size, so each connection prepares it once, no per-batch query building, and no cap
 * from the protocol's 65,535 parameters. The payloads travel as ONE binary `bytea` (all of
 * them end to end) cut apart by offset and length on the server: a `bytea[]` parameter goes
 * as a text array literal, hex-encoded and quoted by the client and parsed back by the server.
 * Measured at the store (batches of 128 rows of 1 KiB), per row: drizzle's
 * multi-row VALUES 24–26 µs of client CPU; `bytea[]` 11 µs client + 45–49 µs server; one
 * `bytea` 4–5 µs client + 23–27 µs server (bench/README.md, scenario 4).
 */
const EVENT_ROWS =
  "unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::int[], $8::text[]) with ordinality " +
  "as u(id, service_id, received_at, idempotency_key, payload_offset, payload_length, tenant_id, n)";
/**
 * The batch's first write bumps feed_head by its size: the row lock it takes is held until
 * commit, so concurrent batches (on any instance) commit one after another in position
 * order, and a reader's snapshot always holds a prefix of the positions (docs/feed.md). As a
 * CTE of the INSERT, the batch stays one statement (one round trip, no explicit transaction
 * when no key can conflict); the INSERT reads `h`, so the lock is taken before any row goes in.
 */
const FEED_BUMP =
  "with h as (insert into feed_head (id, head) values (1, $9) " +
  "on conflict (id) do update set head = feed_head.head + excluded.head returning head) ";
const EVENT_VALUES =
  "u.id, u.service_id, u.received_at, u.idempotency_key, " +
  "substring($7::bytea from u.payload_offset + 1 for u.payload_length), u.tenant_id, h.head - $9 + u.n";
const INSERT_EVENTS = `${FEED_BUMP}insert into events (id, service_id, received_at, idempotency_key, payload, tenant_id, position) select ${EVENT_VALUES} from ${EVENT_ROWS} cross join h`;
// ORDER BY the ordinality: rows go in batch order, so of two rows with one key the first wins.
const INSERT_EVENTS_SKIPPING_DUPLICATES = `${INSERT_EVENTS} order by u.n on conflict (service_id, idempotency_key) do nothing returning id`;
const FIRST_EVENTS_BY_KEY =
  "select id, service_id, idempotency_key, received_at from events " +
  "where (service_id, idempotency_key) in (select * from unnest($1::text[], $2::text[]))";

/** The nine parameters of INSERT_EVENTS for a batch. */
function eventParameters(batch: ReadonlyArray<NewEvent>): unknown[] {
  const offsets: number[] = [];
  const lengths: number[] = [];
  let offset = 0;
  for (const e of batch) {
    offsets.push(offset);
    lengths.push(e.payload.byteLength);
    offset += e.payload.byteLength;
  }
  return [
    batch.map((e) => e.id),
    batch.map((e) => e.serviceId),
    batch.map((e) => e.receivedAt),
    batch.map((e) => e.idempotencyKey),
    offsets,
    lengths,
    Buffer.concat(batch.map((e) => e.payload)),
    batch.map((e) => e.tenantId),
    batch.length,
  ];
}

/**
 * Retention: one short statement per batch. SKIP LOCKED lets two instances sweep at once
 * without queueing on each other's rows; `id < idFloor(cutoff)` walks the primary key.
 * Exported for bench/retention-batch.ts, which lists the locks one batch holds.
 */
export const DELETE_OLDER_THAN =
  "delete from events where id in (select id from events where id < $1 and received_at < $2 " +
  "order by id limit $3 for update skip locked)";

/**
 * Connects lazily: the first query opens the pool. Every method rejects with
 * `DomainError("unavailable")` when the server cannot be reached. Call `migrate()` first.
 */
export function createPostgresStore(options: PostgresStoreOptions): Store {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const openPool = () =>
    new BunSQL(options.url, {
      ...(options.max === undefined ? {} : { max: options.max }),
      // Whole seconds only; the operation bound below is what callers actually see.
      connectionTimeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
      connection: {
        application_name: "intake",
        // A commit (the 202 of an ingest) must mean durable, whatever the server's default says.
        synchronous_commit: "on",
        // A transaction this client gave up on (it overran timeoutMs behind a partition) must
        // not keep its row locks on the server until TCP notices, hours later: the server ends
        // a session idle inside a transaction past twice the bound.
        idle_in_transaction_session_timeout: String(2 * timeoutMs),
      },
    });
  // Replaced together by `replacePool`; every method reads them when it starts.
  let client = openPool();
  let db = drizzle({ client });
  let statements = buildStatements(db);
  let closed = false;

  /**
   * A call that overran its bound left a connection in an unknown state: a silently dropped
   * network (no RST) keeps it, and every connection that tries it, waiting for TCP's own
   * give-up, minutes later. Replace the whole pool, once per generation: the old one is closed
   * at once, which rejects what still runs on it (an open transaction is rolled back by the
   * server when it sees the connection go), and the next call connects afresh, so the store
   * recovers as soon as the network does. docs/store.md.
   */
  const replacePool = (stale: BunSQL) => {
    if (closed || client !== stale) return;
    client = openPool();
    db = drizzle({ client });
    statements = buildStatements(db);
    stale.close({ timeout: 0 }).catch(() => {});
  };

  /** Bounds the call, translates connection-level failures, and scrubs values from errors. */
  async function guard<T>(operation: () => Promise<T>): Promise<T> {
    const generation = client;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const overran = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        replacePool(generation);
        reject(new DomainError("unavailable", "The store did not answer in time."));
      }, timeoutMs);
    });
    try {
      return await Promise.race([operation(), overran]);
    } catch (error) {
      throw mapError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A list page (list-rows.ts) through Bun's client, as positional values: its texts are
   * constant per combination of filters, so each connection prepares each once.
   */
  async function listRows(statement: ListStatement): Promise<unknown[][]> {
    return (await client.unsafe(statement.text, statement.params).values()) as unknown[][];
  }

  async function insertBatch(batch: ReadonlyArray<NewEvent>): Promise<InsertEventResult[]> {
    if (batch.length === 0) return [];

    // Without idempotency keys nothing can conflict: one INSERT is already atomic and durable
    // at commit, no explicit transaction (two fewer round trips) needed.
    if (batch.every((e) => e.idempotencyKey === null)) {
      await client.unsafe(INSERT_EVENTS, eventParameters(batch));
      return batch.map(() => ({ kind: "inserted" }));
    }

    return client.begin(async (tx) => {
      const inserted: Array<{ id: string }> = await tx.unsafe(
        INSERT_EVENTS_SKIPPING_DUPLICATES,
        eventParameters(batch),
      );
      const insertedIds = new Set(inserted.map((row) => row.id));

      // Only a keyed row can be skipped: any other conflict (an id clash) raised instead.
      const skipped = new Map<string, { serviceId: string; idempotencyKey: string }>();
      for (const e of batch) {
        if (insertedIds.has(e.id) || e.idempotencyKey === null) continue;
        skipped.set(keyOf(e.serviceId, e.idempotencyKey), { serviceId: e.serviceId, idempotencyKey: e.idempotencyKey });
      }

      // A separate statement takes a fresh snapshot (READ COMMITTED): it sees the row of a
      // concurrent batch whose commit the INSERT waited for, and this batch's own rows.
      const firsts = new Map<string, { id: string; receivedAt: number }>();
      if (skipped.size > 0) {
        const keys = [...skipped.values()];
        const found: Array<{ id: string; service_id: string; idempotency_key: string; received_at: string }> =
          await tx.unsafe(FIRST_EVENTS_BY_KEY, [keys.map((k) => k.serviceId), keys.map((k) => k.idempotencyKey)]);
        // bigint columns come back from the raw client as strings; epoch ms are far below 2^53.
        for (const row of found) {
          firsts.set(keyOf(row.service_id, row.idempotency_key), { id: row.id, receivedAt: Number(row.received_at) });
        }
      }

      return batch.map((event): InsertEventResult => {
        if (insertedIds.has(event.id)) return { kind: "inserted" };
        const first = firsts.get(keyOf(event.serviceId, event.idempotencyKey));
        // Throwing rolls the whole batch back, as the port promises.
        if (!first) throw new Error("insertBatch: an event was neither inserted nor a duplicate");
        return { kind: "duplicate", id: first.id, receivedAt: first.receivedAt };
      });
    });
  }

  return {
    dialect: "postgres",

    tenants: {
      get: (id) => guard(async () => (await statements.tenantGet.execute({ id }))[0] ?? null),
      any: () => guard(async () => (await db.select({ id: tenants.id }).from(tenants).limit(1)).length > 0),
      rename: (id, name, audit) =>
        guard(() =>
          db.transaction(async (tx): Promise<TenantRecord | null> => {
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
          const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(tenants).where(eq(tenants.name, name));
          return row?.n ?? 0;
        }),
    },

    tokens: {
      findByDigest: (digest) => guard(async () => (await statements.tokenByDigest.execute({ digest }))[0] ?? null),

      get: (tenantId, id) =>
        guard(
          async () =>
            (
              await db
                .select()
                .from(apiTokens)
                .where(and(eq(apiTokens.tenantId, tenantId), eq(apiTokens.id, id)))
            )[0] ?? null,
        ),

      list: (tenantId, query) =>
        guard(async () => (await listRows(tokenListStatement(postgresPlaceholder, tenantId, query))).map(tokenSummary)),

      insert: (record, audit) =>
        guard(() =>
          db.transaction(async (tx) => {
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
          db.transaction(async (tx): Promise<RevokeOutcome> => {
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
          await db
            .update(apiTokens)
            .set({ lastUsedAt: newTime })
            .where(
              and(inArray(apiTokens.id, ids), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, newTime))),
            );
        }),
    },

    services: {
      insert: (record, audit) =>
        guard(() =>
          db.transaction(async (tx) => {
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
              await db
                .select()
                .from(services)
                .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
            )[0] ?? null,
        ),

      getById: (id) => guard(async () => (await statements.serviceById.execute({ id }))[0] ?? null),

      list: (tenantId, query) =>
        guard(async () =>
          (await listRows(serviceListStatement(postgresPlaceholder, tenantId, query))).map(serviceSummary),
        ),

      update: (tenantId, id, changes, now, audit) =>
        guard(() =>
          db.transaction(async (tx): Promise<ServiceRecord | null> => {
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
          db.transaction(async (tx): Promise<ServiceRecord | null> => {
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
          db.transaction(async (tx) => {
            const rows = await tx
              .delete(services)
              .where(and(eq(services.tenantId, tenantId), eq(services.id, id)))
              .returning({ id: services.id });
            if (rows.length === 0) return false;
            await writeAudit(tx, audit);
            return true;
          }),
        ),
    },

    events: {
      insertBatch: (batch) => guard(() => insertBatch(batch)),
      // Bun's client directly, not drizzle (event-reads.ts).
      list: (serviceId, query) =>
        guard(async () =>
          eventReads.eventRecords(
            await (query.before === undefined
              ? client.unsafe(eventReads.LIST_FIRST, [serviceId, query.limit])
              : client.unsafe(eventReads.LIST_AFTER, [serviceId, query.limit, query.before])
            ).values(),
          ),
        ),

      feed: (tenantId, query) =>
        guard(async () =>
          eventReads.eventRecords(
            await (query.maxBytes === undefined
              ? query.serviceId === undefined
                ? client.unsafe(eventReads.FEED, [tenantId, query.after, query.limit])
                : client.unsafe(eventReads.FEED_OF_SERVICE, [tenantId, query.after, query.limit, query.serviceId])
              : query.serviceId === undefined
                ? client.unsafe(eventReads.FEED_WITHIN, [tenantId, query.after, query.limit, query.maxBytes])
                : client.unsafe(eventReads.FEED_OF_SERVICE_WITHIN, [
                    tenantId,
                    query.after,
                    query.limit,
                    query.maxBytes,
                    query.serviceId,
                  ])
            ).values(),
          ),
        ),

      feedHead: (tenantId) =>
        guard(async () => {
          const [row] = await client.unsafe(eventReads.FEED_HEAD, [tenantId]).values();
          return Number(row?.[0] ?? 0);
        }),

      get: (tenantId, id) =>
        guard(
          async () => eventReads.eventRecords(await client.unsafe(eventReads.ONE, [id, tenantId]).values())[0] ?? null,
        ),

      deleteOlderThan: (cutoff, batch) =>
        guard(async () => {
          const result = await client.unsafe(DELETE_OLDER_THAN, [idFloor(cutoff), cutoff, batch]);
          return result.count as number;
        }),
    },

    audit: {
      list: (tenantId, query) =>
        guard(async () =>
          (await listRows(auditListStatement(postgresPlaceholder, tenantId, query))).map((row) =>
            auditRecord(row, tenantId),
          ),
        ),

      // Oldest first, a bounded batch per statement: each call holds its row locks briefly.
      deleteOlderThan: (cutoff, batchSize) =>
        guard(async () => {
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
    },

    createTenant: (tenant, firstToken, audit) =>
      guard(() =>
        db.transaction(async (tx) => {
          await tx.insert(tenants).values(tenant);
          await tx.insert(apiTokens).values(firstToken);
          for (const record of audit) await writeAudit(tx, record);
        }),
      ),

    setupCodes: {
      insert: (record) =>
        guard(async () => {
          await db.insert(setupCodes).values(record);
        }),
    },

    redeemSetupCode: (digest, now, tenant, firstToken, audit) =>
      guard(() =>
        db.transaction(async (tx) => {
          // A conditional UPDATE claims the code: a concurrent redemption waits on the row lock,
          // then finds used_at set and claims nothing (READ COMMITTED re-checks the row).
          const claimed = await tx
            .update(setupCodes)
            .set({ usedAt: now, tenantId: tenant.id })
            .where(and(eq(setupCodes.digest, digest), isNull(setupCodes.usedAt), gt(setupCodes.expiresAt, now)))
            .returning({ digest: setupCodes.digest });
          if (claimed.length === 0) return false;
          await tx.insert(tenants).values(tenant);
          await tx.insert(apiTokens).values(firstToken);
          for (const record of audit) await writeAudit(tx, record);
          return true;
        }),
      ),

    migrate: () =>
      unbounded(async () => {
        // The advisory lock is per session, so the lock, the migration and the unlock must
        // share one connection: reserve it from the pool.
        const reserved = await client.reserve();
        try {
          await reserved.unsafe("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
          try {
            await applyMigrations(drizzle({ client: reserved }), MIGRATIONS);
          } finally {
            await reserved.unsafe("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
          }
        } finally {
          await reserved.release();
        }
      }),

    // Bounded like any call: a partitioned server must not hold a drain forever.
    close: async () => {
      closed = true;
      await client.close({ timeout: Math.max(1, Math.ceil(timeoutMs / 1000)) });
    },
  };
}

function keyOf(serviceId: string, idempotencyKey: string | null): string {
  return JSON.stringify([serviceId, idempotencyKey]);
}
