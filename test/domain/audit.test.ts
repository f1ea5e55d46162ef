/**
 * `changes` of an update (docs/api.md, "Audit log"): only the listed public fields, by their
 * REST names, and only those whose value changed.
 */
import { describe, expect, test } from "bun:test";
import { changesBetween, SERVICE_AUDITED_FIELDS } from "../../src/domain/audit.ts";
import type { ServiceRecord } from "../../src/domain/types.ts";

const service: ServiceRecord = {
  id: "0".repeat(32),
  tenantId: crypto.randomUUID(),
  serviceName: "billing",
  isMonitored: true,
  secretCiphertext: "sealed-1",
  signingSecretPrefix: "whsec_aaaa",
  previousSecretCiphertext: null,
  previousSecretExpiresAt: null,
  secretRotatedAt: null,
  rateLimitLimit: null,
  rateLimitWindowSeconds: null,
  incidentAutoResolveSeconds: null,
  signatureScheme: "stripe",
  createdAt: 1,
  updatedAt: 1,
};

describe("changesBetween", () => {
  test("names each changed listed field by its REST name with its value before and after", () => {
    const after = { ...service, isMonitored: false, updatedAt: 2 };
    expect(changesBetween(service, after, SERVICE_AUDITED_FIELDS)).toEqual({
      is_monitored: { from: true, to: false },
    });
  });

  test("is null when no listed field changed, whatever else did (a secret, a bookkeeping time)", () => {
    const after = { ...service, secretCiphertext: "sealed-2", previousSecretCiphertext: "sealed-1", updatedAt: 9 };
    expect(changesBetween(service, after, SERVICE_AUDITED_FIELDS)).toBeNull();
  });

  test("rate_limit is recorded in its REST form, both parts together, null when the service has none", () => {
    const limited = { ...service, rateLimitLimit: 50, rateLimitWindowSeconds: 10 };
    expect(changesBetween(service, limited, SERVICE_AUDITED_FIELDS)).toEqual({
      rate_limit: { from: null, to: { limit: 50, window_seconds: 10 } },
    });
    expect(changesBetween(limited, { ...limited, updatedAt: 5 }, SERVICE_AUDITED_FIELDS)).toBeNull();
  });
});
