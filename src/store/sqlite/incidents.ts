/**
 * Incidents on SQLite (the IncidentRepo port, docs/incidents.md). Raw bun:sqlite statements,
 * so that `createAlertApply` runs on any connection: the store's own (applyAlerts, tests, the
 * `:memory:` store's in-thread ingest) and the event writer worker's, inside the ingest batch's
 * own transaction. Every write transaction is IMMEDIATE (one writer at a time), so reading the
 * open incident and writing its change cannot interleave with another writer; the partial
 * unique index `incidents_open_key_unique` holds the one-open-per-key rule regardless.
 */
import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import type { AuditRecord } from "../../domain/audit-types.ts";
import { createIdGenerator } from "../../domain/ids.ts";
import type {
  AlertEventInput,
  AlertOutcome,
  IncidentChangeRecord,
  IncidentRecord,
  Severity,
  StreamChange,
} from "../../domain/incident-types.ts";
import { SEVERITIES } from "../../domain/incident-types.ts";
import {
  type AlertBatchPlan,
  type AlertPlanner,
  acknowledgeByHand,
  createAlertPlanner,
  type ManualOutcome,
  resolveByHand,
} from "../../domain/incidents.ts";
import type { IncidentActionOutcome, IncidentRepo } from "../../domain/ports/store.ts";
import type { EventRecord } from "../../domain/types.ts";
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
import { sqlitePlaceholder } from "../list-rows.ts";
import { IMMEDIATE, type SqliteContext, writeAudit } from "./context.ts";

type Values = SQLQueryBindings[];

/** The writes every incident change shares: the row, its feed position, its change row. */
interface IncidentWrites {
  openByKey: Statement<unknown[], Values>;
  insert: Statement<unknown, Values>;
  update: Statement<unknown, Values>;
  /** A join: only the count and the time (and the severity when raised) move. */
  touch: Statement<unknown, [string, number, number]>;
  touchRaise: Statement<unknown, [string, number, number, string]>;
  bump: Statement<{ head: number }, [number]>;
  insertChange: Statement<unknown, Values>;
}

function prepareWrites(db: Database): IncidentWrites {
  const placeholders = INCIDENT_COLUMNS.split(", ")
    .map((_, i) => `?${i + 1}`)
    .join(", ");
  return {
    openByKey: db.prepare(
      `SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE service_id = ?1 AND dedup_key = ?2 AND status <> 'resolved'`,
    ),
    insert: db.prepare(`INSERT INTO incidents (${INCIDENT_COLUMNS}) VALUES (${placeholders})`),
    update: db.prepare(updateIncidentStatement(sqlitePlaceholder)),
    // SQLite rewrites the entries of every index over a column an UPDATE sets, changed or not:
    // a join that sets only what moved rewrites one index (last_event_at's), not six.
    touch: db.prepare("UPDATE incidents SET alert_count = ?2, last_event_at = ?3 WHERE id = ?1"),
    touchRaise: db.prepare("UPDATE incidents SET alert_count = ?2, last_event_at = ?3, severity = ?4 WHERE id = ?1"),
    // The feed's own counter (docs/feed.md): positions in commit order, one writer at a time.
    bump: db.prepare(
      "INSERT INTO feed_head (id, head) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET head = head + excluded.head RETURNING head",
    ),
    insertChange: db.prepare(
      "INSERT INTO incident_changes (position, tenant_id, service_id, incident_id, change, occurred_at, incident) " +
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    ),
  };
}

/** Positions for `changes` from feed_head, then their rows; call inside the write transaction. */
function writeChanges(
  writes: IncidentWrites,
  changes: ReadonlyArray<{ change: StreamChange; incident: IncidentRecord; at: number }>,
): void {
  if (changes.length === 0) return;
  const bumped = writes.bump.get(changes.length);
  if (!bumped) throw new Error("incidents: feed_head returned no row");
  let position = bumped.head - changes.length;
  for (const { change, incident, at } of changes) {
    position++;
    writes.insertChange.run(
      position,
      incident.tenantId,
      incident.serviceId,
      incident.id,
      change,
      at,
      snapshot(incident),
    );
  }
}

/**
 * A batch's alert effects on `db`'s statements (prepared once: the tables must exist, after
 * migrate()), for a caller INSIDE an open write transaction (BEGIN IMMEDIATE) that rolls the
 * whole batch back on a throw. `planner()` starts a batch: it reads a key's open incident the
 * first time the batch meets the key and keeps the batch's own state of it after that
 * (domain/incidents.ts createAlertPlanner); `write` stores what it planned: the incidents
 * (updates first: an open incident the batch resolved must be closed before the key's next
 * one goes in) and their change rows (positions from feed_head).
 */
export interface AlertWrites {
  planner(): AlertPlanner;
  write(plan: Pick<AlertBatchPlan, "incidents" | "changes">): void;
}

export function createAlertWrites(db: Database, newId: () => string = createIdGenerator()): AlertWrites {
  const writes = prepareWrites(db);
  const openOf = (serviceId: string, dedupKey: string): IncidentRecord | null => {
    const row = writes.openByKey.values(serviceId, dedupKey)[0];
    return row ? incidentRecord(row) : null;
  };
  return {
    planner: () => createAlertPlanner(openOf, newId),
    write({ incidents, changes }) {
      for (const { incident, stored } of incidents) {
        if (stored === null) continue;
        if (
          incident.status !== stored.status ||
          incident.acknowledgedAt !== stored.acknowledgedAt ||
          incident.resolvedAt !== stored.resolvedAt
        ) {
          writes.update.run(...incidentUpdateValues(incident));
        } else if (incident.severity !== stored.severity) {
          writes.touchRaise.run(incident.id, incident.alertCount, incident.lastEventAt, incident.severity);
        } else {
          writes.touch.run(incident.id, incident.alertCount, incident.lastEventAt);
        }
      }
      for (const { incident, isNew } of incidents) {
        if (isNew) writes.insert.run(...incidentValues(incident));
      }
      writeChanges(
        writes,
        changes.map(({ change, incident }) => ({ change, incident, at: incident.lastEventAt })),
      );
    },
  };
}

export type ApplyAlertBatch = (events: ReadonlyArray<AlertEventInput>) => AlertOutcome[];

/**
 * The alert effects of events already stored (the port's `applyAlerts`), for a caller inside
 * an open write transaction on `db`: the plan, its writes, and each event's `incident_id` set.
 * Ingest does not come here: it plans event by event as it inserts, and inserts each event
 * with its `incident_id` (event-insert.ts), so no event row is written twice.
 */
export function createAlertApply(db: Database, newId: () => string = createIdGenerator()): ApplyAlertBatch {
  const alerts = createAlertWrites(db, newId);
  const linkEvent: Statement<unknown, [string, string]> = db.prepare(
    "UPDATE events SET incident_id = ?2 WHERE id = ?1",
  );
  return (events) => {
    if (events.length === 0) return [];
    const planner = alerts.planner();
    const outcomes = events.map((event) => planner.record(event, planner.next(event)));
    alerts.write(planner.plan());
    outcomes.forEach((outcome, i) => {
      if (outcome.incidentId !== null) linkEvent.run((events[i] as AlertEventInput).eventId, outcome.incidentId);
    });
    return outcomes;
  };
}

/**
 * Auto-resolve's read: per monitored service with a deadline (CROSS JOIN keeps services the
 * outer loop), its open incidents through `incidents_open_key_unique`, never every open
 * incident of the deployment (there is no index over `last_event_at`, see schema.ts).
 */
export const DUE =
  `SELECT ${incidentColumnsOf("i")} FROM services s CROSS JOIN incidents i ON i.service_id = s.id ` +
  "WHERE s.incident_auto_resolve_seconds IS NOT NULL AND s.is_monitored = 1 AND i.status <> 'resolved' " +
  "AND i.last_event_at <= ?1 - s.incident_auto_resolve_seconds * 1000 ORDER BY i.last_event_at LIMIT ?2";

const EVENT_RECORD =
  "SELECT id, tenant_id AS tenantId, service_id AS serviceId, received_at AS receivedAt, " +
  "idempotency_key AS idempotencyKey, payload, position, type, incident_id AS incidentId FROM events";

export function createIncidentRepo(ctx: SqliteContext, newId: () => string = createIdGenerator()): IncidentRepo {
  const { client, run } = ctx;
  let apply: ApplyAlertBatch | undefined;
  let writes: IncidentWrites | undefined;
  const statements = new Map<string, Statement>();
  const prepared = (text: string): Statement => {
    ctx.refuseIfClosed();
    let statement = statements.get(text);
    if (!statement) {
      statement = client.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  const incidentWrites = () => {
    ctx.refuseIfClosed();
    writes ??= prepareWrites(client);
    return writes;
  };

  function byHand(
    tenantId: string,
    id: string,
    decide: (incident: IncidentRecord) => ManualOutcome,
    now: number,
    audit: AuditRecord,
  ): Promise<IncidentActionOutcome> {
    return run(() =>
      ctx.db.transaction((tx): IncidentActionOutcome => {
        const row = prepared(`SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE id = ?1 AND tenant_id = ?2`).values(
          id,
          tenantId,
        )[0];
        if (!row) return { kind: "not_found" };
        const outcome = decide(incidentRecord(row));
        if (outcome.kind !== "changed") return outcome;
        const w = incidentWrites();
        w.update.run(...incidentUpdateValues(outcome.incident));
        const change: StreamChange = outcome.incident.status === "resolved" ? "resolved" : "acknowledged";
        writeChanges(w, [{ change, incident: outcome.incident, at: now }]);
        writeAudit(tx, audit);
        return outcome;
      }, IMMEDIATE),
    );
  }

  return {
    applyAlerts: (events) =>
      run(() => {
        ctx.refuseIfClosed();
        apply ??= createAlertApply(client, newId);
        const batch = apply;
        return client.transaction(() => batch(events)).immediate();
      }),

    get: (tenantId, id) =>
      run(() => {
        const row = prepared(`SELECT ${INCIDENT_COLUMNS} FROM incidents WHERE id = ?1 AND tenant_id = ?2`).values(
          id,
          tenantId,
        )[0];
        return row ? incidentRecord(row) : null;
      }),

    list: (tenantId, query) =>
      run(() => {
        const statement = incidentListStatement(sqlitePlaceholder, tenantId, query);
        return prepared(statement.text)
          .values(...(statement.params as Values))
          .map(incidentRecord);
      }),

    events: (tenantId, incidentId, query) =>
      run(() => {
        const where = "WHERE incident_id = ?1 AND tenant_id = ?2";
        const rows =
          query.after === undefined
            ? prepared(`${EVENT_RECORD} ${where} ORDER BY id LIMIT ?3`).all(incidentId, tenantId, query.limit)
            : prepared(`${EVENT_RECORD} ${where} AND id > ?4 ORDER BY id LIMIT ?3`).all(
                incidentId,
                tenantId,
                query.limit,
                query.after,
              );
        return rows as EventRecord[];
      }),

    acknowledge: (tenantId, id, by, now, audit) =>
      byHand(tenantId, id, (incident) => acknowledgeByHand(incident, by, now), now, audit),

    resolve: (tenantId, id, by, now, audit) =>
      byHand(tenantId, id, (incident) => resolveByHand(incident, by, now), now, audit),

    autoResolveDue: (now, limit) =>
      run(() =>
        client
          .transaction((): IncidentRecord[] => {
            const due = prepared(DUE).values(now, limit);
            const w = incidentWrites();
            const resolved: IncidentRecord[] = [];
            for (const row of due) {
              const outcome = resolveByHand(incidentRecord(row), { type: "auto" }, now);
              if (outcome.kind !== "changed") continue;
              w.update.run(...incidentUpdateValues(outcome.incident));
              resolved.push(outcome.incident);
            }
            writeChanges(
              w,
              resolved.map((incident) => ({ change: "resolved", incident, at: now })),
            );
            return resolved;
          })
          .immediate(),
      ),

    changes: (tenantId, query) =>
      run((): IncidentChangeRecord[] => {
        const select = "SELECT position, change, incident FROM incident_changes WHERE tenant_id = ?1 AND position > ?2";
        const rows =
          query.serviceId === undefined
            ? prepared(`${select} ORDER BY position LIMIT ?3`).values(tenantId, query.after, query.limit)
            : prepared(`${select} AND service_id = ?4 ORDER BY position LIMIT ?3`).values(
                tenantId,
                query.after,
                query.limit,
                query.serviceId,
              );
        return rows.map(changeRecord);
      }),

    changesHead: (tenantId) =>
      run(() => {
        const row = prepared("SELECT max(position) FROM incident_changes WHERE tenant_id = ?1").values(tenantId)[0];
        return Number(row?.[0] ?? 0);
      }),

    countOpen: () =>
      run(() => {
        const counts = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
        const rows = prepared(
          "SELECT severity, count(*) FROM incidents WHERE status <> 'resolved' GROUP BY severity",
        ).values();
        for (const [severity, count] of rows) counts[severity as Severity] = Number(count);
        return counts;
      }),

    // A short IMMEDIATE transaction per batch; the change rows go with their incidents (cascade).
    deleteResolvedBefore: (cutoff, batch) =>
      run(
        () =>
          prepared(
            "DELETE FROM incidents WHERE id IN (SELECT id FROM incidents WHERE status = 'resolved' AND resolved_at < ?1 " +
              "ORDER BY resolved_at LIMIT ?2)",
          ).run(cutoff, batch).changes,
      ),
  };
}
