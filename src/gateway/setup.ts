/**
 * `POST /v1/setup` (docs/console.md): a one-time setup code → a new tenant and its first owner
 * read_write token, shown once. No bearer token: the code in the body is the credential.
 */
import { formatId } from "../domain/ids.ts";
import { json } from "./http.ts";
import { type Operation, type OperationDeps, operation } from "./operation.ts";
import { SetupBody, SetupResult } from "./schemas.ts";

export function setupOperations({ domain }: OperationDeps): Operation[] {
  const { onboarding } = domain;
  return [
    operation({
      method: "POST",
      path: "/v1/setup",
      rpc: "intake.v1.SetupService/RedeemSetupCode",
      body: "json",
      // No rate limit is keyed to it (docs/rate-limits.md).
      limited: false,
      errors: { 401: ["invalid_setup_code"] },
      schemas: { body: SetupBody, response: { 201: SetupResult } },
      doc: {
        summary: "Redeem a one-time setup code: a new tenant and its first owner token (shown once)",
        description:
          "What the console's setup page calls. The body is judged first (400 leaves the code unused); an unknown, used or expired code is 401 invalid_setup_code. A code works once across all instances.",
        tag: "Setup",
      },
      handle: async ({ x, body }) => {
        const made = await onboarding.redeemSetupCode(
          { code: body.setup_code, tenantName: body.tenant_name, permissionMode: body.permission_mode },
          x.requestId,
        );
        return json(201, { tenant_id: made.tenant.id, token_id: formatId("tok", made.record.id), token: made.token });
      },
    }),
  ];
}
