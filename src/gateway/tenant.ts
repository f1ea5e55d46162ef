import { create } from "@bufbuild/protobuf";
import { Elysia } from "elysia";
import type { GetTenantResponse, Tenant } from "../../gen/intake/v1/tenant_pb.ts";
import { GetTenantRequestSchema, UpdateTenantRequestSchema } from "../../gen/intake/v1/tenant_pb.ts";
import { andThen } from "../domain/maybe.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { onceEach } from "../rpc/memo.ts";
import { ELYSIA_SETTINGS, json, jsonText } from "./http.ts";
import type { Kit } from "./kit.ts";
import { bearerSecurity } from "./responses.ts";
import { TenantRecordSchema, UpdateTenantBody } from "./schemas.ts";
import { tenantJson } from "./serialize.ts";

const getTenantRequest = create(GetTenantRequestSchema);

/** The JSON text of a tenant message, once per message: GetTenant answers the same one while the record is cached. */
const tenantText = onceEach((tenant: Tenant) => JSON.stringify(tenantJson(tenant)));

const answerTenant = (res: GetTenantResponse) => jsonText(200, tenantText(res.tenant!));

export function tenantRoutes(impls: RpcImpls, kit: Kit) {
  const { tenant } = impls;
  const tags = ["Tenant"];
  return new Elysia({ ...ELYSIA_SETTINGS, name: "tenant" })
    .use(kit.plugin)
    .get(
      "/v1/tenant",
      // No async layer of its own: synchronous from the cached tenant to the Response (domain/maybe.ts).
      ({ call }) => andThen(tenant.getTenant(getTenantRequest, call), answerTenant),
      {
        bearer: "intake.v1.TenantService/GetTenant",
        response: { 200: TenantRecordSchema },
        detail: {
          summary: "The caller's tenant (exactly id, name, permission_mode, created_at)",
          tags,
          security: bearerSecurity,
        },
      },
    )
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
