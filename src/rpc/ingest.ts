import { create } from "@bufbuild/protobuf";
import {
  EventSchema,
  IngestResponseSchema,
  type IngestService,
  ListEventsResponseSchema,
} from "../../gen/intake/v1/ingest_pb.ts";
import { formatId } from "../domain/ids.ts";
import type { Ingest } from "../domain/ingest.ts";
import type { Logger } from "../logger.ts";
import { principalOf } from "./context.ts";
import { ts } from "./convert.ts";
import { toConnectError } from "./errors.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";

/**
 * What the REST edge needs beyond the two RPC methods, so it can refuse early without
 * reaching past rpc into the domain.
 */
export interface IngestEdge {
  /** INTAKE_MAX_EVENT_BYTES: the edge stops reading a body beyond it. */
  readonly maxPayloadBytes: number;
  /**
   * Throws (ConnectError invalid_signature) for a service id nothing can be ingested into,
   * before the body is read. Synchronous when the service is cached.
   */
  admitService(serviceId: string): void | Promise<void>;
}

export type IngestImpl = Impl<typeof IngestService> & IngestEdge;

export function createIngestImpl(deps: { ingest: Ingest; logger: Logger }): IngestImpl {
  const { ingest, logger } = deps;
  return {
    maxPayloadBytes: ingest.maxEventBytes,

    admitService(serviceId) {
      try {
        const pending = ingest.admitService(serviceId);
        if (pending) {
          return pending.catch((error: unknown) => {
            throw toConnectError(error, logger);
          });
        }
      } catch (error) {
        throw toConnectError(error, logger);
      }
    },

    // No bearer token (policy `open`): the signature is the credential.
    ingest: rpcMethod(logger, async (req) => {
      const result = await ingest.ingest({
        serviceId: req.serviceId,
        signature: req.signature,
        payload: req.payload,
        idempotencyKey: req.idempotencyKey,
      });
      return create(IngestResponseSchema, {
        id: formatId("evt", result.id),
        receivedAt: ts(result.receivedAt),
        duplicate: result.duplicate,
      });
    }),

    listEvents: rpcMethod(logger, async (req, ctx) => {
      const page = await ingest.listEvents(principalOf(ctx), req.serviceId, { limit: req.limit, cursor: req.cursor });
      return create(ListEventsResponseSchema, {
        data: page.items.map((e) =>
          create(EventSchema, {
            id: formatId("evt", e.id),
            serviceId: formatId("svc", e.serviceId),
            receivedAt: ts(e.receivedAt),
            idempotencyKey: e.idempotencyKey ?? undefined,
            payload: e.payload,
          }),
        ),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),
  };
}
