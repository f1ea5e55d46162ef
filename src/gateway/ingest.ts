/**
 * Ingest routes (docs/ingest.md). The ingest route takes the body unparsed: the signature covers the
 * exact bytes, so they are read once (capped), verified, and stored as they came. The events
 * listing embeds each stored payload verbatim (event-json.ts), never re-serializing.
 */
import { create } from "@bufbuild/protobuf";
import { Elysia, t } from "elysia";
import { type IngestRequest, ListEventsRequestSchema } from "../../gen/intake/v1/ingest_pb.ts";
import type { Limits } from "../domain/limits.ts";
import type { Whole } from "../rpc/convert.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { eventsJson } from "./event-json.ts";
import { ELYSIA_SETTINGS, JSON_TYPE, json, readCapped } from "./http.ts";
import type { Kit } from "./kit.ts";
import { bearerSecurity } from "./responses.ts";
import { component, IdParams, limits, listOf, PageQuery, requiredHeader, ServiceId } from "./schemas.ts";
import { iso } from "./serialize.ts";

const EventId = t.String({ description: "evt_ + 32 hex", examples: ["evt_0193a1b2c3d4e5f60718293a4b5c6d7e"] });
const receivedAt = t.String({ format: "date-time", description: "RFC 3339 UTC with milliseconds" });

const AnyJsonObject = t.Object(
  {},
  { additionalProperties: true, description: "any JSON object, stored as the exact bytes received" },
);

export const IngestAccepted = t.Object(
  {
    id: EventId,
    received_at: receivedAt,
    dedup_key: t.Optional(t.String({ description: "§17, alert events only: the event's dedup key" })),
    incident_id: t.Optional(
      t.Union([t.String(), t.Null()], {
        description: "§17, alert events only: the incident it opened or changed (inc_…); null when none was open",
      }),
    ),
  },
  { description: "Stored durably", ...component("IngestAccepted") },
);

export const IngestDuplicate = t.Object(
  { id: EventId, received_at: receivedAt, duplicate: t.Literal(true) },
  {
    description: "The Idempotency-Key was already used in this service: the first event; nothing new stored",
    ...component("IngestDuplicate"),
  },
);

export const EventRecordSchema = t.Object(
  {
    id: EventId,
    service_id: ServiceId,
    received_at: receivedAt,
    idempotency_key: t.Union([t.String(), t.Null()]),
    type: t.Union([t.String(), t.Null()], { description: "§18: the payload's top-level type (1..255 characters)" }),
    incident_id: t.Union([t.String(), t.Null()], { description: "§17: the incident this alert event touched (inc_…)" }),
    payload: t.Object({}, { additionalProperties: true, description: "the stored body, embedded verbatim" }),
  },
  component("Event"),
);

// Documented only: every value is accepted here and judged in the domain, so that a bad
// Idempotency-Key is a 400 only after the 401 and 409 checks (docs/ingest.md order).
const IngestHeaders = t.Object(
  {
    "x-service-signature": t.Optional(
      t.String({
        description:
          "t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with the whole whsec_ secret>[,v1=...] (Stripe's scheme)",
        examples: ["t=1795860000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"],
        ...requiredHeader(),
      }),
    ),
    "idempotency-key": t.Optional(
      t.String({
        description: "1..255 visible ASCII characters; a repeat within the service is a 200 duplicate",
        ...limits({ minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" }),
      }),
    ),
  },
  { additionalProperties: true },
);

const IngestParams = t.Object({ service_id: ServiceId });

export const INGEST_ROUTE = "/v1/ingest/:service_id";

/**
 * The answer to a signed event for `serviceId` (202, or 200 for a duplicate); throws the
 * refusal. The Elysia route and the ingest lane (ingest-lane.ts) both answer with it.
 */
export type IngestAnswer = (request: Request, serviceId: string) => Promise<Response>;

export function ingestAnswer(impls: RpcImpls, kit: Kit, limits: Limits): IngestAnswer {
  const { ingest } = impls;
  const limit = limits.eventBytes;
  return async (request, serviceId) => {
    // Tagged on the request by the kit: the access log reads the service id and a 401's reason
    // from it (never the response), and it receives the rate-limit decision, for the answer's
    // RateLimit fields.
    const call = kit.open(request);
    // An unknown service is refused before its body is read (same 401 as a bad signature).
    const early = ingest.admitService(serviceId, call);
    if (early) await early;
    const payload = await readCapped(request, limit);
    if (payload === null) throw ingest.payloadTooLarge();
    // A literal message, not create(): what the list pages' messages are too (rpc/convert.ts).
    const message: Whole<IngestRequest> = {
      $typeName: "intake.v1.IngestRequest",
      serviceId,
      signature: request.headers.get("x-service-signature") ?? "",
      payload,
      idempotencyKey: request.headers.get("idempotency-key") ?? undefined,
    };
    const res = await ingest.ingest(message, call);
    if (res.duplicate) return json(200, { id: res.id, received_at: iso(res.receivedAt), duplicate: true });
    if (res.dedupKey === undefined) return json(202, { id: res.id, received_at: iso(res.receivedAt) });
    // §17: an alert event's 202 names its key and incident (null: nothing was open).
    return json(202, {
      id: res.id,
      received_at: iso(res.receivedAt),
      dedup_key: res.dedupKey,
      incident_id: res.incidentId ?? null,
    });
  };
}

export function ingestRoutes(impls: RpcImpls, kit: Kit, limits: Limits, answer: IngestAnswer) {
  const { ingest } = impls;
  const limit = limits.eventBytes;
  return new Elysia({ ...ELYSIA_SETTINGS, name: "ingest" })
    .use(kit.plugin)
    .post(INGEST_ROUTE, ({ request, params }) => answer(request, params.service_id), {
      // Raw bytes: the signature covers them, and senders' Content-Types vary.
      parse: "none",
      // A path segment that is not valid percent-encoding arrives as null and would fail the
      // params schema as a 400; it names no service, so it must get the same 401 as any other.
      transform: ({ params }: { params: Record<string, unknown> }) => {
        if (typeof params.service_id !== "string") params.service_id = "";
      },
      params: IngestParams,
      headers: IngestHeaders,
      response: { 202: IngestAccepted, 200: IngestDuplicate },
      detail: {
        summary: "Ingest a signed event (no bearer token: the signature is the credential)",
        description:
          "Checks in order: 413 payload_too_large → 401 invalid_signature → 429 rate_limited (the service's limit, counted only once the signature verifies) → 409 ingestion_paused → 400 invalid_request. " +
          "Any Content-Type is accepted; the body must be a UTF-8 JSON object. 202 only once the event is committed.",
        tags: ["Ingest"],
        security: [],
        requestBody: {
          required: true,
          description: `A JSON object, at most INTAKE_MAX_EVENT_BYTES (this deployment: ${limit}) bytes`,
          content: { "application/json": { schema: AnyJsonObject } },
        },
      },
    })
    .get(
      "/v1/services/:id/events",
      async ({ call, params, query }) => {
        const page = await ingest.listEventsPage(
          create(ListEventsRequestSchema, { serviceId: params.id, limit: query.limit, cursor: query.cursor }),
          call,
        );
        // Each stored payload embedded verbatim, never re-serialized (event-json.ts).
        const body = eventsJson('{"data":[', page.items, `],"next_cursor":${JSON.stringify(page.nextCursor)}}`);
        return new Response(body, { status: 200, headers: { "content-type": JSON_TYPE } });
      },
      {
        bearer: "intake.v1.IngestService/ListEvents",
        params: IdParams,
        query: PageQuery,
        response: { 200: listOf(EventRecordSchema, "EventList") },
        detail: { summary: "List a service's stored events, newest first", tags: ["Ingest"], security: bearerSecurity },
      },
    );
}
