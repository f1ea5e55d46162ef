import { create } from "@bufbuild/protobuf";
import { type AuditService, ListAuditEventsResponseSchema } from "../../gen/intake/v1/audit_pb.ts";
import type { Audit } from "../domain/audit.ts";
import type { Logger } from "../logger.ts";
import { auditMessage } from "../shapes/audit.ts";
import { principalOf } from "./context.ts";
import type { Impl } from "./impl.ts";
import { rpcMethod } from "./method.ts";

export function createAuditImpl(deps: { audit: Audit; logger: Logger }): Impl<typeof AuditService> {
  const { audit, logger } = deps;
  return {
    listAuditEvents: rpcMethod(logger, async (req, ctx) => {
      const page = await audit.listAuditEvents(principalOf(ctx), {
        limit: req.limit,
        cursor: req.cursor,
        action: req.action,
        targetId: req.targetId,
      });
      return create(ListAuditEventsResponseSchema, {
        data: page.items.map(auditMessage),
        nextCursor: page.nextCursor ?? undefined,
      });
    }),
  };
}
