/**
 * The columns a service's update and rotation write, the same on both dialects (their drizzle
 * tables share the field names); the dialect only supplies the column to read the current
 * secret from.
 */
import type { SQL } from "drizzle-orm";
import type { SecretRotation, ServiceChanges } from "../domain/ports/store.ts";

/** ServiceChanges → the columns they set; a rate limit is written whole or cleared whole. */
export function serviceColumns(changes: ServiceChanges, now: number) {
  return {
    ...(changes.isMonitored !== undefined && { isMonitored: changes.isMonitored }),
    ...(changes.rateLimit !== undefined && {
      rateLimitLimit: changes.rateLimit?.limit ?? null,
      rateLimitWindowSeconds: changes.rateLimit?.windowSeconds ?? null,
    }),
    ...(changes.incidentAutoResolveSeconds !== undefined && {
      incidentAutoResolveSeconds: changes.incidentAutoResolveSeconds,
    }),
    ...(changes.signatureScheme !== undefined && { signatureScheme: changes.signatureScheme }),
    updatedAt: now,
  };
}

/**
 * A rotation's SET: the new secret, and the current one (`currentSecret`, the dialect's
 * `secret_ciphertext` column: the right-hand side of SET reads the row as it was before the
 * UPDATE) kept as the previous one until `previousExpiresAt`.
 */
export function rotationColumns(rotation: SecretRotation, currentSecret: SQL) {
  return {
    previousSecretCiphertext: currentSecret,
    secretCiphertext: rotation.ciphertext,
    signingSecretPrefix: rotation.prefix,
    secretRotatedAt: rotation.rotatedAt,
    previousSecretExpiresAt: rotation.previousExpiresAt,
    updatedAt: rotation.rotatedAt,
  };
}
