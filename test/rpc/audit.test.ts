/**
 * The audit log over RPC (intake.v1.AuditService/ListAuditEvents) on every transport, and the
 * request id of an RPC change: the one Intake answered that call with (`x-request-id`), on the
 * main port's Connect and gRPC-Web and on the h2c gRPC listener alike.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { AuditService } from "../../gen/intake/v1/audit_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { bearer, failure, type Served, serveWorld, TRANSPORTS, transportFor } from "./support.ts";

describe.each(TRANSPORTS)("%s", (name) => {
  let served: Served;

  beforeAll(async () => {
    served = await serveWorld();
  });
  afterAll(() => served.close());

  test("a change made over RPC is audited with the request id its response carried; ListAuditEvents reads it", async () => {
    const transport = transportFor(served, name);
    const services = createClient(ServiceRegistryService, transport);
    const audit = createClient(AuditService, transport);
    const owner = bearer(served.world.ownerToken);

    let requestId: string | null = null;
    const created = await services.createService(
      { serviceName: `svc-${name}` },
      { ...owner, onHeader: (headers) => (requestId = headers.get("x-request-id")) },
    );
    expect(requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const id = created.service?.id as string;
    let updateRequestId: string | null = null;
    await services.updateService(
      { id, isMonitored: false },
      { ...owner, onHeader: (headers) => (updateRequestId = headers.get("x-request-id")) },
    );

    const listed = await audit.listAuditEvents({ targetId: id }, owner);
    expect(listed.nextCursor).toBeUndefined();
    const [update, create] = listed.data;
    expect(create).toMatchObject({
      action: "service.create",
      actor: { type: "api_token", id: served.world.ownerTokenId },
      target: { type: "service", id },
      requestId: requestId as unknown as string,
    });
    expect(Object.keys(create?.changes ?? {})).toEqual([]);
    expect(update?.action).toBe("service.update");
    expect(update?.requestId).toBe(updateRequestId as unknown as string);
    const change = update?.changes.is_monitored;
    expect(change?.from && toJson(ValueSchema, change.from)).toBe(true);
    expect(change?.to && toJson(ValueSchema, change.to)).toBe(false);

    // The bootstrap's events: by the operator, without a request id.
    const boot = await audit.listAuditEvents({ action: "tenant.create" }, owner);
    expect(boot.data).toHaveLength(1);
    expect(boot.data[0]?.actor?.type).toBe("operator");
    expect(boot.data[0]?.actor?.id).toBeUndefined();
    expect(boot.data[0]?.requestId).toBeUndefined();
  });

  test("permission_denied admin_required for a member token; invalid_argument for an unknown action", async () => {
    const audit = createClient(AuditService, transportFor(served, name));
    const member = await served.world.mint({ name: `member-${name}`, role: "member" });
    const denied = await failure(audit.listAuditEvents({}, bearer(member.token)));
    expect(denied).toMatchObject({ code: "permission_denied", restCode: "admin_required" });
    const bad = await failure(audit.listAuditEvents({ action: "nope" }, bearer(served.world.ownerToken)));
    expect(bad).toMatchObject({ code: "invalid_argument", restCode: "invalid_request", fields: ["action"] });
  });
});
