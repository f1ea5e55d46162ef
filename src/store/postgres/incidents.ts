/**
 * Incidents on PostgreSQL (the IncidentRepo port, docs/incidents.md), as raw statements
 * through Bun's client, so that an ingest batch's alert effects (`planAlerts`, `writeIncidents`)
 * run on its own transaction. A batch's effects are a constant number of statements whatever
 * the number of events or incidents (column arrays through `unnest`): they run while the
 * batch holds feed_head's lock, so their round trips are everyone's wait (bench scenario 15).
 *
 * Concurrency, across any number of instances: every transaction that changes an incident
 * takes feed_head's row lock FIRST (an event batch does as its first write; this module's
 * transactions with `LOCK_FEED`), and holds it to commit. So incident changes are serialized
 * with each other and with event batches, always in the same lock order (feed_head, then
 * incident rows: no deadlock), each reads the open incident after the previous one committed
 * (READ COMMITTED: every statement takes a fresh snapshot), and their positions come from the
 * same counter in commit order. The partial unique index `incidents_open_key_unique` enforces
 * one open incident per (service, dedup_key) in the table whatever a future code path does.
 */
import type { TransactionSQL } from "bun";
import type { AuditRecord } from "../../domain/audit-types.ts";
import { createIdGenerator } from "../../domain/ids.ts";
import {
  type AlertEventInput,
  type AlertOutcome,
  type IncidentRecord,
  SEVERITIES,
  type Severity,
  type StreamChange,
} from "../../domain/incident-types.ts";
import {
  type AlertBatchPlan,
  acknowledgeByHand,
  type ManualOutcome,
  planAlertBatch,
  resolveByHand,
} from "../../domain/incidents.ts";
import type { IncidentActionOutcome, IncidentRepo } from "../../domain/ports/store.ts";
import { toAuditRow } from "../audit-rows.ts";
import {
  changeRecord,
  INCIDENT_COLUMNS,
  INCIDENT_UPDATE_COLUMNS,
  incidentListStatement,
  incidentRecord,
  incidentUpdateValues,
  incidentValues,
  snapshot,
  updateIncidentStatement,
} from "../incident-rows.ts";
import { postgresPlaceholder } from "../list-rows.ts";
import * as eventReads from "./event-reads.ts";
import type { PostgresPool } from "./pool.ts";

/**
 * Takes feed_head's row lock without moving it (an upsert locks the row whatever it sets).
 * Redundant inside an event batch, whose INSERT already holds it; required first in every
 * other transaction that changes an incident.
 */
const LOCK_FEED =
  "insert into feed_head (id, head) values (1, 0) on conflict (id) do update set head = feed_head.head returning head";
/** Reserves `$1` positions; the lock is already held, so they are in commit order. */
const BUMP_FEED = "update feed_head set head = head + $1 where id = 1 returning head";

/**
 * The open incidents of a batch's keys, locked. Index-driven by its shape, whatever the table's
 * statistics (a fresh table has none, and at a few thousand rows a join over the keys reads the
 * whole table): one probe of `incidents_open_key_unique` per key, through a LATERAL subquery
 * that its LIMIT keeps from being flattened into a join.
 */
export const OPEN_BY_KEYS =
  `select i.* from unnest($1::text[], $2::text[]) as k(service_id, dedup_key) cross join lateral ` +
  `(select ${INCIDENT_COLUMNS} from incidents where service_id = k.service_id and dedup_key = k.dedup_key ` +
  "and status <> 'resolved' limit 1 for update) i";
/** `$from::type[], …` for column arrays passed from parameter `from` on. */
function arrays(types: readonly string[], from: number): string {
  return types.map((type, i) => `$${from + i}::${type}[]`).join(", ");
}

const INCIDENT_TYPES = [
  ...["text", "text", "text", "text", "text", "text", "text", "text", "int"],
  ...["bigint", "bigint", "bigint", "bigint", "text", "text", "text", "text"],
];
const CHANGE_TYPES = ["bigint", "text", "text", "text", "text", "bigint", "text"];
/** Parameters of `writeIncidents`, then of `insertChangeRows`: one array per column. */
export const INCIDENT_WIDTH = INCIDENT_TYPES.length;
export const CHANGE_WIDTH = CHANGE_TYPES.length;

/**
 * A batch's incidents, the ones that existed and the new ones, in one statement over column
 * arrays from parameter `from` on, whatever their number (bench scenario 15): an upsert on the
 * primary key, so that an existing row is found through `incidents_pkey` by the statement's
 * shape (an UPDATE … FROM joining the arrays to the table is the planner's choice, and on a
 * few thousand rows, a fresh table's size, it chose a seq scan of all of them). The existing
 * rows come first in the arrays, and the rows go in in that order: an open incident the batch
 * resolved is closed before the key's next one goes in (incidents_open_key_unique). A conflict
 * on any other unique index raises. Also a CTE of the ingest batch's event INSERT
 * (postgres/events.ts).
 */
export function writeIncidents(from: number): string {
  const set = INCIDENT_UPDATE_COLUMNS.map((column) => `${column} = excluded.${column}`).join(", ");
  return (
    `insert into incidents (${INCIDENT_COLUMNS}) select * from unnest(${arrays(INCIDENT_TYPES, from)}) ` +
    `on conflict (id) do update set ${set}`
  );
}
/**
 * A batch's change rows over column arrays from parameter `from` on. Their foreign keys are
 * checked at the end of the statement, when the batch's new incidents are in.
 */
export function insertChangeRows(from: number): string {
  return (
    "insert into incident_changes (position, tenant_id, service_id, incident_id, change, occurred_at, incident) " +
    `select * from unnest(${arrays(CHANGE_TYPES, from)})`
  );
}
const WRITE_ALERTS = `with written as (${writeIncidents(1)}) ${insertChangeRows(INCIDENT_WIDTH + 1)}`;
const INSERT_CHANGES = insertChangeRows(1);
const UPDATE_INCIDENT = updateIncidentStatement(postgresPlaceholder);
const LINK_EVENTS =
  "update events set incident_id = u.incident_id from unnest($1::text[], $2::text[]) as u(id, incident_id) " +
  "where events.id = u.id";
const ONE = `select ${INCIDENT_COLUMNS} from incidents where id = $1 and tenant_id = $2`;
const ONE_FOR_UPDATE = `${ONE} for update`;
const INSERT_AUDIT =
  "insert into audit_events (id, tenant_id, occurred_at, action, actor_type, actor_id, target_type, target_id, request_id, changes) " +
  "values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)";
/**
 * Auto-resolve's read: per monitored service with a deadline, its open incidents through
 * `incidents_open_key_unique` (LATERAL with a LIMIT: a probe per service, never a scan of the
 * incidents, which have no index over `last_event_at`, see schema.ts), the oldest due first.
 */
export const DUE =
  `select i.* from services s cross join lateral (select ${INCIDENT_COLUMNS} from incidents ` +
  "where service_id = s.id and status <> 'resolved' and last_event_at <= $1 - s.incident_auto_resolve_seconds * 1000 " +
  "order by last_event_at limit $2 for update) i " +
  "where s.incident_auto_resolve_seconds is not null and s.is_monitored order by i.last_event_at limit $2";
const EVENT_RECORD =
  "select id, tenant_id, service_id, received_at, idempotency_key, payload, position, type, incident_id from events " +
  "where incident_id = $1 and tenant_id = $2";
const EVENTS_FIRST = `${EVENT_RECORD} order by id limit $3`;
const EVENTS_AFTER = `${EVENT_RECORD} and id > $4 order by id limit $3`;
const CHANGES = "select position, change, incident from incident_changes where tenant_id = $1 and position > $2";
const CHANGES_ALL = `${CHANGES} order by position limit $3`;
const CHANGES_OF_SERVICE = `${CHANGES} and service_id = $4 order by position limit $3`;
const CHANGES_HEAD = "select max(position) from incident_changes where tenant_id = $1";
const COUNT_OPEN = "select severity, count(*) from incidents where status <> 'resolved' group by severity";
const DELETE_RESOLVED =
  "delete from incidents where id in (select id from incidents where status = 'resolved' and resolved_at < $1 " +
  "order by resolved_at limit $2 for update skip locked)";

/** Rows of positional values → one array per column (the `unnest` statements' parameters). */
function columns(rows: ReadonlyArray<ReadonlyArray<unknown>>, width: number): unknown[][] {
  const out = Array.from({ length: width }, (): unknown[] => []);
  for (const row of rows) {
    for (let c = 0; c < width; c++) (out[c] as unknown[]).push(row[c]);
  }
  return out;
}

type PlannedChanges = ReadonlyArray<{ change: StreamChange; incident: IncidentRecord; at: number }>;

/** The change rows' column arrays, at positions `first`, `first + 1`, … */
export function changeColumns(first: number, changes: PlannedChanges): unknown[][] {
  return [
    changes.map((_, i) => first + i),
    changes.map((c) => c.incident.tenantId),
    changes.map((c) => c.incident.serviceId),
    changes.map((c) => c.incident.id),
    changes.map((c) => c.change),
    changes.map((c) => c.at),
    changes.map((c) => snapshot(c.incident)),
  ];
}

/** The change rows at positions `first`, `first + 1`, …, already reserved from feed_head. */
async function insertChanges(tx: TransactionSQL, first: number, changes: PlannedChanges): Promise<void> {
  if (changes.length > 0) await tx.unsafe(INSERT_CHANGES, changeColumns(first, changes));
}

/** Reserves `count` positions from feed_head (whose lock the transaction holds): the first. */
async function reserve(tx: TransactionSQL, count: number): Promise<number> {
  const [row] = await tx.unsafe(BUMP_FEED, [count]).values();
  if (!row) throw new Error("incidents: feed_head has no row");
  return Number(row[0]) - count + 1;
}

/** Positions for `changes` from feed_head (whose lock the transaction holds), then their rows. */
async function writeChanges(tx: TransactionSQL, changes: PlannedChanges): Promise<void> {
  if (changes.length === 0) return;
  await insertChanges(tx, await reserve(tx, changes.length), changes);
}

/** What a batch's alert events do, read and decided under feed_head's lock, not yet written. */
export interface PlannedAlerts {
  plan: AlertBatchPlan;
  /** The plan's stream changes, each with the time it happened. */
  changes: PlannedChanges;
  /** The batch's incidents as `writeIncidents`' column arrays: those that existed, then the new. */
  incidents: unknown[][];
}

/** Takes feed_head's row lock (held to commit) and returns the head, unmoved. */
export async function lockFeed(tx: TransactionSQL): Promise<number> {
  const [row] = await tx.unsafe(LOCK_FEED).values();
  if (!row) throw new Error("incidents: feed_head has no row");
  return Number(row[0]);
}

/**
 * The first half of a batch's alert effects: the open incidents of the batch's keys, read in
 * one statement (FOR UPDATE), and §17's rules applied to them in event order
 * (domain/incidents.ts planAlertBatch). Call it with feed_head's lock held (`lockFeed`), with
 * the alert events that go in (never duplicates), in batch order.
 */
export async function planAlerts(
  tx: TransactionSQL,
  events: ReadonlyArray<AlertEventInput>,
  newId: () => string,
): Promise<PlannedAlerts> {
  const keys = new Map<string, { serviceId: string; dedupKey: string }>();
  for (const { serviceId, alert } of events) {
    keys.set(`${serviceId}\u0000${alert.dedupKey}`, { serviceId, dedupKey: alert.dedupKey });
  }
  const wanted = [...keys.values()];
  const rows: unknown[][] = await tx
    .unsafe(OPEN_BY_KEYS, [wanted.map((k) => k.serviceId), wanted.map((k) => k.dedupKey)])
    .values();
  const plan = planAlertBatch(events, rows.map(incidentRecord), newId);
  const changes = plan.changes.map(({ change, incident }) => ({ change, incident, at: incident.lastEventAt }));
  const ordered = [...plan.incidents.filter((i) => !i.isNew), ...plan.incidents.filter((i) => i.isNew)];
  return {
    plan,
    changes,
    incidents: columns(
      ordered.map((i) => incidentValues(i.incident)),
      INCIDENT_WIDTH,
    ),
  };
}

/**
 * The alert effects of events already stored (the port's `applyAlerts`): feed_head's lock,
 * the plan, the incidents and change rows, and each event's `incident_id` set. Ingest does
 * not come here: it plans before it inserts and writes each event with its `incident_id`
 * (postgres/events.ts), so no event row is written twice. A throw must roll it all back.
 */
export async function applyAlertBatch(
  tx: TransactionSQL,
  events: ReadonlyArray<AlertEventInput>,
  newId: () => string,
): Promise<AlertOutcome[]> {
  if (events.length === 0) return [];
  await lockFeed(tx);
  const planned = await planAlerts(tx, events, newId);
  const { changes, plan } = planned;
  const first = changes.length > 0 ? await reserve(tx, changes.length) : 0;
  if (plan.incidents.length > 0)
    await tx.unsafe(WRITE_ALERTS, [...planned.incidents, ...changeColumns(first, changes)]);
  const linked = plan.outcomes.flatMap((outcome, i) =>
    outcome.incidentId === null
      ? []
      : [{ eventId: (events[i] as AlertEventInput).eventId, incidentId: outcome.incidentId }],
  );
  if (linked.length > 0) {
    await tx.unsafe(LINK_EVENTS, [linked.map((l) => l.eventId), linked.map((l) => l.incidentId)]);
  }
  return plan.outcomes;
}

async function insertAudit(tx: TransactionSQL, record: AuditRecord): Promise<void> {
  const row = toAuditRow(record);
  await tx.unsafe(INSERT_AUDIT, [
    row.id,
    row.tenantId,
    row.occurredAt,
    row.action,
    row.actorType,
    row.actorId,
    row.targetType,
    row.targetId,
    row.requestId,
    row.changes === null ? null : JSON.stringify(row.changes),
  ]);
}

export function createIncidentRepo(pool: PostgresPool, newId: () => string = createIdGenerator()): IncidentRepo {
  const { guard } = pool;

  function byHand(
    tenantId: string,
    id: string,
    decide: (incident: IncidentRecord) => ManualOutcome,
    now: number,
    audit: AuditRecord,
  ): Promise<IncidentActionOutcome> {
    return guard(async () => {
      // Nothing to change (unknown, or already in the asked-for state): answered without a lock.
      const [current] = await pool.client().unsafe(ONE, [id, tenantId]).values();
      if (!current) return { kind: "not_found" };
      const first = decide(incidentRecord(current));
      if (first.kind !== "changed") return first;
      return pool.client().begin(async (tx): Promise<IncidentActionOutcome> => {
        await tx.unsafe(LOCK_FEED);
        const [row] = await tx.unsafe(ONE_FOR_UPDATE, [id, tenantId]).values();
        if (!row) return { kind: "not_found" };
        const outcome = decide(incidentRecord(row));
        if (outcome.kind !== "changed") return outcome;
        await tx.unsafe(UPDATE_INCIDENT, incidentUpdateValues(outcome.incident));
        const change: StreamChange = outcome.incident.status === "resolved" ? "resolved" : "acknowledged";
        await writeChanges(tx, [{ change, incident: outcome.incident, at: now }]);
        await insertAudit(tx, audit);
        return outcome;
      });
    });
  }

  return {
    applyAlerts: (events) => guard(() => pool.client().begin((tx) => applyAlertBatch(tx, events, newId))),

    get: (tenantId, id) =>
      guard(async () => {
        const [row] = await pool.client().unsafe(ONE, [id, tenantId]).values();
        return row ? incidentRecord(row) : null;
      }),

    list: (tenantId, query) =>
      guard(async () =>
        (await pool.listRows(incidentListStatement(postgresPlaceholder, tenantId, query))).map(incidentRecord),
      ),

    events: (tenantId, incidentId, query) =>
      guard(async () =>
        eventReads.eventRecords(
          await (query.after === undefined
            ? pool.client().unsafe(EVENTS_FIRST, [incidentId, tenantId, query.limit])
            : pool.client().unsafe(EVENTS_AFTER, [incidentId, tenantId, query.limit, query.after])
          ).values(),
        ),
      ),

    acknowledge: (tenantId, id, by, now, audit) =>
      byHand(tenantId, id, (incident) => acknowledgeByHand(incident, by, now), now, audit),

    resolve: (tenantId, id, by, now, audit) =>
      byHand(tenantId, id, (incident) => resolveByHand(incident, by, now), now, audit),

    // One transaction behind feed_head's lock: a second instance's sweep waits, then reads the
    // incidents this one resolved as resolved, so each is resolved (and told) once.
    autoResolveDue: (now, limit) =>
      guard(() =>
        pool.client().begin(async (tx) => {
          await tx.unsafe(LOCK_FEED);
          const rows: unknown[][] = await tx.unsafe(DUE, [now, limit]).values();
          const resolved: IncidentRecord[] = [];
          for (const row of rows) {
            const outcome = resolveByHand(incidentRecord(row), { type: "auto" }, now);
            if (outcome.kind !== "changed") continue;
            await tx.unsafe(UPDATE_INCIDENT, incidentUpdateValues(outcome.incident));
            resolved.push(outcome.incident);
          }
          await writeChanges(
            tx,
            resolved.map((incident) => ({ change: "resolved", incident, at: now })),
          );
          return resolved;
        }),
      ),

    changes: (tenantId, query) =>
      guard(async () => {
        const rows: unknown[][] = await (query.serviceId === undefined
          ? pool.client().unsafe(CHANGES_ALL, [tenantId, query.after, query.limit])
          : pool.client().unsafe(CHANGES_OF_SERVICE, [tenantId, query.after, query.limit, query.serviceId])
        ).values();
        return rows.map(changeRecord);
      }),

    changesHead: (tenantId) =>
      guard(async () => {
        const [row] = await pool.client().unsafe(CHANGES_HEAD, [tenantId]).values();
        return Number(row?.[0] ?? 0);
      }),

    countOpen: () =>
      guard(async () => {
        const counts = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
        const rows: unknown[][] = await pool.client().unsafe(COUNT_OPEN).values();
        for (const [severity, count] of rows) counts[severity as Severity] = Number(count);
        return counts;
      }),

    deleteResolvedBefore: (cutoff, batch) =>
      guard(async () => (await pool.client().unsafe(DELETE_RESOLVED, [cutoff, batch])).count as number),
  };
}
