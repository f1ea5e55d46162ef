/**
 * Every failure leaves the gateway in the contract's one error shape. ConnectErrors raised by the
 * rpc layer carry the REST code; its HTTP status comes from the one table in rpc/errors.ts.
 */
import { ConnectError } from "@connectrpc/connect";
import { DomainError, type ErrorCode, type FieldIssue } from "../domain/errors.ts";
import { createRequestIdGenerator } from "../domain/ids.ts";
import type { Logger } from "../logger.ts";
import { ERROR_TABLE, INTERNAL_MESSAGE, restErrorOf, toConnectError } from "../rpc/errors.ts";
import { errorBody, json, REQUEST_ID_HEADER } from "./http.ts";

const WWW_AUTHENTICATE: Partial<Record<ErrorCode, string>> = {
  missing_credentials: 'Bearer realm="intake"',
  invalid_credentials: 'Bearer realm="intake", error="invalid_token"',
};

export function errorResponse(
  code: ErrorCode,
  message: string,
  requestId: string,
  details?: FieldIssue[],
  headers?: Record<string, string>,
): Response {
  const challenge = WWW_AUTHENTICATE[code];
  return json(ERROR_TABLE[code].http, errorBody(code, message, requestId, details), {
    ...(challenge && { "www-authenticate": challenge }),
    ...headers,
  });
}

interface ElysiaValidationIssue {
  path?: string;
  summary?: string;
  message?: string;
  schema?: { title?: unknown; error?: unknown };
}

/**
 * Elysia/TypeBox paths (`/expires_at`) → field names (`expires_at`, `a.b`). An issue without a
 * path (a coerced query value checked on its own) is named by its schema's title.
 */
export function validationIssues(error: unknown): FieldIssue[] {
  const all = (error as { all?: ElysiaValidationIssue[] }).all ?? [];
  const seen = new Set<string>();
  const issues: FieldIssue[] = [];
  for (const issue of all) {
    const title = typeof issue.schema?.title === "string" ? issue.schema.title : "body";
    const field = (issue.path ?? "").replace(/^\//, "").replaceAll("/", ".") || title;
    // A schema's own `error` text says what is expected where TypeBox's would not (a union).
    const custom = typeof issue.schema?.error === "string" ? issue.schema.error : undefined;
    const message = custom ?? issue.summary ?? issue.message ?? "is invalid";
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ field, message });
  }
  return issues.length > 0 ? issues : [{ field: "body", message: "does not match the schema" }];
}

/**
 * The answer to whatever a step of the edge raised: a domain error or a ConnectError of ours
 * keeps its code (its status from the one table, rpc/errors.ts); anything else is logged with
 * its cause and the request id, and answered with the fixed 500.
 */
export function responseForError(error: unknown, requestId: string, logger: Logger): Response {
  const rest =
    error instanceof DomainError || error instanceof ConnectError ? restErrorOf(toConnectError(error, logger)) : null;
  if (rest) return errorResponse(rest.code, rest.message, requestId, rest.details);
  logger.error("unhandled error in gateway", { request_id: requestId, error });
  return errorResponse("internal_error", INTERNAL_MESSAGE, requestId);
}

/**
 * Bun.serve's `error` handler: the answer to an error that escaped every handler (the gateway
 * answers its own). The contract's 500 with a fresh request id, logged with its cause; never Bun's
 * development page, which shows the error's message and stack to the caller.
 */
export function escapedErrorHandler(logger: Logger): (error: Error) => Response {
  const newRequestId = createRequestIdGenerator();
  return (error) => {
    const requestId = newRequestId();
    logger.error("unhandled error in the listener", { request_id: requestId, error });
    return errorResponse("internal_error", INTERNAL_MESSAGE, requestId, undefined, {
      [REQUEST_ID_HEADER]: requestId,
    });
  };
}
