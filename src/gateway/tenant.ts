/** The tenant's operations (docs/api.md "Tenant"). */
import { andThen } from "../domain/maybe.ts";
import type { TenantRecord } from "../domain/types.ts";
import { onceEach } from "../rpc/memo.ts";
import { tenantJson } from "../shapes/tenant.ts";
import { json, jsonText } from "./http.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import { TenantRecordSchema, UpdateTenantBody } from "./schemas.ts";

export function tenantOperations({ domain }: OperationDeps): Operation[] {
  const { tenants } = domain;
  /** The JSON text of a cached tenant record, made once per record (rpc/memo.ts). */
  const tenantText = onceEach((record: TenantRecord) => JSON.stringify(tenantJson(record)));
  const tag = "Tenant";
  return [
    operation({
      method: "GET",
      path: "/v1/tenant",
      rpc: "intake.v1.TenantService/GetTenant",
      native: "none",
      schemas: { response: { 200: TenantRecordSchema } },
      doc: { summary: "The caller's tenant (exactly id, name, permission_mode, created_at)", tag },
      // Synchronous from the cached tenant to the answer (domain/maybe.ts).
      handle: (call) => andThen(tenants.getTenant(caller(call)), (record) => jsonText(200, tenantText(record))),
    }),
    operation({
      method: "PATCH",
      path: "/v1/tenant",
      rpc: "intake.v1.TenantService/UpdateTenant",
      body: "json",
      errors: { 400: ["permission_mode_immutable"] },
      schemas: { body: UpdateTenantBody, response: { 200: TenantRecordSchema } },
      doc: { summary: "Rename the tenant (owner only in role_based mode)", tag },
      handle: async (call) => {
        const { body } = call;
        const record = await tenants.renameTenant(
          caller(call),
          { name: body.name, permissionMode: "permission_mode" in body ? String(body.permission_mode) : undefined },
          call.x.requestId,
        );
        return json(200, tenantJson(record));
      },
    }),
  ];
}
