import { create } from "@bufbuild/protobuf";
import {
  type GetTenantResponse,
  GetTenantResponseSchema,
  type TenantService,
  UpdateTenantResponseSchema,
} from "../../gen/intake/v1/tenant_pb.ts";
import { andThen } from "../domain/maybe.ts";
import type { Tenants } from "../domain/tenant.ts";
import type { TenantRecord } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { tenantMessage } from "../shapes/tenant.ts";
import { principalOf, requestIdOf } from "./context.ts";
import type { Impl } from "./impl.ts";
import { onceEach } from "./memo.ts";
import { rpcMethod } from "./method.ts";

/**
 * GetTenant's answer, once per cached tenant record (memo.ts): building the message (a Timestamp
 * with a BigInt) is a visible part of the call's cost.
 */
const answerFor = onceEach(
  (record: TenantRecord): GetTenantResponse =>
    create(GetTenantResponseSchema, { tenant: Object.freeze(tenantMessage(record)) }),
);

export function createTenantImpl(deps: { tenants: Tenants; logger: Logger }): Impl<typeof TenantService> {
  const { tenants, logger } = deps;
  return {
    getTenant: rpcMethod(logger, (_req, ctx) => andThen(tenants.getTenant(principalOf(ctx)), answerFor)),
    updateTenant: rpcMethod(logger, async (req, ctx) => {
      const tenant = await tenants.renameTenant(
        principalOf(ctx),
        { name: req.name, permissionMode: req.permissionMode },
        requestIdOf(ctx),
      );
      return create(UpdateTenantResponseSchema, { tenant: tenantMessage(tenant) });
    }),
  };
}
