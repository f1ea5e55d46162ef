/**
 * Events on PostgreSQL (the EventRepo port): the batch insert as constant statements through
 * Bun's client (no drizzle on the ingest path), the reads likewise (event-reads.ts), and the
 * retention sweep's batched delete.
 */
import type { TransactionSQL } from "bun";
import { createIdGenerator, idFloor } from "../../domain/ids.ts";
import type { AlertEventInput } from "../../domain/incident-types.ts";
import type { EventRepo, InsertEventResult, NewEvent } from "../../domain/ports/store.ts";
import * as eventReads from "./event-reads.ts";
import {
  CHANGE_WIDTH,
  changeColumns,
  INCIDENT_WIDTH,
  insertChangeRows,
  lockFeed,
  planAlerts,
  writeIncidents,
} from "./incidents.ts";
import type { PostgresPool } from "./pool.ts";

/**
 * The event batch as constant statements over column arrays (`unnest`): one text whatever the
 * batch size, so each connection prepares it once, no per-batch query building, and no cap
 * from the protocol's 65,535 parameters. The payloads travel as ONE binary `bytea` (all of
 * them end to end) cut apart by offset and length on the server: a `bytea[]` parameter goes
 * as a text array literal, hex-encoded and quoted by the client and parsed back by the server.
 * Per row, one `bytea` costs both the client and the server a fraction of what drizzle's
 * multi-row VALUES or a `bytea[]` did (the benchmark's scenario 4, signed ingest on PostgreSQL).
 */
const EVENT_ROWS =
  "unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::int[], $8::text[], $10::text[]) with ordinality " +
  "as u(id, service_id, received_at, idempotency_key, payload_offset, payload_length, tenant_id, type, n)";
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
  "substring($7::bytea from u.payload_offset + 1 for u.payload_length), u.tenant_id, h.head - $9 + u.n, u.type";
const INSERT_EVENTS = `${FEED_BUMP}insert into events (id, service_id, received_at, idempotency_key, payload, tenant_id, position, type) select ${EVENT_VALUES} from ${EVENT_ROWS} cross join h`;
// ORDER BY the ordinality: rows go in batch order, so of two rows with one key the first wins.
const INSERT_EVENTS_SKIPPING_DUPLICATES = `${INSERT_EVENTS} order by u.n on conflict (service_id, idempotency_key) do nothing returning id`;
/**
 * A batch with alert events (§17): the same rows, each with the `incident_id` its alert event
 * opened or changed, decided before the INSERT (`insertWithAlerts`), so no event row is
 * written twice; the batch's incidents (`writeIncidents`, parameters 12 on) and their change
 * rows (`insertChangeRows`, after those) go in by the same statement, as CTEs. Only rows known to
 * go in are passed: no ON CONFLICT on events, a clash raises. `$9` reserves the events'
 * positions and then the incident changes' (head - $9 + n is the previous head + n; the
 * changes take the positions after the events').
 */
const INSERT_ALERT_EVENTS =
  `${FEED_BUMP.slice(0, -1)}, written as (${writeIncidents(12)}), changed as (${insertChangeRows(12 + INCIDENT_WIDTH)}) ` +
  "insert into events (id, service_id, received_at, idempotency_key, payload, tenant_id, position, type, incident_id) " +
  `select ${EVENT_VALUES}, u.incident_id from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::int[], $6::int[], ` +
  "$8::text[], $10::text[], $11::text[]) with ordinality " +
  "as u(id, service_id, received_at, idempotency_key, payload_offset, payload_length, tenant_id, type, incident_id, n) cross join h";
const FIRST_EVENTS_BY_KEY =
  "select id, service_id, idempotency_key, received_at from events " +
  "where (service_id, idempotency_key) in (select * from unnest($1::text[], $2::text[]))";

/** The ten parameters of INSERT_EVENTS for a batch. */
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
    batch.map((e) => e.type ?? null),
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

/** No incidents and no change rows: a batch whose alert events were all duplicates. */
const NO_ALERTS: unknown[][] = Array.from({ length: INCIDENT_WIDTH + CHANGE_WIDTH }, () => []);

function keyOf(serviceId: string, idempotencyKey: string | null): string {
  return JSON.stringify([serviceId, idempotencyKey]);
}

export function createEventRepo(pool: PostgresPool): Omit<EventRepo, "search"> {
  const { guard } = pool;
  const newIncidentId = createIdGenerator();

  /**
   * A batch with alert events, in one transaction that takes feed_head's lock FIRST. Every
   * batch on every instance takes that lock before its first row and holds it to commit, so
   * from here no other batch has rows in flight: one read of the batch's idempotency keys says
   * which events are duplicates, one read of the open incidents (planAlerts) and §17's rules say
   * what each alert event does, and the events then go in once, each with its `incident_id`,
   * with the incidents and their change rows in the same statement: a constant number of
   * statements whatever the batch holds (bench scenario 15).
   */
  async function insertWithAlerts(tx: TransactionSQL, batch: ReadonlyArray<NewEvent>): Promise<InsertEventResult[]> {
    const head = await lockFeed(tx);
    const firsts = new Map<string, { id: string; receivedAt: number }>();
    const keyed = batch.filter((e) => e.idempotencyKey !== null);
    if (keyed.length > 0) {
      const found: Array<{ id: string; service_id: string; idempotency_key: string; received_at: string }> =
        await tx.unsafe(FIRST_EVENTS_BY_KEY, [keyed.map((e) => e.serviceId), keyed.map((e) => e.idempotencyKey)]);
      for (const row of found) {
        firsts.set(keyOf(row.service_id, row.idempotency_key), { id: row.id, receivedAt: Number(row.received_at) });
      }
    }
    // The first of a key wins, in the batch as against what is stored.
    const results: InsertEventResult[] = [];
    const going: NewEvent[] = [];
    const alerts: AlertEventInput[] = [];
    const alertAt: number[] = [];
    for (const event of batch) {
      const { id: eventId, tenantId, serviceId, receivedAt, idempotencyKey, alert } = event;
      if (idempotencyKey !== null) {
        const first = firsts.get(keyOf(serviceId, idempotencyKey));
        if (first) {
          results.push({ kind: "duplicate", id: first.id, receivedAt: first.receivedAt });
          continue;
        }
        firsts.set(keyOf(serviceId, idempotencyKey), { id: eventId, receivedAt });
      }
      if (alert) {
        alerts.push({ eventId, tenantId, serviceId, receivedAt, alert });
        alertAt.push(results.length);
      }
      results.push({ kind: "inserted" });
      going.push(event);
    }
    const planned = alerts.length > 0 ? await planAlerts(tx, alerts, newIncidentId) : null;
    const incidentOf = new Map<string, string>();
    planned?.plan.outcomes.forEach((outcome, j) => {
      results[alertAt[j] as number] = { kind: "inserted", incident: outcome };
      if (outcome.incidentId !== null) incidentOf.set((alerts[j] as AlertEventInput).eventId, outcome.incidentId);
    });
    const changes = planned?.changes.length ?? 0;
    if (going.length > 0) {
      const parameters = eventParameters(going);
      parameters[8] = going.length + changes;
      parameters.push(going.map((e) => incidentOf.get(e.id) ?? null));
      if (planned) parameters.push(...planned.incidents, ...changeColumns(head + going.length + 1, planned.changes));
      else parameters.push(...NO_ALERTS);
      await tx.unsafe(INSERT_ALERT_EVENTS, parameters);
    }
    return results;
  }

  async function insertBatch(batch: ReadonlyArray<NewEvent>): Promise<InsertEventResult[]> {
    if (batch.length === 0) return [];

    // Without idempotency keys nothing can conflict, and without alert events nothing else is
    // written: one INSERT is already atomic and durable at commit, no explicit transaction
    // (two fewer round trips) needed.
    if (batch.every((e) => e.idempotencyKey === null && !e.alert)) {
      await pool.client().unsafe(INSERT_EVENTS, eventParameters(batch));
      return batch.map(() => ({ kind: "inserted" }));
    }

    if (batch.some((e) => e.alert)) return pool.client().begin((tx) => insertWithAlerts(tx, batch));

    return pool.client().begin(async (tx) => {
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

      const results = batch.map((event): InsertEventResult => {
        if (insertedIds.has(event.id)) return { kind: "inserted" };
        const first = firsts.get(keyOf(event.serviceId, event.idempotencyKey));
        // Throwing rolls the whole batch back, as the port promises.
        if (!first) throw new Error("insertBatch: an event was neither inserted nor a duplicate");
        return { kind: "duplicate", id: first.id, receivedAt: first.receivedAt };
      });

      return results;
    });
  }

  return {
    insertBatch: (batch) => guard(() => insertBatch(batch)),

    list: (serviceId, query) =>
      guard(async () =>
        eventReads.eventRecords(
          await (query.before === undefined
            ? pool.client().unsafe(eventReads.LIST_FIRST, [serviceId, query.limit])
            : pool.client().unsafe(eventReads.LIST_AFTER, [serviceId, query.limit, query.before])
          ).values(),
        ),
      ),

    feed: (tenantId, query) =>
      guard(async () =>
        eventReads.eventRecords(
          await (query.maxBytes === undefined
            ? query.serviceId === undefined
              ? pool.client().unsafe(eventReads.FEED, [tenantId, query.after, query.limit])
              : pool.client().unsafe(eventReads.FEED_OF_SERVICE, [tenantId, query.after, query.limit, query.serviceId])
            : query.serviceId === undefined
              ? pool.client().unsafe(eventReads.FEED_WITHIN, [tenantId, query.after, query.limit, query.maxBytes])
              : pool
                  .client()
                  .unsafe(eventReads.FEED_OF_SERVICE_WITHIN, [
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
        const [row] = await pool.client().unsafe(eventReads.FEED_HEAD, [tenantId]).values();
        return Number(row?.[0] ?? 0);
      }),

    get: (tenantId, id) =>
      guard(
        async () =>
          eventReads.eventRecords(await pool.client().unsafe(eventReads.ONE, [id, tenantId]).values())[0] ?? null,
      ),

    deleteOlderThan: (cutoff, batch) =>
      guard(async () => {
        const result = await pool.client().unsafe(DELETE_OLDER_THAN, [idFloor(cutoff), cutoff, batch]);
        return result.count as number;
      }),
  };
}
