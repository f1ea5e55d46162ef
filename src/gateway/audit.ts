import { create } from "@bufbuild/protobuf";
import { Elysia } from "elysia";
import { ListAuditEventsRequestSchema } from "../../gen/intake/v1/audit_pb.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { ELYSIA_SETTINGS, json } from "./http.ts";
import type { Kit } from "./kit.ts";
import { bearerSecurity } from "./responses.ts";
import { AuditEventRecord, AuditPageQuery, listOf } from "./schemas.ts";
import { auditJson } from "./serialize.ts";

export function auditRoutes(impls: RpcImpls, kit: Kit) {
  const { audit } = impls;
  return new Elysia({ ...ELYSIA_SETTINGS, name: "audit" }).use(kit.plugin).get(
    "/v1/audit_events",
    async ({ call, query }) => {
      const res = await audit.listAuditEvents(
        create(ListAuditEventsRequestSchema, {
          limit: query.limit,
          cursor: query.cursor,
          action: query.action,
          targetId: query.target_id,
        }),
        call,
      );
      return json(200, { data: res.data.map(auditJson), next_cursor: res.nextCursor ?? null });
    },
    {
      bearer: "intake.v1.AuditService/ListAuditEvents",
      query: AuditPageQuery,
      response: { 200: listOf(AuditEventRecord, "AuditEventList") },
      detail: {
        summary: "List audit events, newest first (owner or admin in role_based mode)",
        tags: ["Audit log"],
        security: bearerSecurity,
      },
    },
  );
}
