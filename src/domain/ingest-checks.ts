/**
 * What ingest checks before it commits (SPEC §19): a payload, an idempotency key, a signature
 * verdict and its 401, and the outcome each refusal is reported as.
 */
import { DomainError, invalid } from "./errors.ts";
import type { IngestOutcome, SignatureFailureReason } from "./ports/observer.ts";
import type { SignatureVerdict } from "./signing.ts";

// The same for both schemes (§19), so the answer does not tell which one a service uses.
const INVALID_SIGNATURE =
  "The signature (X-Service-Signature, or the webhook-* headers) is missing, malformed, stale or does not match.";
// Visible ASCII (VCHAR, %x21-7E): what survives every proxy and log unchanged.
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
// ignoreBOM keeps a leading U+FEFF in the text, so JSON.parse rejects it: a BOM embedded
// verbatim in a listing would make the listing invalid JSON.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The 401 of every refused signature, carrying why as data (docs/operations.md). The reason is
 * for the operator's access log and metrics: the rpc layer records it beside the call, and the
 * answer (code and message) is the same for all of them, so it is no oracle for ids or secrets.
 */
export class SignatureRefused extends DomainError {
  constructor(readonly reason: SignatureFailureReason) {
    super("invalid_signature", INVALID_SIGNATURE);
  }
}

export function invalidSignature(reason: SignatureFailureReason): SignatureRefused {
  return new SignatureRefused(reason);
}

export const VERDICT_REASONS: Record<Exclude<SignatureVerdict, { ok: true }>["reason"], SignatureFailureReason> = {
  // An absent header is a malformed one: nothing in it can be parsed.
  missing: "malformed_signature_header",
  malformed: "malformed_signature_header",
  stale: "timestamp_outside_tolerance",
  mismatch: "no_matching_signature",
};

export const OUTCOMES: Partial<Record<DomainError["code"], IngestOutcome>> = {
  invalid_signature: "invalid_signature",
  ingestion_paused: "paused",
  invalid_request: "invalid_request",
  payload_too_large: "payload_too_large",
  rate_limited: "rate_limited",
  unavailable: "unavailable",
};

/** A UTF-8 JSON object, or the 400 that says why not (exported for the bench's ingest floor). */
export function checkPayload(payload: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(payload));
  } catch {
    throw invalid("body", "must be valid UTF-8 JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid("body", "must be a JSON object");
  }
  return value as Record<string, unknown>;
}
