/**
 * intake.v1.IncidentService (SPEC §17, docs/incidents.md): the same domain calls as the REST
 * operations (gateway/incidents.ts), written as protobuf messages (shapes/incidents.ts).
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type AcknowledgeIncidentRequest,
  AcknowledgeIncidentResponseSchema,
  type GetIncidentRequest,
  GetIncidentResponseSchema,
  IncidentStart,
  type ListIncidentEventsRequest,
  ListIncidentEventsResponseSchema,
  type ListIncidentsRequest,
  ListIncidentsResponseSchema,
  type ResolveIncidentRequest,
  ResolveIncidentResponseSchema,
  type StreamIncidentChangesRequest,
  type StreamIncidentChangesResponse,
  StreamIncidentChangesResponseSchema,
} from "../../gen/intake/v1/incidents_pb.ts";
import type { IncidentHandling } from "../domain/incident-handling.ts";
import type { Logger } from "../logger.ts";
import { eventMessage } from "../shapes/events.ts";
import { incidentMessage } from "../shapes/incidents.ts";
import { principalOf, requestIdOf } from "./context.ts";
import { openLiveCall } from "./feed.ts";
import { rpcMethod } from "./method.ts";

function startOf(start: IncidentStart): string | undefined {
  if (start === IncidentStart.LATEST) return "latest";
  if (start === IncidentStart.EARLIEST) return "earliest";
  return undefined;
}

export function createIncidentImpl(deps: { incidents: IncidentHandling; logger: Logger }) {
  const { incidents, logger } = deps;
  return {
    listIncidents: rpcMethod(logger, async (req: ListIncidentsRequest, ctx) => {
      const page = await incidents.listIncidents(principalOf(ctx), {
        limit: req.limit,
        cursor: req.cursor,
        status: req.status,
        serviceId: req.serviceId,
        severity: req.severity,
      });
      return create(ListIncidentsResponseSchema, {
        data: page.items.map(incidentMessage),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),
    getIncident: rpcMethod(logger, async (req: GetIncidentRequest, ctx) =>
      create(GetIncidentResponseSchema, {
        incident: incidentMessage(await incidents.getIncident(principalOf(ctx), req.id)),
      }),
    ),
    listIncidentEvents: rpcMethod(logger, async (req: ListIncidentEventsRequest, ctx) => {
      const page = await incidents.listIncidentEvents(principalOf(ctx), req.id, {
        limit: req.limit,
        cursor: req.cursor,
      });
      return create(ListIncidentEventsResponseSchema, {
        data: page.items.map(eventMessage),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),
    acknowledgeIncident: rpcMethod(logger, async (req: AcknowledgeIncidentRequest, ctx) => {
      const incident = await incidents.acknowledgeIncident(principalOf(ctx), req.id, requestIdOf(ctx));
      return create(AcknowledgeIncidentResponseSchema, { incident: incidentMessage(incident) });
    }),
    resolveIncident: rpcMethod(logger, async (req: ResolveIncidentRequest, ctx) => {
      const incident = await incidents.resolveIncident(principalOf(ctx), req.id, requestIdOf(ctx));
      return create(ResolveIncidentResponseSchema, { incident: incidentMessage(incident) });
    }),

    // One message per change; keep-alives are an SSE matter (HTTP/2 and Connect have their own pings).
    async *streamIncidentChanges(
      req: StreamIncidentChangesRequest,
      ctx: HandlerContext,
    ): AsyncGenerator<StreamIncidentChangesResponse> {
      const stream = await openLiveCall(ctx, logger, (options) =>
        incidents.openChangeStream(
          principalOf(ctx),
          { after: req.after, serviceId: req.serviceId, start: startOf(req.start) },
          options,
        ),
      );
      for await (const item of stream) {
        if (item.kind === "change") {
          yield create(StreamIncidentChangesResponseSchema, {
            change: item.change.change,
            incident: incidentMessage(item.change.incident),
            cursor: item.cursor,
          });
        }
      }
    },
  };
}

export type IncidentImpl = ReturnType<typeof createIncidentImpl>;
