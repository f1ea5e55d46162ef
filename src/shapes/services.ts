/** A service's public shapes: its REST JSON and its protobuf message, from one record. */
import { type Service, SignatureScheme } from "../../gen/intake/v1/services_pb.ts";
import { formatId } from "../domain/ids.ts";
import type { SignatureScheme as Scheme, ServiceSummary } from "../domain/types.ts";
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
    // A list held by an older version's cache has no scheme: every service then was `stripe`.
    signature_scheme: record.signatureScheme ?? "stripe",
  };
}

const SCHEME_MESSAGES: Record<Scheme, SignatureScheme> = {
  stripe: SignatureScheme.STRIPE,
  standard_webhooks: SignatureScheme.STANDARD_WEBHOOKS,
};

/**
 * A message's scheme as its REST name, for the domain to judge. An absent field is `undefined`
 * (create: the default; update: no change); UNSPECIFIED is `undefined` too where `unsetIs` is
 * "default" (CreateService's plain enum field cannot be absent); otherwise UNSPECIFIED or an
 * unknown number becomes a name the domain refuses with 400 invalid_request.
 */
export function schemeOfMessage(
  value: SignatureScheme | undefined,
  unsetIs: "default" | "refused",
): string | undefined {
  if (value === undefined) return undefined;
  if (value === SignatureScheme.STRIPE) return "stripe";
  if (value === SignatureScheme.STANDARD_WEBHOOKS) return "standard_webhooks";
  if (value === SignatureScheme.UNSPECIFIED && unsetIs === "default") return undefined;
  return SignatureScheme[value] ?? String(value);
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
    signatureScheme: SCHEME_MESSAGES[record.signatureScheme ?? "stripe"],
  };
  return message;
}
