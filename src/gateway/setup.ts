/**
 * `POST /v1/setup` (docs/console.md): a one-time setup code → a new tenant and its first owner
 * read_write token, shown once. No bearer token: the code in the body is the credential.
 */
import { create } from "@bufbuild/protobuf";
import { Elysia } from "elysia";
import { RedeemSetupCodeRequestSchema } from "../../gen/intake/v1/setup_pb.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { ELYSIA_SETTINGS, json } from "./http.ts";
import type { Kit } from "./kit.ts";
import { SetupBody, SetupResult } from "./schemas.ts";

export function setupRoutes(impls: RpcImpls, kit: Kit) {
  const { setup } = impls;
  return new Elysia({ ...ELYSIA_SETTINGS, name: "setup" }).use(kit.plugin).post(
    "/v1/setup",
    async ({ call, body }) => {
      const res = await setup.redeemSetupCode(
        create(RedeemSetupCodeRequestSchema, {
          setupCode: body.setup_code,
          tenantName: body.tenant_name,
          permissionMode: body.permission_mode,
        }),
        call,
      );
      return json(201, { tenant_id: res.tenantId, token_id: res.tokenId, token: res.token });
    },
    {
      openWithBody: true,
      body: SetupBody,
      // Error statuses and their codes: src/gateway/operations.ts.
      response: { 201: SetupResult },
      detail: {
        summary: "Redeem a one-time setup code: a new tenant and its first owner token (shown once)",
        description:
          "What the console's setup page calls. The body is judged first (400 leaves the code unused); an unknown, used or expired code is 401 invalid_setup_code. A code works once across all instances.",
        tags: ["Setup"],
        security: [],
      },
    },
  );
}
