import { create } from "@bufbuild/protobuf";
import {
  type ApiTokenService,
  CreateApiTokenResponseSchema,
  GetApiTokenResponseSchema,
  ListApiTokensResponseSchema,
  RevokeApiTokenResponseSchema,
} from "../../gen/intake/v1/api_tokens_pb.ts";
import type { Tokens } from "../domain/tokens.ts";
import type { Logger } from "../logger.ts";
import { msOf } from "../shapes/time.ts";
import { tokenMessage } from "../shapes/tokens.ts";
import { principalOf, requestIdOf } from "./context.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";

export function createApiTokenServiceImpl(deps: { tokens: Tokens; logger: Logger }): Impl<typeof ApiTokenService> {
  const { tokens, logger } = deps;
  return {
    createApiToken: rpcMethod(logger, async (req, ctx) => {
      const { record, token } = await tokens.issueToken(
        principalOf(ctx),
        {
          name: req.name,
          scope: req.scope,
          role: req.role,
          expiresAt: req.expiresAt ? msOf(req.expiresAt) : null,
        },
        requestIdOf(ctx),
      );
      return create(CreateApiTokenResponseSchema, { apiToken: tokenMessage(record), token });
    }),
    getApiToken: rpcMethod(logger, async (req, ctx) => {
      const record = await tokens.getToken(principalOf(ctx), req.id);
      return create(GetApiTokenResponseSchema, { apiToken: tokenMessage(record) });
    }),
    listApiTokens: rpcMethod(logger, async (req, ctx) => {
      const page = await tokens.listTokens(principalOf(ctx), {
        limit: req.limit,
        cursor: req.cursor,
        includeRevoked: req.includeRevoked,
      });
      return create(ListApiTokensResponseSchema, {
        data: page.items.map(tokenMessage),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),
    revokeApiToken: rpcMethod(logger, async (req, ctx) => {
      const record = await tokens.revokeToken(principalOf(ctx), req.id, requestIdOf(ctx));
      return create(RevokeApiTokenResponseSchema, { apiToken: tokenMessage(record) });
    }),
  };
}
