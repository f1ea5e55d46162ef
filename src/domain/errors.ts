/** Every error code of the contract (docs/api.md). The rpc layer maps each to a Connect code and an HTTP status in one table. */
export type ErrorCode =
  | "invalid_request"
  | "permission_mode_immutable"
  | "service_name_immutable"
  | "search_disabled"
  | "missing_credentials"
  | "invalid_credentials"
  | "invalid_signature"
  | "invalid_setup_code"
  | "token_scope_insufficient"
  | "owner_required"
  | "role_escalation"
  | "admin_required"
  | "not_found"
  | "method_not_allowed"
  | "service_name_taken"
  | "ingestion_paused"
  | "last_owner_token"
  | "incident_resolved"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "internal_error"
  | "unavailable";

export interface FieldIssue {
  field: string;
  message: string;
}

/** A rule was broken in a way the caller can act on. `message` is one human sentence, safe to show. */
export class DomainError extends Error {
  override readonly name = "DomainError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldIssue[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function invalid(field: string, message: string): DomainError {
  return new DomainError("invalid_request", "The request is invalid.", [{ field, message }]);
}

export function notFound(what: string): DomainError {
  return new DomainError("not_found", `No such ${what}.`);
}
