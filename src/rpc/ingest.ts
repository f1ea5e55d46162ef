import { create } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import {
  GetEventResponseSchema,
  type IngestService,
  type ListEventsRequest,
  ListEventsResponseSchema,
} from "../../gen/intake/v1/ingest_pb.ts";
import type { Feed } from "../domain/feed.ts";
import { parseId } from "../domain/ids.ts";
import { type Ingest, SignatureRefused } from "../domain/ingest.ts";
import type { Page } from "../domain/pagination.ts";
import type { EventRecord } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { type CallContext, ingestServiceKey, principalOf, signatureFailureKey } from "./context.ts";
import { eventMessage, ingestResponseMessage } from "./convert.ts";
import { toConnectError } from "./errors.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";
import { rateLimitSinkKey } from "./rate-limit.ts";

/**
 * What the REST edge needs beyond the two RPC methods, so it can refuse early without
 * reaching past rpc into the domain.
 */
export interface IngestEdge {
  /**
   * Throws (ConnectError invalid_signature) for a service id nothing can be ingested into,
   * before the body is read. Synchronous when the service is cached. `context` receives what
   * the access log reads (the service id, the reason of a 401).
   */
  admitService(serviceId: string, context: CallContext): void | Promise<void>;
  /** The 413 for a body the edge stopped reading at the event limit (counted in metrics). */
  payloadTooLarge(): ConnectError;
  /**
   * ListEvents' page as the domain returned it, for the REST gateway's byte-level body (no
   * protobuf message per event); ListEvents itself is built on the same call.
   */
  listEventsPage(req: ListEventsRequest, context: CallContext): Promise<Page<EventRecord>>;
}

/**
 * Notes on the call what the access log reports and the response never carries: the service
 * id (well-formed ones only: anything else is input) and why a signature was refused.
 */
function noteService(context: CallContext, serviceId: string): void {
  if (parseId("svc", serviceId) !== null) context.values.set(ingestServiceKey, serviceId);
}

function noteRefusal(context: CallContext, error: unknown): void {
  if (error instanceof SignatureRefused) context.values.set(signatureFailureKey, error.reason);
}

export type IngestImpl = Impl<typeof IngestService> & IngestEdge;

export function createIngestImpl(deps: { ingest: Ingest; feed: Feed; logger: Logger }): IngestImpl {
  const { ingest, feed, logger } = deps;
  const listEventsPage = rpcMethod(logger, (req: ListEventsRequest, ctx) =>
    ingest.listEvents(principalOf(ctx), req.serviceId, { limit: req.limit, cursor: req.cursor }),
  );
  return {
    admitService(serviceId, context) {
      noteService(context, serviceId);
      try {
        const pending = ingest.admitService(serviceId);
        if (pending) {
          return pending.catch((error: unknown) => {
            noteRefusal(context, error);
            throw toConnectError(error, logger);
          });
        }
      } catch (error) {
        noteRefusal(context, error);
        throw toConnectError(error, logger);
      }
    },

    payloadTooLarge: () => toConnectError(ingest.payloadTooLarge(), logger),

    // No bearer token (policy `open`): the signature is the credential.
    ingest: rpcMethod(logger, async (req, context) => {
      // The REST edge's admitService has already noted this very id.
      if (context.values.get(ingestServiceKey) !== req.serviceId) noteService(context, req.serviceId);
      let result: Awaited<ReturnType<Ingest["ingest"]>>;
      try {
        result = await ingest.ingest({
          serviceId: req.serviceId,
          signature: req.signature,
          payload: req.payload,
          idempotencyKey: req.idempotencyKey,
          // The edge puts the service's RateLimit fields on the answer, whatever it is.
          onRateLimit: context.values.get(rateLimitSinkKey),
        });
      } catch (error) {
        noteRefusal(context, error);
        throw error;
      }
      return ingestResponseMessage(result.id, result.receivedAt, result.duplicate, result.incident);
    }),

    listEventsPage,

    listEvents: rpcMethod(logger, async (req, ctx) => {
      const page = await listEventsPage(req, ctx);
      return create(ListEventsResponseSchema, {
        data: page.items.map(eventMessage),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),

    getEvent: rpcMethod(logger, async (req, ctx) =>
      create(GetEventResponseSchema, { event: eventMessage(await feed.getEvent(principalOf(ctx), req.id)) }),
    ),
  };
}
