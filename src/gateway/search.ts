/**
 * Finding events and a service's ingest stats (SPEC §18, §22; docs/search.md): the tenant's
 * events filtered and searched, newest first, each written by the one event writer
 * (shapes/events.ts); a service's counts per outcome over a window (shapes/stats.ts).
 */
import { t } from "elysia";
import { STATS_OUTCOMES } from "../domain/stats-types.ts";
import { eventPageJson } from "../shapes/events.ts";
import { serviceStatsJson } from "../shapes/stats.ts";
import { JSON_TYPE, json } from "./http.ts";
import { EventRecordSchema } from "./ingest.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import { component, IdParams, listOf, PageQuery } from "./schemas.ts";

const timestamp = t.String({ format: "date-time", description: "RFC 3339, any offset" });

const EventSearchQuery = t.Object(
  {
    ...PageQuery.properties,
    service_id: t.Optional(t.String({ description: "svc_ + 32 hex; another tenant's is an empty page" })),
    type: t.Optional(t.String({ description: "the payload's top-level type, exactly" })),
    incident_id: t.Optional(t.String({ description: "inc_ + 32 hex: the alert events of one incident" })),
    received_after: t.Optional(timestamp),
    received_before: t.Optional(timestamp),
    q: t.Optional(
      t.String({
        description:
          "1..8 whitespace-separated terms of 3..256 characters; every term must occur in the payload, " +
          "case-insensitively, as a substring. 400 search_disabled when INTAKE_EVENT_SEARCH=false",
      }),
    ),
  },
  { additionalProperties: true },
);

const counts = t.Record(t.String(), t.Integer({ minimum: 0 }), {
  description: `count per outcome (${STATS_OUTCOMES.join(", ")}); only the outcomes that happened`,
});

const ServiceStatsSchema = t.Object(
  {
    window: t.Union([t.Literal("24h"), t.Literal("7d")]),
    bucket_seconds: t.Integer({ description: "300 for 24h, 3600 for 7d" }),
    from: t.String({ format: "date-time", description: "the first bucket's start" }),
    to: t.String({ format: "date-time", description: "the end of the last bucket (the one in progress)" }),
    buckets: t.Array(t.Object({ start: t.String({ format: "date-time" }), counts })),
    totals: counts,
  },
  component("ServiceStats"),
);

const StatsQuery = t.Object(
  { window: t.Optional(t.Union([t.Literal("24h"), t.Literal("7d")], { default: "24h" })) },
  { additionalProperties: true },
);

export function searchOperations({ domain }: OperationDeps): Operation[] {
  const { search, serviceStats } = domain;
  return [
    operation({
      method: "GET",
      path: "/v1/events",
      rpc: "intake.v1.IngestService/SearchEvents",
      errors: { 400: ["invalid_request", "search_disabled"] },
      schemas: { query: EventSearchQuery, response: { 200: listOf(EventRecordSchema, "EventSearchList") } },
      doc: {
        summary: "Find the tenant's events, newest first (by service, type, incident, time, payload text)",
        description:
          "Filters are ANDed; received_after is inclusive, received_before exclusive. A well-formed service_id " +
          "or incident_id of another tenant is an empty page. `q` needs INTAKE_EVENT_SEARCH=true (docs/search.md).",
        tag: "Ingest",
      },
      handle: async (call) => {
        const { query } = call;
        const page = await search.searchEvents(caller(call), {
          serviceId: query.service_id,
          type: query.type,
          incidentId: query.incident_id,
          receivedAfter: query.received_after,
          receivedBefore: query.received_before,
          q: query.q,
          limit: query.limit,
          cursor: query.cursor,
        });
        return new Response(eventPageJson(page.items, page.nextCursor), { headers: { "content-type": JSON_TYPE } });
      },
    }),
    operation({
      method: "GET",
      path: "/v1/services/:id/stats",
      rpc: "intake.v1.ServiceRegistryService/GetServiceStats",
      errors: { 400: ["invalid_request"], 404: ["not_found"] },
      schemas: { params: IdParams, query: StatsQuery, response: { 200: ServiceStatsSchema } },
      doc: {
        summary: "A service's ingest attempts per outcome, in buckets (24h: 5 minutes; 7d: hourly)",
        description:
          "Every bucket of the window, oldest first, the last one in progress; counts are written every few " +
          "seconds, so the newest attempts may be missing for a moment. Another tenant's service is 404.",
        tag: "Services",
      },
      handle: async (call) =>
        json(200, serviceStatsJson(await serviceStats.serviceStats(caller(call), call.params.id, call.query.window))),
    }),
  ];
}
