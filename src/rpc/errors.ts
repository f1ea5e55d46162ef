/**
 * The one error table: every REST `code` with its HTTP status and Connect code. The rpc layer
 * turns domain errors into ConnectErrors that carry the REST code as an `intake.v1.ErrorDetail`;
 * the REST edge answers a domain error (or such a ConnectError) with the HTTP status of this same
 * table (gateway/errors.ts).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorDetail, ErrorDetailSchema } from "../../gen/intake/v1/errors_pb.ts";
import { DomainError, type ErrorCode, type FieldIssue } from "../domain/errors.ts";
import { RateLimitedError } from "../domain/rate-limits.ts";
import type { Logger } from "../logger.ts";
import { setRateLimitHeaders } from "./rate-limit.ts";

export const ERROR_TABLE: Record<ErrorCode, { http: number; connect: Code }> = {
  invalid_request: { http: 400, connect: Code.InvalidArgument },
  permission_mode_immutable: { http: 400, connect: Code.InvalidArgument },
  service_name_immutable: { http: 400, connect: Code.InvalidArgument },
  search_disabled: { http: 400, connect: Code.FailedPrecondition },
  missing_credentials: { http: 401, connect: Code.Unauthenticated },
  invalid_credentials: { http: 401, connect: Code.Unauthenticated },
  invalid_signature: { http: 401, connect: Code.Unauthenticated },
  invalid_setup_code: { http: 401, connect: Code.Unauthenticated },
  token_scope_insufficient: { http: 403, connect: Code.PermissionDenied },
  owner_required: { http: 403, connect: Code.PermissionDenied },
  role_escalation: { http: 403, connect: Code.PermissionDenied },
  admin_required: { http: 403, connect: Code.PermissionDenied },
  not_found: { http: 404, connect: Code.NotFound },
  method_not_allowed: { http: 405, connect: Code.Unimplemented },
  service_name_taken: { http: 409, connect: Code.AlreadyExists },
  ingestion_paused: { http: 409, connect: Code.FailedPrecondition },
  last_owner_token: { http: 409, connect: Code.FailedPrecondition },
  incident_resolved: { http: 409, connect: Code.FailedPrecondition },
  // gRPC reports oversized messages as RESOURCE_EXHAUSTED too.
  payload_too_large: { http: 413, connect: Code.ResourceExhausted },
  unsupported_media_type: { http: 415, connect: Code.InvalidArgument },
  rate_limited: { http: 429, connect: Code.ResourceExhausted },
  internal_error: { http: 500, connect: Code.Internal },
  unavailable: { http: 503, connect: Code.Unavailable },
};

/** The only message a 500 ever carries: its cause goes to the log, never to the caller. */
export const INTERNAL_MESSAGE = "Something went wrong on our side.";

export function connectErrorFor(
  code: ErrorCode,
  message: string,
  details?: FieldIssue[],
  cause?: unknown,
): ConnectError {
  const value = { code, details: details ?? [] };
  return new ConnectError(message, ERROR_TABLE[code].connect, undefined, [{ desc: ErrorDetailSchema, value }], cause);
}

/**
 * Domain errors keep their code and message; anything else is logged with its cause and
 * answered with a fixed message, never its own text.
 */
export function toConnectError(error: unknown, logger: Logger): ConnectError {
  if (error instanceof RateLimitedError) {
    // The 429 carries its RateLimit fields and Retry-After with it: as response headers on
    // the REST gateway and Connect, as trailers on gRPC and gRPC-Web (docs/rpc.md).
    const limited = connectErrorFor(error.code, error.message, undefined, error);
    setRateLimitHeaders(limited.metadata, error.decision);
    return limited;
  }
  if (error instanceof DomainError) return connectErrorFor(error.code, error.message, error.details, error);
  if (error instanceof ConnectError && restErrorOf(error)) return error;
  logger.error("internal error", { error });
  return connectErrorFor("internal_error", INTERNAL_MESSAGE, undefined, error);
}

export interface RestError {
  code: ErrorCode;
  message: string;
  details: FieldIssue[];
}

/** The REST form of an error raised by the rpc layer, or null when it is not one of ours. */
export function restErrorOf(error: ConnectError): RestError | null {
  const [detail] = error.findDetails(ErrorDetailSchema) as ErrorDetail[];
  if (!detail || !(detail.code in ERROR_TABLE)) return null;
  return {
    code: detail.code as ErrorCode,
    message: error.rawMessage,
    details: detail.details.map((d) => ({ field: d.field, message: d.message })),
  };
}
