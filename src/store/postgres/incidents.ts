/**
 * Incidents on PostgreSQL (the IncidentRepo port, docs/incidents.md), as raw statements
 * through Bun's client, so that `applyAlertBatch` runs on the ingest batch's own transaction.
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
import { acknowledgeByHand, type ManualOutcome, planAlertBatch, resolveByHand } from "../../domain/incidents.ts";
import type { IncidentActionOutcome, IncidentRepo } from "../../domain/ports/store.ts";
import { toAuditRow } from "../audit-rows.ts";
import {
  changeRecord,
  INCIDENT_COLUMNS,
  incidentColumnsOf,
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

const OPEN_BY_KEYS =
  `select ${INCIDENT_COLUMNS} from incidents ` +
  "where (service_id, dedup_key) in (select * from unnest($1::text[], $2::text[])) and status <> 'resolved' for update";
const INSERT_INCIDENT = `insert into incidents (${INCIDENT_COLUMNS}) values (${INCIDENT_COLUMNS.split(", ")
  .map((_, i) => `$${i + 1}`)
  .join(", ")})`;
const UPDATE_INCIDENT = updateIncidentStatement(postgresPlaceholder);
const INSERT_CHANGES =
  "insert into incident_changes (position, tenant_id, service_id, incident_id, change, occurred_at, incident) " +
  "select * from unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])";
const LINK_EVENTS =
  "update events set incident_id = u.incident_id from unnest($1::text[], $2::text[]) as u(id, incident_id) " +
  "where events.id = u.id";
const ONE = `select ${INCIDENT_COLUMNS} from incidents where id = $1 and tenant_id = $2`;
const ONE_FOR_UPDATE = `${ONE} for update`;
const INSERT_AUDIT =
  "insert into audit_events (id, tenant_id, occurred_at, action, actor_type, actor_id, target_type, target_id, request_id, changes) " +
  "values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)";
const DUE =
  `select ${incidentColumnsOf("i")} from services s join incidents i on i.service_id = s.id ` +
  "where s.incident_auto_resolve_seconds is not null and s.is_monitored and i.status <> 'resolved' " +
  "and i.last_event_at <= $1 - s.incident_auto_resolve_seconds * 1000 order by i.last_event_at limit $2 for update of i";
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

async function writeChanges(
  tx: TransactionSQL,
  changes: ReadonlyArray<{ change: StreamChange; incident: IncidentRecord; at: number }>,
): Promise<void> {
  if (changes.length === 0) return;
  const [row] = await tx.unsafe(BUMP_FEED, [changes.length]).values();
  if (!row) throw new Error("incidents: feed_head has no row");
  const first = Number(row[0]) - changes.length + 1;
  await tx.unsafe(INSERT_CHANGES, [
    changes.map((_, i) => first + i),
    changes.map((c) => c.incident.tenantId),
    changes.map((c) => c.incident.serviceId),
    changes.map((c) => c.incident.id),
    changes.map((c) => c.change),
    changes.map((c) => c.at),
    changes.map((c) => snapshot(c.incident)),
  ]);
}

/**
 * The alert effects of an ingest batch, for the transaction that inserts its events: call it
 * INSIDE that transaction (`client.begin(async (tx) => …)`), after the events' INSERT, with the
 * alert events that were `inserted` (never the duplicates), in batch order. The batch's INSERT
 * already holds feed_head's lock; `applyAlertBatch` takes it again (a no-op then) so it is
 * also safe on its own. It reads the open incidents of the batch's keys (FOR UPDATE), applies
 * §17's rules (domain/incidents.ts planAlertBatch), writes the incidents, their change rows
 * (positions from feed_head) and each event's `incident_id`. A throw must roll the batch back.
 */
export async function applyAlertBatch(
  tx: TransactionSQL,
  events: ReadonlyArray<AlertEventInput>,
  newId: () => string,
): Promise<AlertOutcome[]> {
  if (events.length === 0) return [];
  await tx.unsafe(LOCK_FEED);
  const keys = new Map<string, { serviceId: string; dedupKey: string }>();
  for (const { serviceId, alert } of events) {
    keys.set(`${serviceId}\u0000${alert.dedupKey}`, { serviceId, dedupKey: alert.dedupKey });
  }
  const wanted = [...keys.values()];
  const rows: unknown[][] = await tx
    .unsafe(OPEN_BY_KEYS, [wanted.map((k) => k.serviceId), wanted.map((k) => k.dedupKey)])
    .values();
  const plan = planAlertBatch(events, rows.map(incidentRecord), newId);
  // Updates first: an open incident the batch resolved must be closed before the key's next one goes in.
  for (const { incident, isNew } of plan.incidents) {
    if (!isNew) await tx.unsafe(UPDATE_INCIDENT, incidentUpdateValues(incident));
  }
  for (const { incident, isNew } of plan.incidents) {
    if (isNew) await tx.unsafe(INSERT_INCIDENT, incidentValues(incident));
  }
  await writeChanges(
    tx,
    plan.changes.map(({ change, incident }) => ({ change, incident, at: incident.lastEventAt })),
  );
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
