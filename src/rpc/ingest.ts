import { create } from "@bufbuild/protobuf";
import {
  GetEventResponseSchema,
  type IngestService,
  ListEventsResponseSchema,
  SearchEventsResponseSchema,
} from "../../gen/intake/v1/ingest_pb.ts";
import type { Feed } from "../domain/feed.ts";
import { parseId } from "../domain/ids.ts";
import { type Ingest, SignatureRefused } from "../domain/ingest.ts";
import type { EventSearch } from "../domain/search.ts";
import type { Logger } from "../logger.ts";
import { eventMessage, ingestResponseMessage } from "../shapes/events.ts";
import { ingestServiceKey, principalOf, signatureFailureKey } from "./context.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";
import { rateLimitSinkKey } from "./rate-limit.ts";

export function createIngestImpl(deps: {
  ingest: Ingest;
  feed: Feed;
  search: EventSearch;
  logger: Logger;
}): Impl<typeof IngestService> {
  const { ingest, feed, search, logger } = deps;
  return {
    // No bearer token (policy `open`): the signature is the credential.
    ingest: rpcMethod(logger, async (req, context) => {
      // For the access log only (well-formed ids: anything else is input), never the answer.
      if (parseId("svc", req.serviceId) !== null) context.values.set(ingestServiceKey, req.serviceId);
      try {
        const result = await ingest.ingest({
          serviceId: req.serviceId,
          signature: req.signature,
          webhook: { id: req.webhookId, timestamp: req.webhookTimestamp, signature: req.webhookSignature },
          payload: req.payload,
          idempotencyKey: req.idempotencyKey,
          // The router's gate puts the service's RateLimit fields on the answer, whatever it is.
          onRateLimit: context.values.get(rateLimitSinkKey),
        });
        return ingestResponseMessage(result);
      } catch (error) {
        if (error instanceof SignatureRefused) context.values.set(signatureFailureKey, error.reason);
        throw error;
      }
    }),

    listEvents: rpcMethod(logger, async (req, ctx) => {
      const page = await ingest.listEvents(principalOf(ctx), req.serviceId, { limit: req.limit, cursor: req.cursor });
      return create(ListEventsResponseSchema, {
        data: page.items.map(eventMessage),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),

    getEvent: rpcMethod(logger, async (req, ctx) =>
      create(GetEventResponseSchema, { event: eventMessage(await feed.getEvent(principalOf(ctx), req.id)) }),
    ),

    searchEvents: rpcMethod(logger, async (req, ctx) => {
      const page = await search.searchEvents(principalOf(ctx), {
        serviceId: req.serviceId,
        type: req.type,
        incidentId: req.incidentId,
        receivedAfter: req.receivedAfter,
        receivedBefore: req.receivedBefore,
        q: req.q,
        limit: req.limit,
        cursor: req.cursor,
      });
      return create(SearchEventsResponseSchema, {
        data: page.items.map(eventMessage),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),
  };
}
