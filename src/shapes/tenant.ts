/** The tenant's public shapes: exactly four fields, whatever else the record grows (an allow-list). */
import { create } from "@bufbuild/protobuf";
import { type Tenant, TenantSchema } from "../../gen/intake/v1/tenant_pb.ts";
import type { TenantRecord } from "../domain/types.ts";
import { isoOfMs, ts } from "./time.ts";

export function tenantJson(record: TenantRecord) {
  return {
    id: record.id,
    name: record.name,
    permission_mode: record.permissionMode,
    created_at: isoOfMs(record.createdAt),
  };
}

export function tenantMessage(record: TenantRecord): Tenant {
  return create(TenantSchema, {
    id: record.id,
    name: record.name,
    permissionMode: record.permissionMode,
    createdAt: ts(record.createdAt),
  });
}
