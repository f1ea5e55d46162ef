/** The API token operations (docs/api.md "API tokens"). */
import { connectErrorFor } from "../rpc/errors.ts";
import { tokenJson } from "../shapes/tokens.ts";
import { json } from "./http.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import { ApiTokenRecord, CreateApiTokenBody, CreatedApiToken, IdParams, listOf, TokenPageQuery } from "./schemas.ts";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** Date.parse rolls impossible dates over (Feb 30 → Mar 2): the fields must survive a round trip. */
function isCalendarDateTime(match: RegExpExecArray): boolean {
  const n = (group: number) => Number(match[group] ?? 0);
  const wall = new Date(Date.UTC(n(1), n(2) - 1, n(3), n(4), n(5), n(6)));
  return (
    wall.getUTCFullYear() === n(1) &&
    wall.getUTCMonth() === n(2) - 1 &&
    wall.getUTCDate() === n(3) &&
    wall.getUTCHours() === n(4) &&
    wall.getUTCMinutes() === n(5) &&
    wall.getUTCSeconds() === n(6) &&
    n(8) <= 23 &&
    n(9) <= 59
  );
}

/** RFC 3339 with any offset → epoch ms; `null` = no expiry. */
function expiresAtMs(value: string | null | undefined): number | null {
  if (value === undefined || value === null) return null;
  const match = RFC3339.exec(value);
  const ms = match && isCalendarDateTime(match) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw connectErrorFor("invalid_request", "The request is invalid.", [
      { field: "expires_at", message: "must be an RFC 3339 timestamp, e.g. 2026-12-31T23:59:59Z" },
    ]);
  }
  return ms;
}

export function apiTokenOperations({ domain }: OperationDeps): Operation[] {
  const { tokens } = domain;
  const tag = "API tokens";
  return [
    operation({
      method: "POST",
      path: "/v1/api_tokens",
      rpc: "intake.v1.ApiTokenService/CreateApiToken",
      body: "json",
      errors: { 403: ["role_escalation"] },
      schemas: { body: CreateApiTokenBody, response: { 201: CreatedApiToken } },
      doc: { summary: "Mint a token (its credential is shown only here)", tag },
      handle: async (call) => {
        const { body } = call;
        const { record, token } = await tokens.issueToken(
          caller(call),
          { name: body.name, scope: body.scope, role: body.role, expiresAt: expiresAtMs(body.expires_at) },
          call.x.requestId,
        );
        return json(201, { ...tokenJson(record), token });
      },
    }),
    operation({
      method: "GET",
      path: "/v1/api_tokens",
      rpc: "intake.v1.ApiTokenService/ListApiTokens",
      native: "tokenPage",
      errors: { 400: ["invalid_request"] },
      schemas: { query: TokenPageQuery, response: { 200: listOf(ApiTokenRecord, "ApiTokenList") } },
      doc: { summary: "List tokens, newest first", tag },
      handle: async (call) => {
        const { limit, cursor, include_revoked } = call.query;
        const page = await tokens.listTokens(caller(call), { limit, cursor, includeRevoked: include_revoked ?? false });
        return json(200, { data: page.items.map(tokenJson), next_cursor: page.nextCursor });
      },
    }),
    operation({
      method: "GET",
      path: "/v1/api_tokens/:id",
      rpc: "intake.v1.ApiTokenService/GetApiToken",
      native: "none",
      errors: { 404: ["not_found"] },
      schemas: { params: IdParams, response: { 200: ApiTokenRecord } },
      doc: { summary: "Get a token's record (never its credential)", tag },
      handle: async (call) => json(200, tokenJson(await tokens.getToken(caller(call), call.params.id))),
    }),
    operation({
      method: "DELETE",
      path: "/v1/api_tokens/:id",
      rpc: "intake.v1.ApiTokenService/RevokeApiToken",
      errors: { 403: ["role_escalation"], 404: ["not_found"], 409: ["last_owner_token"] },
      schemas: { params: IdParams, response: { 200: ApiTokenRecord } },
      doc: { summary: "Revoke a token (idempotent; refused for the last active owner read_write token)", tag },
      handle: async (call) =>
        json(200, tokenJson(await tokens.revokeToken(caller(call), call.params.id, call.x.requestId))),
    }),
  ];
}
