/**
 * What the OpenAPI document says about each /v1 operation beyond its schemas: the RPC method it
 * translates onto (its `operationId` is that method's name) and the error codes it can answer,
 * by status. One row per route, keyed "METHOD /path" as the document writes paths; a route
 * without a row fails test/gateway/openapi.test.ts.
 *
 * Codes implied by the method's access policy (401 credentials, 403 scope and owner), by a JSON
 * body (400, 413, 415), by a rate limit (429) and by the store (500, 503) are added by
 * `errorCodesOf`; a row lists only what its handler adds.
 */
import type { ErrorCode } from "../domain/errors.ts";
import { type MethodName, POLICY } from "../rpc/policy.ts";

export type ErrorCodes = Partial<Record<number, ErrorCode[]>>;

export interface OperationRow {
  /** The RPC method behind the route (REST and RPC share one implementation). */
  rpc: MethodName;
  /** Codes this operation's handler can answer, beyond the implied ones. */
  errors: ErrorCodes;
  /** False for routes no rate limit applies to (health). Default true. */
  limited?: boolean;
}

export const OPERATIONS: Record<string, OperationRow> = {
  "GET /v1/health": { rpc: "intake.v1.HealthService/GetHealth", errors: {}, limited: false },
  "GET /v1/tenant": { rpc: "intake.v1.TenantService/GetTenant", errors: {} },
  "PATCH /v1/tenant": {
    rpc: "intake.v1.TenantService/UpdateTenant",
    errors: { 400: ["permission_mode_immutable"] },
  },
  "POST /v1/api_tokens": { rpc: "intake.v1.ApiTokenService/CreateApiToken", errors: { 403: ["role_escalation"] } },
  "GET /v1/api_tokens": { rpc: "intake.v1.ApiTokenService/ListApiTokens", errors: { 400: ["invalid_request"] } },
  "GET /v1/api_tokens/{id}": { rpc: "intake.v1.ApiTokenService/GetApiToken", errors: { 404: ["not_found"] } },
  "DELETE /v1/api_tokens/{id}": {
    rpc: "intake.v1.ApiTokenService/RevokeApiToken",
    errors: { 403: ["role_escalation"], 404: ["not_found"], 409: ["last_owner_token"] },
  },
  "POST /v1/services": {
    rpc: "intake.v1.ServiceRegistryService/CreateService",
    errors: { 409: ["service_name_taken"] },
  },
  "GET /v1/audit_events": { rpc: "intake.v1.AuditService/ListAuditEvents", errors: { 400: ["invalid_request"] } },
  "GET /v1/services": { rpc: "intake.v1.ServiceRegistryService/ListServices", errors: { 400: ["invalid_request"] } },
  "GET /v1/services/{id}": { rpc: "intake.v1.ServiceRegistryService/GetService", errors: { 404: ["not_found"] } },
  "PATCH /v1/services/{id}": {
    rpc: "intake.v1.ServiceRegistryService/UpdateService",
    errors: { 400: ["service_name_immutable"], 404: ["not_found"] },
  },
  "DELETE /v1/services/{id}": {
    rpc: "intake.v1.ServiceRegistryService/DeleteService",
    errors: { 404: ["not_found"] },
  },
  "POST /v1/services/{id}/secret_rotations": {
    rpc: "intake.v1.ServiceRegistryService/RotateSigningSecret",
    errors: { 404: ["not_found"] },
  },
  "POST /v1/ingest/{service_id}": {
    rpc: "intake.v1.IngestService/Ingest",
    // Any Content-Type is accepted (no 415); the checks are the domain's (docs/ingest.md).
    errors: {
      400: ["invalid_request"],
      401: ["invalid_signature"],
      409: ["ingestion_paused"],
      413: ["payload_too_large"],
    },
  },
  "POST /v1/setup": {
    rpc: "intake.v1.SetupService/RedeemSetupCode",
    // No bearer token: the code in the body is the credential (docs/console.md); no rate
    // limit is keyed to it (docs/rate-limits.md).
    errors: { 401: ["invalid_setup_code"] },
    limited: false,
  },
  "GET /v1/services/{id}/events": {
    rpc: "intake.v1.IngestService/ListEvents",
    errors: { 400: ["invalid_request"], 404: ["not_found"] },
  },
  "GET /v1/feed": {
    rpc: "intake.v1.EventFeedService/ListFeed",
    errors: { 400: ["invalid_request"], 404: ["not_found"] },
  },
  "GET /v1/feed/stream": {
    rpc: "intake.v1.EventFeedService/StreamFeed",
    errors: { 400: ["invalid_request"], 404: ["not_found"] },
  },
  "GET /v1/events/{id}": { rpc: "intake.v1.IngestService/GetEvent", errors: { 404: ["not_found"] } },
};

/** `CreateApiToken` for `intake.v1.ApiTokenService/CreateApiToken`. */
export function operationIdOf(row: OperationRow): string {
  return row.rpc.slice(row.rpc.lastIndexOf("/") + 1);
}

/** Every code the operation can answer, by HTTP status, sorted. */
export function errorCodesOf(row: OperationRow, hasJsonBody: boolean): ErrorCodes {
  const out = new Map<number, Set<ErrorCode>>();
  const add = (status: number, ...codes: ErrorCode[]) => {
    const set = out.get(status) ?? new Set<ErrorCode>();
    for (const code of codes) set.add(code);
    out.set(status, set);
  };
  const policy = POLICY[row.rpc];
  if (policy.bearer) {
    add(401, "missing_credentials", "invalid_credentials");
    if (policy.mutating) add(403, "token_scope_insufficient");
    if (policy.ownerOnly) add(403, "owner_required");
    if (policy.adminOnly) add(403, "admin_required");
  }
  if (hasJsonBody) {
    add(400, "invalid_request");
    add(413, "payload_too_large");
    add(415, "unsupported_media_type");
  }
  for (const [status, codes] of Object.entries(row.errors)) add(Number(status), ...(codes ?? []));
  if (row.limited !== false) add(429, "rate_limited");
  add(500, "internal_error");
  // Health answers from memory: it never waits on the store.
  if (row.rpc !== "intake.v1.HealthService/GetHealth") add(503, "unavailable");
  return Object.fromEntries([...out.entries()].sort(([a], [b]) => a - b).map(([s, c]) => [s, [...c].sort()]));
}
