/**
 * Every RPC method on real listeners, over Connect JSON, Connect binary and gRPC-Web on the
 * main port and over gRPC on the h2c port, with the error mapping of docs/rpc.md.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { HealthService } from "../../gen/intake/v1/health_pb.ts";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import { sign } from "../support/signing.ts";
import { bearer, failure, type Served, serveWorld, TRANSPORTS, transportFor } from "./support.ts";

describe.each(TRANSPORTS)("%s", (name) => {
  let served: Served;
  let owner: ReturnType<typeof bearer>;
  let clients: ReturnType<typeof makeClients>;

  function makeClients() {
    const transport = transportFor(served, name);
    return {
      tokens: createClient(ApiTokenService, transport),
      services: createClient(ServiceRegistryService, transport),
      tenant: createClient(TenantService, transport),
      ingest: createClient(IngestService, transport),
      health: createClient(HealthService, transport),
    };
  }

  beforeAll(async () => {
    served = await serveWorld();
    owner = bearer(served.world.ownerToken);
    clients = makeClients();
  });
  afterAll(() => served.close());

  test("GetHealth answers ok and the version without a token", async () => {
    const res = await clients.health.getHealth({});
    expect(res.status).toBe("ok");
    expect(res.version).toBe(served.world.app.config.version);
  });

  test("CreateApiToken → GetApiToken → ListApiTokens → RevokeApiToken", async () => {
    const expires = served.world.clock.now() + 86_400_000;
    const created = await clients.tokens.createApiToken(
      { name: `t-${name}`, scope: "read_write", role: "admin", expiresAt: timestampFromMs(expires) },
      owner,
    );
    expect(created.token).toMatch(/^service_live_[0-9A-Za-z]{43}$/);
    const record = created.apiToken!;
    expect(record.id).toMatch(/^tok_[0-9a-f]{32}$/);
    expect(record.scope).toBe("read_write");
    expect(record.role).toBe("admin");
    expect(record.createdBy).toBe(served.world.ownerTokenId);
    expect(timestampDate(record.expiresAt!).getTime()).toBe(expires);

    const got = await clients.tokens.getApiToken({ id: record.id }, owner);
    expect(got.apiToken?.name).toBe(`t-${name}`);

    const listed = await clients.tokens.listApiTokens({ limit: 100 }, owner);
    expect(listed.data.map((t) => t.id)).toContain(record.id);

    const revoked = await clients.tokens.revokeApiToken({ id: record.id }, owner);
    expect(revoked.apiToken?.revokedAt).toBeDefined();
    const without = await clients.tokens.listApiTokens({ limit: 100 }, owner);
    expect(without.data.map((t) => t.id)).not.toContain(record.id);
    const withRevoked = await clients.tokens.listApiTokens({ limit: 100, includeRevoked: true }, owner);
    expect(withRevoked.data.map((t) => t.id)).toContain(record.id);
    // The revoked credential fails on the very next call.
    expect((await failure(clients.tenant.getTenant({}, bearer(created.token)))).restCode).toBe("invalid_credentials");
  });

  test("CreateService → GetService → ListServices → UpdateService → RotateSigningSecret → DeleteService", async () => {
    const created = await clients.services.createService({ serviceName: `svc-${name}` }, owner);
    expect(created.signingSecret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    const service = created.service!;
    expect(service.isMonitored).toBe(true);
    expect(service.signingSecretPrefix).toBe(created.signingSecret.slice(0, 10));

    expect((await clients.services.getService({ id: service.id }, owner)).service?.serviceName).toBe(`svc-${name}`);
    const listed = await clients.services.listServices({}, owner);
    expect(listed.data.map((s) => s.id)).toContain(service.id);

    const paused = await clients.services.updateService({ id: service.id, isMonitored: false }, owner);
    expect(paused.service?.isMonitored).toBe(false);

    const rotated = await clients.services.rotateSigningSecret({ id: service.id }, owner);
    expect(rotated.serviceId).toBe(service.id);
    expect(rotated.signingSecret).not.toBe(created.signingSecret);
    expect(rotated.signingSecretPrefix).toBe(rotated.signingSecret.slice(0, 10));
    expect(timestampDate(rotated.previousSecretExpiresAt!).getTime()).toBe(
      timestampDate(rotated.rotatedAt!).getTime() + 86_400_000,
    );

    await clients.services.deleteService({ id: service.id }, owner);
    const gone = await failure(clients.services.getService({ id: service.id }, owner));
    expect(gone).toMatchObject({ code: "not_found", restCode: "not_found" });
  });

  test("GetTenant → UpdateTenant renames, exactly the four fields", async () => {
    const before = await clients.tenant.getTenant({}, owner);
    expect(before.tenant?.id).toBe(served.world.tenantId);
    const renamed = await clients.tenant.updateTenant({ name: `  Acme ${name}  ` }, owner);
    expect(renamed.tenant?.name).toBe(`Acme ${name}`);
    expect(Object.keys(renamed.tenant!).filter((k) => k !== "$typeName")).toEqual([
      "id",
      "name",
      "permissionMode",
      "createdAt",
    ]);
  });

  test("Ingest (signature, no token) → ListEvents returns the exact bytes", async () => {
    const svc = await served.world.createService(`ingest-${name}`);
    const payload = new TextEncoder().encode(`{"transport": "${name}",  "n": [1, 2]}`);
    const accepted = await clients.ingest.ingest({
      serviceId: svc.id,
      signature: sign(svc.secret, payload, served.world.clock.now()),
      payload,
      idempotencyKey: `k-${name}`,
    });
    expect(accepted.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(accepted.duplicate).toBe(false);

    const again = await clients.ingest.ingest({
      serviceId: svc.id,
      signature: sign(svc.secret, payload, served.world.clock.now()),
      payload,
      idempotencyKey: `k-${name}`,
    });
    expect(again).toMatchObject({ id: accepted.id, duplicate: true });

    const events = await clients.ingest.listEvents({ serviceId: svc.id }, owner);
    expect(events.data).toHaveLength(1);
    expect(events.data[0]?.id).toBe(accepted.id);
    expect(events.data[0]?.idempotencyKey).toBe(`k-${name}`);
    expect(new TextDecoder().decode(events.data[0]?.payload)).toBe(new TextDecoder().decode(payload));
  });

  describe("errors carry the Connect code and the REST code", () => {
    test("unauthenticated missing_credentials without a token", async () => {
      expect(await failure(clients.tenant.getTenant({}))).toMatchObject({
        code: "unauthenticated",
        restCode: "missing_credentials",
      });
    });

    test("unauthenticated invalid_credentials for a tok_ id and for a garbage token", async () => {
      for (const credential of [served.world.ownerTokenId, "service_live_nope"]) {
        expect(await failure(clients.tokens.listApiTokens({}, bearer(credential)))).toMatchObject({
          code: "unauthenticated",
          restCode: "invalid_credentials",
        });
      }
    });

    test("unauthenticated invalid_signature for a bad ingest signature", async () => {
      const svc = await served.world.createService(`bad-sig-${name}`);
      const payload = new TextEncoder().encode("{}");
      expect(
        await failure(clients.ingest.ingest({ serviceId: svc.id, signature: "t=1,v1=00", payload })),
      ).toMatchObject({ code: "unauthenticated", restCode: "invalid_signature" });
    });

    test("permission_denied token_scope_insufficient for a read_only token's mutation", async () => {
      const readOnly = await served.world.mint({ scope: "read_only", role: "owner" });
      expect(await failure(clients.services.createService({ serviceName: "x" }, bearer(readOnly.token)))).toMatchObject(
        { code: "permission_denied", restCode: "token_scope_insufficient" },
      );
    });

    test("permission_denied owner_required for an admin read_write token deleting a service", async () => {
      const admin = await served.world.mint({ scope: "read_write", role: "admin" });
      const svc = await served.world.createService(`owner-only-${name}`);
      expect(await failure(clients.services.deleteService({ id: svc.id }, bearer(admin.token)))).toMatchObject({
        code: "permission_denied",
        restCode: "owner_required",
      });
    });

    test("permission_denied role_escalation for a member minting an owner", async () => {
      const member = await served.world.mint({ scope: "read_write", role: "member" });
      expect(
        await failure(clients.tokens.createApiToken({ name: "up", role: "owner" }, bearer(member.token))),
      ).toMatchObject({ code: "permission_denied", restCode: "role_escalation" });
    });

    test("not_found for another tenant's service, the same as for an unknown id", async () => {
      const other = await served.world.otherTenant();
      const theirs = await clients.services.createService({ serviceName: "theirs" }, bearer(other.token));
      const id = theirs.service!.id;
      expect(await failure(clients.services.getService({ id }, owner))).toMatchObject({
        code: "not_found",
        restCode: "not_found",
      });
      expect(await failure(clients.services.getService({ id: "svc_nope" }, owner))).toMatchObject({
        code: "not_found",
        restCode: "not_found",
      });
    });

    test("already_exists service_name_taken; failed_precondition last_owner_token and ingestion_paused", async () => {
      await clients.services.createService({ serviceName: `dup-${name}` }, owner);
      expect(await failure(clients.services.createService({ serviceName: `dup-${name}` }, owner))).toMatchObject({
        code: "already_exists",
        restCode: "service_name_taken",
      });
      const svc = await served.world.createService(`paused-${name}`);
      await clients.services.updateService({ id: svc.id, isMonitored: false }, owner);
      const payload = new TextEncoder().encode("{}");
      expect(
        await failure(
          clients.ingest.ingest({
            serviceId: svc.id,
            signature: sign(svc.secret, payload, served.world.clock.now()),
            payload,
          }),
        ),
      ).toMatchObject({ code: "failed_precondition", restCode: "ingestion_paused" });
      // The bootstrap token is the tenant's only active owner read_write token here.
      const { world } = served;
      const spare = await world.mint({ scope: "read_write", role: "owner" });
      await clients.tokens.revokeApiToken({ id: spare.id }, owner);
      expect(await failure(clients.tokens.revokeApiToken({ id: world.ownerTokenId }, owner))).toMatchObject({
        code: "failed_precondition",
        restCode: "last_owner_token",
      });
    });

    test("invalid_argument invalid_request with field details; service_name_immutable", async () => {
      const bad = await failure(clients.tokens.createApiToken({ name: "   " }, owner));
      expect(bad).toMatchObject({ code: "invalid_argument", restCode: "invalid_request" });
      expect(bad.fields).toContain("name");
      const svc = await served.world.createService(`immutable-${name}`);
      expect(
        await failure(clients.services.updateService({ id: svc.id, serviceName: "renamed" }, owner)),
      ).toMatchObject({ code: "invalid_argument", restCode: "service_name_immutable" });
    });
  });
});
