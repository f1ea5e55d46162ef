import { create } from "@bufbuild/protobuf";
import { Elysia } from "elysia";
import type { Tenant } from "../../gen/intake/v1/tenant_pb.ts";
import { GetTenantRequestSchema, UpdateTenantRequestSchema } from "../../gen/intake/v1/tenant_pb.ts";
import { andThen } from "../domain/maybe.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { onceEach } from "../rpc/memo.ts";
import { ELYSIA_SETTINGS, json } from "./http.ts";
import type { Kit } from "./kit.ts";
import { okJson, type ReadRoute } from "./read-lane.ts";
import { bearerSecurity } from "./responses.ts";
import { TenantRecordSchema, UpdateTenantBody } from "./schemas.ts";
import { tenantJson } from "./serialize.ts";

const getTenantRequest = create(GetTenantRequestSchema);

/** The JSON text of a tenant message, once per message: GetTenant answers the same one while the record is cached. */
const tenantText = onceEach((tenant: Tenant) => JSON.stringify(tenantJson(tenant)));

/** GET /v1/tenant, for the gateway's route and the read lane: synchronous from the cached tenant to the text (domain/maybe.ts). */
export function tenantRead(impls: RpcImpls): ReadRoute {
  return {
    path: "/v1/tenant",
    method: "intake.v1.TenantService/GetTenant",
    query: "none",
    answer: (call) => andThen(impls.tenant.getTenant(getTenantRequest, call), (res) => tenantText(res.tenant!)),
  };
}

export function tenantRoutes(impls: RpcImpls, kit: Kit, read: ReadRoute) {
  const { tenant } = impls;
  const tags = ["Tenant"];
  return new Elysia({ ...ELYSIA_SETTINGS, name: "tenant" })
    .use(kit.plugin)
    .get(read.path, ({ call }) => andThen(read.answer(call, {}), okJson), {
      bearer: read.method,
      response: { 200: TenantRecordSchema },
      detail: {
        summary: "The caller's tenant (exactly id, name, permission_mode, created_at)",
        tags,
        security: bearerSecurity,
      },
    })
    .patch(
      "/v1/tenant",
      async ({ call, body }) => {
        const res = await tenant.updateTenant(
          create(UpdateTenantRequestSchema, {
            name: body.name,
            permissionMode: "permission_mode" in body ? String(body.permission_mode) : undefined,
          }),
          call,
        );
        return json(200, tenantJson(res.tenant!));
      },
      {
        withBody: { method: "intake.v1.TenantService/UpdateTenant" },
        body: UpdateTenantBody,
        response: { 200: TenantRecordSchema },
        detail: { summary: "Rename the tenant (owner only in role_based mode)", tags, security: bearerSecurity },
      },
    );
}
