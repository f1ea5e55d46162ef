/**
 * Ingest operations (docs/ingest.md). The ingest route takes the body unparsed: the signature
 * covers the exact bytes, so they are read once (capped), verified, and stored as they came.
 * The events listing embeds each stored payload verbatim (shapes/events.ts).
 */
import { t } from "elysia";
import { SignatureRefused } from "../domain/ingest.ts";
import { standardWebhooksHeaders } from "../domain/signing.ts";
import { eventPageJson, ingestJson } from "../shapes/events.ts";
import { JSON_TYPE, json, readCapped } from "./http.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import { component, IdParams, limits, listOf, PageQuery, ServiceId } from "./schemas.ts";

const EventId = t.String({ description: "evt_ + 32 hex", examples: ["evt_0193a1b2c3d4e5f60718293a4b5c6d7e"] });
const receivedAt = t.String({ format: "date-time", description: "RFC 3339 UTC with milliseconds" });

/** What a sender might post: shown as the payload example instead of a generated placeholder. */
const PAYLOAD_EXAMPLE = { type: "invoice.paid", data: { invoice: "in_1042", amount: 4200, currency: "eur" } };

const AnyJsonObject = t.Object(
  {},
  {
    additionalProperties: true,
    description: "any JSON object, stored as the exact bytes received",
    examples: [PAYLOAD_EXAMPLE],
  },
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
    payload: t.Object(
      {},
      { additionalProperties: true, description: "the stored body, embedded verbatim", examples: [PAYLOAD_EXAMPLE] },
    ),
  },
  component("Event"),
);

// Documented only: every value is accepted here and judged in the domain, so that a bad
// Idempotency-Key is a 400 only after the 401 and 409 checks (docs/ingest.md order).
const IngestHeaders = t.Object(
  {
    "x-service-signature": t.Optional(
      t.String({
        // In code spans: Markdown renderers would take `<unix seconds>` for an HTML tag and drop it.
        description:
          "`t=<unix seconds>,v1=<hex>[,v1=<hex>...]` (Stripe's scheme; services with signature_scheme `stripe`): each " +
          "`<hex>` the lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with the whole `whsec_` secret; one matching " +
          "`v1` suffices, other schemes are ignored. Missing or wrong for such a service: 401 invalid_signature.",
        examples: ["t=1795860000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"],
        ...limits({ minLength: 1, maxLength: 8192 }),
      }),
    ),
    "webhook-id": t.Optional(
      t.String({
        description:
          "Standard Webhooks (services with signature_scheme `standard_webhooks`; `svix-id` is the same header): the message id, 1..255 visible ASCII without `.`; the event's idempotency key",
        examples: ["msg_2b7BkYtRrYMxT4xlXyUjFRhAbCd"],
      }),
    ),
    "webhook-timestamp": t.Optional(
      t.String({
        description: "Standard Webhooks (`svix-timestamp`): Unix seconds, within the signature tolerance either way",
        examples: ["1795860000"],
      }),
    ),
    "webhook-signature": t.Optional(
      t.String({
        description:
          "Standard Webhooks (`svix-signature`): space-separated `v1,<base64>` entries, each the base64 HMAC-SHA256 of " +
          "`<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the base64 decoding of the secret after `whsec_`; " +
          "one valid entry suffices",
        examples: ["v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="],
      }),
    ),
    "idempotency-key": t.Optional(
      t.String({
        description:
          "1..255 visible ASCII characters; a repeat within the service is a 200 duplicate. With the standard_webhooks scheme, webhook-id is the key, and this header, when sent, must equal it",
        ...limits({ minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" }),
      }),
    ),
  },
  { additionalProperties: true },
);

const IngestParams = t.Object({ service_id: ServiceId });

export function ingestOperations({ domain, limits: caps }: OperationDeps): Operation[] {
  const { ingest } = domain;
  const limit = caps.eventBytes;
  return [
    operation({
      method: "POST",
      path: "/v1/ingest/:service_id",
      rpc: "intake.v1.IngestService/Ingest",
      // Raw bytes: the signature covers them, and senders' Content-Types vary.
      body: "raw",
      native: "none",
      // No 415: any Content-Type is accepted; the checks are the domain's (docs/ingest.md).
      errors: {
        400: ["invalid_request"],
        401: ["invalid_signature"],
        409: ["ingestion_paused"],
        413: ["payload_too_large"],
      },
      schemas: {
        params: IngestParams,
        headers: IngestHeaders,
        response: { 202: IngestAccepted, 200: IngestDuplicate },
      },
      doc: {
        summary: "Ingest a signed event (no bearer token: the signature is the credential)",
        description:
          "Checks in order: 413 payload_too_large → 401 invalid_signature → 429 rate_limited (the service's limit, counted only once the signature verifies) → 409 ingestion_paused → 400 invalid_request. " +
          "Any Content-Type is accepted; the body must be a UTF-8 JSON object. 202 only once the event is committed.",
        tag: "Ingest",
        shownFirst: 202,
        requestBody: {
          required: true,
          description: `A JSON object, at most INTAKE_MAX_EVENT_BYTES (this deployment: ${limit}) bytes, under any Content-Type`,
          content: {
            "application/json": { schema: AnyJsonObject, example: PAYLOAD_EXAMPLE },
            // Senders' Content-Types vary and none is refused: the bytes must be a JSON object whatever it says.
            "*/*": { schema: AnyJsonObject, example: PAYLOAD_EXAMPLE },
          },
        },
      },
      handle: async ({ x, request, params }) => {
        // A path segment that is not valid percent-encoding reaches Elysia's route as null: it
        // names no service, so it gets the same 401 as any other.
        const serviceId = typeof params.service_id === "string" ? params.service_id : "";
        try {
          // An unknown service is refused before its body is read (the same 401 as a bad signature).
          const found = ingest.admitService(serviceId);
          const service = found instanceof Promise ? await found : found;
          const payload = await readCapped(request, limit);
          if (payload === null) throw ingest.payloadTooLarge(serviceId);
          const result = await ingest.ingestInto(service, {
            serviceId,
            signature: request.headers.get("x-service-signature"),
            // Read only for a service of that scheme: a stripe sender's hot path looks up one header.
            webhook:
              service.material.scheme === "standard_webhooks"
                ? standardWebhooksHeaders((name) => request.headers.get(name))
                : undefined,
            payload,
            idempotencyKey: request.headers.get("idempotency-key"),
            // The answer carries the service's RateLimit fields, whatever it is (edge.ts, finish).
            onRateLimit: (rate) => {
              x.rate = rate;
            },
          });
          return json(result.duplicate ? 200 : 202, ingestJson(result));
        } catch (error) {
          if (error instanceof SignatureRefused) x.reason = error.reason;
          throw error;
        }
      },
    }),
    operation({
      method: "GET",
      path: "/v1/services/:id/events",
      rpc: "intake.v1.IngestService/ListEvents",
      errors: { 400: ["invalid_request"], 404: ["not_found"] },
      schemas: { params: IdParams, query: PageQuery, response: { 200: listOf(EventRecordSchema, "EventList") } },
      doc: {
        summary: "List a service's stored events, newest first",
        description:
          "A page of one service's stored events, newest first, each payload embedded verbatim; an unknown service is 404. Follow `next_cursor` for the next page.",
        tag: "Ingest",
      },
      handle: async (call) => {
        const page = await ingest.listEvents(caller(call), call.params.id, {
          limit: call.query.limit,
          cursor: call.query.cursor,
        });
        return new Response(eventPageJson(page.items, page.nextCursor), { headers: { "content-type": JSON_TYPE } });
      },
    }),
  ];
}
