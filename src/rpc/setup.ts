import { create } from "@bufbuild/protobuf";
import { RedeemSetupCodeResponseSchema, type SetupService } from "../../gen/intake/v1/setup_pb.ts";
import { formatId } from "../domain/ids.ts";
import type { Onboarding } from "../domain/onboarding.ts";
import type { Logger } from "../logger.ts";
import { requestIdOf } from "./context.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";

/** The console's setup page (docs/console.md): no bearer token; the setup code is the credential. */
export function createSetupImpl(deps: { onboarding: Onboarding; logger: Logger }): Impl<typeof SetupService> {
  const { onboarding, logger } = deps;
  return {
    redeemSetupCode: rpcMethod(logger, async (req, ctx) => {
      const made = await onboarding.redeemSetupCode(
        { code: req.setupCode, tenantName: req.tenantName, permissionMode: req.permissionMode },
        requestIdOf(ctx),
      );
      return create(RedeemSetupCodeResponseSchema, {
        tenantId: made.tenant.id,
        tokenId: formatId("tok", made.record.id),
        token: made.token,
      });
    }),
  };
}
