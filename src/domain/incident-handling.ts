/**
 * Reading incidents and handling them by hand (SPEC §17, docs/incidents.md): what the REST
 * operations and `intake.v1.IncidentService` both call. The rules themselves are in
 * incidents.ts; the store applies a manual change in one transaction with its change row and
 * its audit record, under the lock that orders the tenant's feed.
 */
import { type Audit, tokenOrigin } from "./audit.ts";
import { DomainError, type FieldIssue, invalid, notFound } from "./errors.ts";
import { FEED_STARTS, type Feed, type LiveItem, type LiveSource, type StreamOptions } from "./feed.ts";
import { tenantTag } from "./feed-cursor.ts";
import { parseId } from "./ids.ts";
import { decodeIncidentCursor, encodeIncidentCursor } from "./incident-cursor.ts";
import {
  INCIDENT_STATUSES,
  type IncidentActor,
  type IncidentChangeRecord,
  type IncidentRecord,
  type IncidentStatus,
  SEVERITIES,
  type Severity,
} from "./incident-types.ts";
import { incidentResolvedError } from "./incidents.ts";
import { type Page, type PageRequest, pageQuery, toPage } from "./pagination.ts";
import type { FeedNotifier } from "./ports/notifier.ts";
import { noopObserver, type Observer } from "./ports/observer.ts";
import type { IncidentActionOutcome, IncidentQuery, Store } from "./ports/store.ts";
import type { Clock, EventRecord, Principal } from "./types.ts";

/** `status=open` is triggered or acknowledged; the others are one status each. */
export const INCIDENT_STATUS_FILTERS = ["open", ...INCIDENT_STATUSES] as const;
export type IncidentStatusFilter = (typeof INCIDENT_STATUS_FILTERS)[number];

export interface IncidentListRequest extends PageRequest {
  status?: string | undefined;
  serviceId?: string | undefined;
  severity?: string | undefined;
}

export interface IncidentChangeStreamRequest {
  after?: string | undefined;
  serviceId?: string | undefined;
  start?: string | undefined;
}

/** One change of the stream, with where to resume to get what comes after it. */
export interface ChangeItem {
  kind: "change";
  change: IncidentChangeRecord;
  cursor: string;
}

/** Changes a stream reads from the store at once: all a slow reader can make Intake hold. */
const CHANGE_PAGE = 100;

export interface IncidentHandlingDeps {
  store: Store;
  audit: Audit;
  clock: Clock;
  /** The live-stream machinery the change stream shares with the feed's (docs/incidents.md). */
  feed: Pick<Feed, "openLive">;
  /**
   * A manual change is a change of the tenant's incident stream: its readers are woken like
   * the feed's (a lost wake-up only delays them until their next timed read).
   */
  notifier: FeedNotifier;
  /** `intake_incident_changes_total`: a change by hand counts like one by an event or auto-resolve. */
  observer?: Observer;
}

export function createIncidentHandling(deps: IncidentHandlingDeps) {
  const { store, audit, clock, notifier, feed } = deps;
  const observer = deps.observer ?? noopObserver;

  /** The raw id of one of the caller's services; unknown, malformed or another tenant's: 404 (as the feed's filter). */
  async function serviceFilter(principal: Principal, serviceId: string | undefined): Promise<string | undefined> {
    if (serviceId === undefined) return undefined;
    const raw = parseId("svc", serviceId);
    if (raw === null || !(await store.services.get(principal.tenantId, raw))) throw notFound("service");
    return raw;
  }

  /** `GET /v1/incidents` / ListIncidents: newest first, every filter optional, combined. */
  async function listIncidents(principal: Principal, request: IncidentListRequest): Promise<Page<IncidentRecord>> {
    const scope = { list: "incidents", tenantId: principal.tenantId };
    const { limit, before } = pageQuery(request, scope);
    const issues: FieldIssue[] = [];
    const { status, severity } = request;
    if (status !== undefined && !(INCIDENT_STATUS_FILTERS as readonly string[]).includes(status)) {
      issues.push({ field: "status", message: `must be one of ${INCIDENT_STATUS_FILTERS.join(", ")}` });
    }
    if (severity !== undefined && !(SEVERITIES as readonly string[]).includes(severity)) {
      issues.push({ field: "severity", message: `must be one of ${SEVERITIES.join(", ")}` });
    }
    if (issues.length > 0) throw new DomainError("invalid_request", "The request is invalid.", issues);
    const serviceId = await serviceFilter(principal, request.serviceId);
    const query: IncidentQuery = {
      limit: limit + 1,
      ...(before !== undefined && { before }),
      ...(status !== undefined && { status: status as "open" | IncidentStatus }),
      ...(serviceId !== undefined && { serviceId }),
      ...(severity !== undefined && { severity: severity as Severity }),
    };
    return toPage(await store.incidents.list(principal.tenantId, query), limit, scope);
  }

  /** `GET /v1/incidents/{id}` / GetIncident: another tenant's is a 404 like an unknown one. */
  async function getIncident(principal: Principal, id: string): Promise<IncidentRecord> {
    const raw = parseId("inc", id);
    const incident = raw ? await store.incidents.get(principal.tenantId, raw) : null;
    if (!incident) throw notFound("incident");
    return incident;
  }

  /**
   * `GET /v1/incidents/{id}/events` / ListIncidentEvents: the alert events that touched it,
   * oldest first (what event retention deleted is gone from it). The cursor is the last
   * event's id; the next page reads the ids after it.
   */
  async function listIncidentEvents(
    principal: Principal,
    id: string,
    request: PageRequest,
  ): Promise<Page<EventRecord>> {
    const raw = parseId("inc", id);
    if (raw === null) throw notFound("incident");
    const scope = { list: `incident_events:${raw}`, tenantId: principal.tenantId };
    const { limit, before: after } = pageQuery(request, scope);
    await getIncident(principal, id);
    const rows = await store.incidents.events(principal.tenantId, raw, {
      limit: limit + 1,
      ...(after !== undefined && { after }),
    });
    return toPage(rows, limit, scope);
  }

  function settle(outcome: IncidentActionOutcome, tenantId: string): IncidentRecord {
    switch (outcome.kind) {
      case "changed":
        observer.incidentChange(outcome.incident.status === "resolved" ? "resolved" : "acknowledged");
        notifier.publish([tenantId]);
        return outcome.incident;
      case "unchanged":
        return outcome.incident;
      case "incident_resolved":
        throw incidentResolvedError();
      case "not_found":
        throw notFound("incident");
    }
  }

  /**
   * `POST /v1/incidents/{id}/acknowledge` / AcknowledgeIncident: triggered → acknowledged by
   * the calling token, audited as `incident.acknowledge`. Already acknowledged: the incident as
   * it is, nothing written; resolved: 409 incident_resolved.
   */
  async function acknowledgeIncident(principal: Principal, id: string, requestId: string | null) {
    return act(principal, id, requestId, "incident.acknowledge");
  }

  /**
   * `POST /v1/incidents/{id}/resolve` / ResolveIncident: open → resolved by the calling token,
   * audited as `incident.resolve`. Already resolved: the incident as it is, nothing written.
   */
  async function resolveIncident(principal: Principal, id: string, requestId: string | null) {
    return act(principal, id, requestId, "incident.resolve");
  }

  async function act(
    principal: Principal,
    id: string,
    requestId: string | null,
    action: "incident.acknowledge" | "incident.resolve",
  ): Promise<IncidentRecord> {
    const raw = parseId("inc", id);
    if (raw === null) throw notFound("incident");
    const { tenantId } = principal;
    const by: IncidentActor = { type: "api_token", id: principal.tokenId };
    const record = audit.record(tenantId, tokenOrigin(principal, requestId), action, { type: "incident", id: raw });
    const now = clock.now();
    const outcome =
      action === "incident.acknowledge"
        ? await store.incidents.acknowledge(tenantId, raw, by, now, record)
        : await store.incidents.resolve(tenantId, raw, by, now, record);
    return settle(outcome, tenantId);
  }

  /**
   * `GET /v1/incidents/stream` / StreamIncidentChanges: the tenant's incident changes, live,
   * from a cursor (`after`, an `i1` cursor of this tenant) or `start` (earliest: every retained
   * change; latest: from now). Change positions are the feed's (taken under its lock in the
   * change's commit), so a reader that resumes from its last cursor, on any instance, gets
   * every committed change once, in the tenant's one order. The stream itself is the feed's
   * (`feed.openLive`): the same caps, wake-ups, end conditions, keep-alives and back-pressure.
   * Validation happens here, before anything is sent.
   */
  async function openChangeStream(
    principal: Principal,
    request: IncidentChangeStreamRequest,
    options: StreamOptions,
  ): Promise<AsyncGenerator<LiveItem<ChangeItem>, void, undefined>> {
    const { tenantId } = principal;
    let start: number;
    if (request.after !== undefined) {
      start = decodeIncidentCursor(tenantId, request.after);
    } else {
      const from = request.start ?? "earliest";
      if (!(FEED_STARTS as readonly string[]).includes(from)) throw invalid("start", "must be earliest or latest");
      start = from === "latest" ? await store.incidents.changesHead(tenantId) : 0;
    }
    const serviceId = await serviceFilter(principal, request.serviceId);
    const tag = tenantTag(tenantId);
    const changes: LiveSource<IncidentChangeRecord, ChangeItem> = {
      async next(_tail, scan) {
        const rows = await store.incidents.changes(tenantId, { after: scan, limit: CHANGE_PAGE, serviceId });
        const last = rows[rows.length - 1];
        return { rows, to: last ? last.position : scan, more: rows.length === CHANGE_PAGE };
      },
      item: (change, at) => ({ kind: "change", change, cursor: encodeIncidentCursor(tenantId, at, tag) }),
    };
    return feed.openLive(principal, start, serviceId, options, changes);
  }

  return {
    listIncidents,
    getIncident,
    listIncidentEvents,
    acknowledgeIncident,
    resolveIncident,
    openChangeStream,
  };
}

export type IncidentHandling = ReturnType<typeof createIncidentHandling>;
