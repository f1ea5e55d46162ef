/**
 * The incident operations (SPEC §17, docs/incidents.md): reading incidents and their
 * timelines, and acknowledging or resolving one by hand. An incident's JSON is written by
 * shapes/incidents.ts; its timeline's events by the one event writer (shapes/events.ts).
 */
import { t } from "elysia";
import { type ChangeItem, INCIDENT_STATUS_FILTERS } from "../domain/incident-handling.ts";
import { SEVERITIES } from "../domain/incident-types.ts";
import { eventPageJson } from "../shapes/events.ts";
import { incidentChangeJson, incidentJson } from "../shapes/incidents.ts";
import { StreamQuery, sse, sseAnswer, sseDoc } from "./feed.ts";
import { JSON_TYPE, json } from "./http.ts";
import { EventRecordSchema } from "./ingest.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import { component, IdParams, listOf, PageQuery, ServiceId, TokenId } from "./schemas.ts";

const timestamp = t.String({ format: "date-time", description: "RFC 3339 UTC with milliseconds" });
const nullableTimestamp = t.Union([timestamp, t.Null()]);
const severity = t.Union(
  SEVERITIES.map((s) => t.Literal(s)),
  { description: "critical > error > warning > info" },
);

const IncidentActorSchema = t.Union(
  [
    t.Object({ type: t.Literal("event"), id: t.String({ description: "evt_ + 32 hex: the alert event" }) }),
    t.Object({ type: t.Literal("api_token"), id: TokenId }),
    t.Object({ type: t.Literal("auto") }),
    t.Null(),
  ],
  { description: "an alert event, a token acting by hand, or auto-resolve; null while not done" },
);

export const IncidentRecordSchema = t.Object(
  {
    id: t.String({ description: "inc_ + 32 hex", examples: ["inc_0193a1b2c3d4e5f60718293a4b5c6d7e"] }),
    service_id: ServiceId,
    dedup_key: t.String({ description: "the alert events' dedup_key (a trigger without one: its evt_ id)" }),
    status: t.Union([t.Literal("triggered"), t.Literal("acknowledged"), t.Literal("resolved")]),
    severity: t.Union(
      SEVERITIES.map((s) => t.Literal(s)),
      { description: "the highest of its triggers" },
    ),
    title: t.String({ description: "the summary of its first trigger" }),
    source: t.String(),
    alert_count: t.Integer({ minimum: 1, description: "alert events that touched it" }),
    created_at: timestamp,
    last_event_at: timestamp,
    acknowledged_at: nullableTimestamp,
    resolved_at: nullableTimestamp,
    acknowledged_by: IncidentActorSchema,
    resolved_by: IncidentActorSchema,
  },
  component("Incident"),
);

const IncidentListQuery = t.Object(
  {
    ...PageQuery.properties,
    status: t.Optional(
      t.Union(
        INCIDENT_STATUS_FILTERS.map((s) => t.Literal(s)),
        { description: "open: triggered or acknowledged" },
      ),
    ),
    service_id: t.Optional(ServiceId),
    severity: t.Optional(severity),
  },
  { additionalProperties: true },
);

/** One change as an SSE message: `id: <cursor>`, `event: incident`, `data: {"change", "incident"}` on one line. */
function sseChange(item: ChangeItem): Uint8Array {
  return sse(`id: ${item.cursor}\nevent: incident\ndata: ${incidentChangeJson(item.change)}\n\n`);
}

export function incidentOperations({ domain, logger, keepOpen }: OperationDeps): Operation[] {
  const { incidents } = domain;
  const tag = "Incidents";
  return [
    operation({
      method: "GET",
      path: "/v1/incidents",
      rpc: "intake.v1.IncidentService/ListIncidents",
      errors: { 400: ["invalid_request"], 404: ["not_found"] },
      schemas: { query: IncidentListQuery, response: { 200: listOf(IncidentRecordSchema, "IncidentList") } },
      doc: {
        summary: "List incidents, newest first (by status, service, severity)",
        description: "An unknown service_id, or another tenant's, is 404 as for the feed.",
        tag,
      },
      handle: async (call) => {
        const { query } = call;
        const page = await incidents.listIncidents(caller(call), {
          limit: query.limit,
          cursor: query.cursor,
          status: query.status,
          serviceId: query.service_id,
          severity: query.severity,
        });
        return json(200, { data: page.items.map(incidentJson), next_cursor: page.nextCursor });
      },
    }),
    operation({
      method: "GET",
      path: "/v1/incidents/stream",
      rpc: "intake.v1.IncidentService/StreamIncidentChanges",
      errors: { 400: ["invalid_request"], 404: ["not_found"] },
      schemas: {
        query: StreamQuery,
        // Documented in `doc.responses`: the generator would call a string answer text/plain.
        response: {},
      },
      doc: {
        summary: "Follow the tenant's incident changes live (Server-Sent Events; resume with Last-Event-ID)",
        description:
          "One order per tenant: a reader resuming from its last cursor, on any instance, gets every committed " +
          "change once (docs/incidents.md). The same rules as GET /v1/feed/stream: keep-alives, the end " +
          "conditions, and the live reads a token and a tenant may hold (429).",
        tag,
        ...sseDoc(
          "per change `id: <cursor>`, `event: incident`, " +
            '`data: {"change": "opened" | "acknowledged" | "resolved" | "severity_raised", "incident": {…}}`; ' +
            "`: keep-alive` comments; a last `event: end` says why the stream ended",
          "the last message's id",
        ),
      },
      handle: (call) =>
        sseAnswer(call.request, call.query, { logger, keepOpen }, sseChange, (position, options) =>
          incidents.openChangeStream(caller(call), position, options),
        ),
    }),
    operation({
      method: "GET",
      path: "/v1/incidents/:id",
      rpc: "intake.v1.IncidentService/GetIncident",
      errors: { 404: ["not_found"] },
      schemas: { params: IdParams, response: { 200: IncidentRecordSchema } },
      doc: {
        summary: "Get an incident",
        description:
          "An incident of the caller's tenant by its inc_ id; any other id, or another tenant's incident, is 404.",
        tag,
      },
      handle: async (call) => json(200, incidentJson(await incidents.getIncident(caller(call), call.params.id))),
    }),
    operation({
      method: "GET",
      path: "/v1/incidents/:id/events",
      rpc: "intake.v1.IncidentService/ListIncidentEvents",
      errors: { 400: ["invalid_request"], 404: ["not_found"] },
      schemas: {
        params: IdParams,
        query: PageQuery,
        response: { 200: listOf(EventRecordSchema, "IncidentEventList") },
      },
      doc: {
        summary: "List the alert events that touched an incident, oldest first (its timeline)",
        description: "What event retention deleted is gone from it.",
        tag,
      },
      handle: async (call) => {
        const page = await incidents.listIncidentEvents(caller(call), call.params.id, {
          limit: call.query.limit,
          cursor: call.query.cursor,
        });
        return new Response(eventPageJson(page.items, page.nextCursor), { headers: { "content-type": JSON_TYPE } });
      },
    }),
    operation({
      method: "POST",
      path: "/v1/incidents/:id/acknowledge",
      rpc: "intake.v1.IncidentService/AcknowledgeIncident",
      errors: { 404: ["not_found"], 409: ["incident_resolved"] },
      schemas: { params: IdParams, response: { 200: IncidentRecordSchema } },
      doc: {
        summary: "Acknowledge an incident by hand (no body)",
        description:
          "triggered → acknowledged, audited as incident.acknowledge. Already acknowledged: 200 with nothing " +
          "changed; resolved: 409 incident_resolved.",
        tag,
      },
      handle: async (call) =>
        json(200, incidentJson(await incidents.acknowledgeIncident(caller(call), call.params.id, call.x.requestId))),
    }),
    operation({
      method: "POST",
      path: "/v1/incidents/:id/resolve",
      rpc: "intake.v1.IncidentService/ResolveIncident",
      errors: { 404: ["not_found"] },
      schemas: { params: IdParams, response: { 200: IncidentRecordSchema } },
      doc: {
        summary: "Resolve an incident by hand (no body)",
        description:
          "triggered or acknowledged → resolved, audited as incident.resolve. Already resolved: 200 with " +
          "nothing changed. The next trigger with its dedup_key opens a new incident.",
        tag,
      },
      handle: async (call) =>
        json(200, incidentJson(await incidents.resolveIncident(caller(call), call.params.id, call.x.requestId))),
    }),
  ];
}
