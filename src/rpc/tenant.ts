import { create } from "@bufbuild/protobuf";
import {
  type GetTenantResponse,
  GetTenantResponseSchema,
  type TenantService,
  UpdateTenantResponseSchema,
} from "../../gen/intake/v1/tenant_pb.ts";
import type { Tenants } from "../domain/tenant.ts";
import type { TenantRecord } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { principalOf, requestIdOf } from "./context.ts";
import { tenantMessage } from "./convert.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";

/**
 * GetTenant's answer, built once per tenant record and frozen: the route answers from the cached
 * record on every call, and building the message (a Timestamp with a BigInt) was about a tenth of
 * its in-process cost (bench/README.md). A renamed tenant is a new record, so a new answer.
 */
const answers = new WeakMap<TenantRecord, GetTenantResponse>();

function answerFor(record: TenantRecord): GetTenantResponse {
  let answer = answers.get(record);
  if (answer === undefined) {
    const tenant = tenantMessage(record);
    if (tenant.createdAt) Object.freeze(tenant.createdAt);
    answer = Object.freeze(create(GetTenantResponseSchema, { tenant: Object.freeze(tenant) }));
    answers.set(record, answer);
  }
  return answer;
}

export function createTenantImpl(deps: { tenants: Tenants; logger: Logger }): Impl<typeof TenantService> {
  const { tenants, logger } = deps;
  return {
    getTenant: rpcMethod(logger, async (_req, ctx) => answerFor(await tenants.getTenant(principalOf(ctx)))),
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
