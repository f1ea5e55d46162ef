import { create } from "@bufbuild/protobuf";
import {
  GetTenantResponseSchema,
  type TenantService,
  UpdateTenantResponseSchema,
} from "../../gen/intake/v1/tenant_pb.ts";
import type { Tenants } from "../domain/tenant.ts";
import type { Logger } from "../logger.ts";
import { principalOf, requestIdOf } from "./context.ts";
import { tenantMessage } from "./convert.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";

export function createTenantImpl(deps: { tenants: Tenants; logger: Logger }): Impl<typeof TenantService> {
  const { tenants, logger } = deps;
  return {
    getTenant: rpcMethod(logger, async (_req, ctx) => {
      return create(GetTenantResponseSchema, { tenant: tenantMessage(await tenants.getTenant(principalOf(ctx))) });
    }),
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
