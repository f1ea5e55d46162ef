import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Elysia } from "elysia";
import {
  CreateApiTokenRequestSchema,
  GetApiTokenRequestSchema,
  ListApiTokensRequestSchema,
  RevokeApiTokenRequestSchema,
} from "../../gen/intake/v1/api_tokens_pb.ts";
import { andThen } from "../domain/maybe.ts";
import { connectErrorFor } from "../rpc/errors.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { ELYSIA_SETTINGS, json } from "./http.ts";
import type { Kit } from "./kit.ts";
import { okJson, type ReadRoute } from "./read-lane.ts";
import { bearerSecurity } from "./responses.ts";
import { ApiTokenRecord, CreateApiTokenBody, CreatedApiToken, IdParams, listOf, TokenPageQuery } from "./schemas.ts";
import { tokenJson } from "./serialize.ts";

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

/** GET /v1/api_tokens and GET /v1/api_tokens/:id, for the gateway's routes and the read lane. */
export function apiTokenReads(impls: RpcImpls): { list: ReadRoute; get: ReadRoute } {
  const { apiTokens } = impls;
  return {
    list: {
      path: "/v1/api_tokens",
      method: "intake.v1.ApiTokenService/ListApiTokens",
      query: "tokenPage",
      answer: (call, { limit, cursor, include_revoked }) =>
        andThen(
          apiTokens.listApiTokens(
            create(ListApiTokensRequestSchema, { limit, cursor, includeRevoked: include_revoked ?? false }),
            call,
          ),
          (res) => JSON.stringify({ data: res.data.map(tokenJson), next_cursor: res.nextCursor ?? null }),
        ),
    },
    get: {
      path: "/v1/api_tokens/:id",
      method: "intake.v1.ApiTokenService/GetApiToken",
      query: "none",
      answer: (call, { id }) =>
        andThen(apiTokens.getApiToken(create(GetApiTokenRequestSchema, { id }), call), (res) =>
          JSON.stringify(tokenJson(res.apiToken!)),
        ),
    },
  };
}

export function apiTokenRoutes(impls: RpcImpls, kit: Kit, reads: ReturnType<typeof apiTokenReads>) {
  const { apiTokens } = impls;
  const tags = ["API tokens"];
  return new Elysia({ ...ELYSIA_SETTINGS, name: "api-tokens" })
    .use(kit.plugin)
    .post(
      "/v1/api_tokens",
      async ({ call, body }) => {
        const expiresAt = expiresAtMs(body.expires_at);
        const res = await apiTokens.createApiToken(
          create(CreateApiTokenRequestSchema, {
            name: body.name,
            scope: body.scope,
            role: body.role,
            expiresAt: expiresAt === null ? undefined : timestampFromMs(expiresAt),
          }),
          call,
        );
        return json(201, { ...tokenJson(res.apiToken!), token: res.token });
      },
      {
        withBody: { method: "intake.v1.ApiTokenService/CreateApiToken" },
        body: CreateApiTokenBody,
        response: { 201: CreatedApiToken },
        detail: { summary: "Mint a token (its credential is shown only here)", tags, security: bearerSecurity },
      },
    )
    .get(
      reads.list.path,
      ({ call, query }) =>
        andThen(
          reads.list.answer(call, { limit: query.limit, cursor: query.cursor, include_revoked: query.include_revoked }),
          okJson,
        ),
      {
        bearer: reads.list.method,
        query: TokenPageQuery,
        response: { 200: listOf(ApiTokenRecord, "ApiTokenList") },
        detail: { summary: "List tokens, newest first", tags, security: bearerSecurity },
      },
    )
    .get(reads.get.path, ({ call, params }) => andThen(reads.get.answer(call, { id: params.id }), okJson), {
      bearer: reads.get.method,
      params: IdParams,
      response: { 200: ApiTokenRecord },
      detail: { summary: "Get a token's record (never its credential)", tags, security: bearerSecurity },
    })
    .delete(
      "/v1/api_tokens/:id",
      async ({ call, params }) => {
        const res = await apiTokens.revokeApiToken(create(RevokeApiTokenRequestSchema, { id: params.id }), call);
        return json(200, tokenJson(res.apiToken!));
      },
      {
        bearer: "intake.v1.ApiTokenService/RevokeApiToken",
        params: IdParams,
        response: { 200: ApiTokenRecord },
        detail: {
          summary: "Revoke a token (idempotent; refused for the last active owner read_write token)",
          tags,
          security: bearerSecurity,
        },
      },
    );
}
