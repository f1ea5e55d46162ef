/** A service's public shapes: its REST JSON and its protobuf message, from one record. */
import type { Service } from "../../gen/intake/v1/services_pb.ts";
import { formatId } from "../domain/ids.ts";
import type { ServiceSummary } from "../domain/types.ts";
import { isoOfMs, isoOrNull, optionalTs, ts, type Whole } from "./time.ts";

/** A full record or a list's summary: never a secret, a ciphertext or the tenant. */
export function serviceJson(record: ServiceSummary) {
  return {
    id: formatId("svc", record.id),
    service_name: record.serviceName,
    is_monitored: record.isMonitored,
    signing_secret_prefix: record.signingSecretPrefix,
    created_at: isoOfMs(record.createdAt),
    updated_at: isoOfMs(record.updatedAt),
    secret_rotated_at: isoOrNull(record.secretRotatedAt),
    previous_secret_expires_at: isoOrNull(record.previousSecretExpiresAt),
    rate_limit:
      record.rateLimitLimit === null || record.rateLimitWindowSeconds === null
        ? null
        : { limit: record.rateLimitLimit, window_seconds: record.rateLimitWindowSeconds },
    incident_auto_resolve_seconds: record.incidentAutoResolveSeconds,
  };
}

export function serviceMessage(record: ServiceSummary): Service {
  const message: Whole<Service> = {
    $typeName: "intake.v1.Service",
    id: formatId("svc", record.id),
    serviceName: record.serviceName,
    isMonitored: record.isMonitored,
    signingSecretPrefix: record.signingSecretPrefix,
    createdAt: ts(record.createdAt),
    updatedAt: ts(record.updatedAt),
    secretRotatedAt: optionalTs(record.secretRotatedAt),
    previousSecretExpiresAt: optionalTs(record.previousSecretExpiresAt),
    rateLimit:
      record.rateLimitLimit === null || record.rateLimitWindowSeconds === null
        ? undefined
        : {
            $typeName: "intake.v1.RateLimit",
            limit: record.rateLimitLimit,
            windowSeconds: record.rateLimitWindowSeconds,
          },
    incidentAutoResolveSeconds: record.incidentAutoResolveSeconds ?? undefined,
  };
  return message;
}
