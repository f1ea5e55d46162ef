/** The audit log's operation (docs/api.md "Audit log"). */
import { auditJson } from "../shapes/audit.ts";
import { json } from "./http.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import { AuditEventRecord, AuditPageQuery, listOf } from "./schemas.ts";

export function auditOperations({ domain }: OperationDeps): Operation[] {
  const { audit } = domain;
  return [
    operation({
      method: "GET",
      path: "/v1/audit_events",
      rpc: "intake.v1.AuditService/ListAuditEvents",
      errors: { 400: ["invalid_request"] },
      schemas: { query: AuditPageQuery, response: { 200: listOf(AuditEventRecord, "AuditEventList") } },
      doc: { summary: "List audit events, newest first (owner or admin in role_based mode)", tag: "Audit log" },
      handle: async (call) => {
        const { query } = call;
        const page = await audit.listAuditEvents(caller(call), {
          limit: query.limit,
          cursor: query.cursor,
          action: query.action,
          targetId: query.target_id,
        });
        return json(200, { data: page.items.map(auditJson), next_cursor: page.nextCursor });
      },
    }),
  ];
}
