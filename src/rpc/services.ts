import { create } from "@bufbuild/protobuf";
import {
  CreateServiceResponseSchema,
  DeleteServiceResponseSchema,
  GetServiceResponseSchema,
  ListServicesResponseSchema,
  RotateSigningSecretResponseSchema,
  type ServiceRegistryService,
  UpdateServiceResponseSchema,
} from "../../gen/intake/v1/services_pb.ts";
import { invalid } from "../domain/errors.ts";
import { formatId } from "../domain/ids.ts";
import { andThen } from "../domain/maybe.ts";
import type { Page } from "../domain/pagination.ts";
import type { Services } from "../domain/services.ts";
import type { ServiceStatsReader } from "../domain/stats.ts";
import type { ServiceSummary } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { schemeOfMessage, serviceMessage } from "../shapes/services.ts";
import { serviceStatsMessage } from "../shapes/stats.ts";
import { ts } from "../shapes/time.ts";
import { principalOf, requestIdOf } from "./context.ts";
import type { Impl } from "./impl.ts";
import { onceEach } from "./memo.ts";
import { rpcMethod } from "./method.ts";

/**
 * A listed service's message, once per summary (memo.ts): a tenant's list is held in the cache
 * (domain/services.ts), so its pages hand back the same summaries until a change replaces them.
 */
const listedMessage = onceEach(serviceMessage);

/** A page's message, once per page: a held list's first page is the same Page object each time (domain/services.ts). */
const pageMessage = onceEach((page: Page<ServiceSummary>) =>
  create(ListServicesResponseSchema, {
    data: page.items.map(listedMessage),
    nextCursor: page.nextCursor ?? undefined,
  }),
);

export function createServiceRegistryImpl(deps: {
  services: Services;
  serviceStats: ServiceStatsReader;
  logger: Logger;
}): Impl<typeof ServiceRegistryService> {
  const { services, serviceStats, logger } = deps;
  return {
    createService: rpcMethod(logger, async (req, ctx) => {
      const { record, signingSecret } = await services.createService(
        principalOf(ctx),
        {
          serviceName: req.serviceName,
          isMonitored: req.isMonitored,
          incidentAutoResolveSeconds: req.incidentAutoResolveSeconds,
          signatureScheme: schemeOfMessage(req.signatureScheme, "default"),
        },
        requestIdOf(ctx),
      );
      return create(CreateServiceResponseSchema, { service: serviceMessage(record), signingSecret });
    }),
    getService: rpcMethod(logger, async (req, ctx) => {
      const record = await services.getService(principalOf(ctx), req.id);
      return create(GetServiceResponseSchema, { service: serviceMessage(record) });
    }),
    listServices: rpcMethod(logger, (req, ctx) =>
      andThen(services.listServices(principalOf(ctx), { limit: req.limit, cursor: req.cursor }), pageMessage),
    ),
    updateService: rpcMethod(logger, async (req, ctx) => {
      if (req.resetRateLimit && req.rateLimit) {
        throw invalid("rate_limit", "set rate_limit or reset_rate_limit, not both");
      }
      if (req.resetIncidentAutoResolveSeconds && req.incidentAutoResolveSeconds !== undefined) {
        throw invalid(
          "incident_auto_resolve_seconds",
          "set incident_auto_resolve_seconds or reset_incident_auto_resolve_seconds, not both",
        );
      }
      const record = await services.updateService(
        principalOf(ctx),
        req.id,
        {
          isMonitored: req.isMonitored,
          serviceName: req.serviceName,
          incidentAutoResolveSeconds: req.resetIncidentAutoResolveSeconds ? null : req.incidentAutoResolveSeconds,
          signatureScheme: schemeOfMessage(req.signatureScheme, "refused"),
          rateLimit: req.resetRateLimit
            ? null
            : req.rateLimit && { limit: req.rateLimit.limit, windowSeconds: req.rateLimit.windowSeconds },
        },
        requestIdOf(ctx),
      );
      return create(UpdateServiceResponseSchema, { service: serviceMessage(record) });
    }),
    deleteService: rpcMethod(logger, async (req, ctx) => {
      await services.deleteService(principalOf(ctx), req.id, requestIdOf(ctx));
      return create(DeleteServiceResponseSchema, {});
    }),
    rotateSigningSecret: rpcMethod(logger, async (req, ctx) => {
      const { record, signingSecret } = await services.rotateSigningSecret(principalOf(ctx), req.id, requestIdOf(ctx));
      return create(RotateSigningSecretResponseSchema, {
        serviceId: formatId("svc", record.id),
        signingSecret,
        signingSecretPrefix: record.signingSecretPrefix,
        rotatedAt: ts(record.secretRotatedAt as number),
        previousSecretExpiresAt: ts(record.previousSecretExpiresAt as number),
      });
    }),
    getServiceStats: rpcMethod(logger, async (req, ctx) =>
      serviceStatsMessage(await serviceStats.serviceStats(principalOf(ctx), req.id, req.window)),
    ),
  };
}
