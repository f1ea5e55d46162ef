/**
 * The rpc tier: the service implementations behind connect's in-memory router transport, with
 * the admission interceptor, as an internal Connect caller sees them. Credentials travel in the
 * `authorization` header; every error carries the REST code as an intake.v1.ErrorDetail.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Code, ConnectError, createClient, createRouterTransport, type Transport } from "@connectrpc/connect";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { type ErrorDetail, ErrorDetailSchema } from "../../gen/intake/v1/errors_pb.ts";
import { HealthService } from "../../gen/intake/v1/health_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import pkg from "../../package.json" with { type: "json" };
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

function transportFor(w: World): Transport {
  const { impls, admission } = w.app;
  return createRouterTransport(
    (router) => {
      router.service(ApiTokenService, impls.apiTokens);
      router.service(ServiceRegistryService, impls.services);
      router.service(TenantService, impls.tenant);
      router.service(HealthService, impls.health);
    },
    { router: { interceptors: [admission.interceptor] } },
  );
}

function clients(w: World) {
  const transport = transportFor(w);
  return {
    tokens: createClient(ApiTokenService, transport),
    services: createClient(ServiceRegistryService, transport),
    tenant: createClient(TenantService, transport),
    health: createClient(HealthService, transport),
  };
}

function bearer(token: string) {
  return { headers: { authorization: `Bearer ${token}` } };
}

/** The Connect code and the REST code (from ErrorDetail) of a failed call. */
async function failure(call: Promise<unknown>): Promise<{ connect: Code; rest: string; fields: string[] }> {
  try {
    await call;
  } catch (error) {
    const ce = ConnectError.from(error);
    const [detail] = ce.findDetails(ErrorDetailSchema) as ErrorDetail[];
    return {
      connect: ce.code,
      rest: detail?.code ?? "(no ErrorDetail)",
      fields: detail?.details.map((d) => d.field) ?? [],
    };
  }
  throw new Error("expected the call to fail");
}

describe("rpc over the in-memory transport", () => {
  test("GetTenant with the token in the authorization header returns the caller's tenant", async () => {
    world = await createWorld();
    const { tenant } = clients(world);
    const res = await tenant.getTenant({}, bearer(world.ownerToken));
    expect(res.tenant?.id).toBe(world.tenantId);
    expect(res.tenant?.name).toBe("Acme");
    expect(res.tenant?.permissionMode).toBe("role_based");
  });

  test("unauthenticated + missing_credentials without an authorization header", async () => {
    world = await createWorld();
    expect(await failure(clients(world).tenant.getTenant({}))).toEqual({
      connect: Code.Unauthenticated,
      rest: "missing_credentials",
      fields: [],
    });
  });

  test("unauthenticated + invalid_credentials for a bad, mistyped or tok_ id credential", async () => {
    world = await createWorld();
    const { tokens } = clients(world);
    const typo = `${world.ownerToken.slice(0, -1)}${world.ownerToken.endsWith("A") ? "B" : "A"}`;
    for (const credential of ["garbage", typo, world.ownerTokenId]) {
      expect(await failure(tokens.listApiTokens({}, bearer(credential)))).toMatchObject({
        connect: Code.Unauthenticated,
        rest: "invalid_credentials",
      });
    }
  });

  test("permission_denied + token_scope_insufficient for CreateApiToken with a read_only token", async () => {
    world = await createWorld();
    const { token } = await world.mint({ name: "ro", scope: "read_only", role: "owner" });
    expect(await failure(clients(world).tokens.createApiToken({ name: "x" }, bearer(token)))).toMatchObject({
      connect: Code.PermissionDenied,
      rest: "token_scope_insufficient",
    });
  });

  test("permission_denied + owner_required for DeleteService with an admin token", async () => {
    world = await createWorld();
    const { id } = await world.createService();
    const { token } = await world.mint({ name: "a", scope: "read_write", role: "admin" });
    expect(await failure(clients(world).services.deleteService({ id }, bearer(token)))).toMatchObject({
      connect: Code.PermissionDenied,
      rest: "owner_required",
    });
  });

  test("permission_denied + role_escalation for a member minting an owner", async () => {
    world = await createWorld();
    const { token } = await world.mint({ name: "m", scope: "read_write", role: "member" });
    expect(
      await failure(clients(world).tokens.createApiToken({ name: "x", role: "owner" }, bearer(token))),
    ).toMatchObject({
      connect: Code.PermissionDenied,
      rest: "role_escalation",
    });
  });

  test("invalid_argument + invalid_request with field details for an empty name and a bad limit", async () => {
    world = await createWorld();
    const { tokens, services } = clients(world);
    expect(await failure(tokens.createApiToken({ name: "  " }, bearer(world.ownerToken)))).toEqual({
      connect: Code.InvalidArgument,
      rest: "invalid_request",
      fields: ["name"],
    });
    expect(await failure(services.listServices({ limit: 0 }, bearer(world.ownerToken)))).toEqual({
      connect: Code.InvalidArgument,
      rest: "invalid_request",
      fields: ["limit"],
    });
    expect(await failure(services.listServices({ cursor: "garbage" }, bearer(world.ownerToken)))).toEqual({
      connect: Code.InvalidArgument,
      rest: "invalid_request",
      fields: ["cursor"],
    });
  });

  test("not_found for an unknown, malformed or other tenant's service id", async () => {
    world = await createWorld();
    const other = await world.otherTenant();
    const theirs = await world.createService("theirs", other.token);
    const { services } = clients(world);
    for (const id of ["svc_0193a1b2c3d4e5f60718293a4b5c6d7e", "nope", theirs.id]) {
      expect(await failure(services.getService({ id }, bearer(world.ownerToken)))).toMatchObject({
        connect: Code.NotFound,
        rest: "not_found",
      });
    }
  });

  test("already_exists + service_name_taken, failed_precondition + last_owner_token", async () => {
    world = await createWorld();
    const { services, tokens } = clients(world);
    await services.createService({ serviceName: "billing" }, bearer(world.ownerToken));
    expect(await failure(services.createService({ serviceName: "billing" }, bearer(world.ownerToken)))).toMatchObject({
      connect: Code.AlreadyExists,
      rest: "service_name_taken",
    });
    expect(await failure(tokens.revokeApiToken({ id: world.ownerTokenId }, bearer(world.ownerToken)))).toMatchObject({
      connect: Code.FailedPrecondition,
      rest: "last_owner_token",
    });
  });

  test("invalid_argument + service_name_immutable and permission_mode_immutable", async () => {
    world = await createWorld();
    const { id } = await world.createService();
    const { services, tenant } = clients(world);
    expect(await failure(services.updateService({ id, serviceName: "x" }, bearer(world.ownerToken)))).toMatchObject({
      connect: Code.InvalidArgument,
      rest: "service_name_immutable",
    });
    expect(await failure(tenant.updateTenant({ permissionMode: "flat" }, bearer(world.ownerToken)))).toMatchObject({
      connect: Code.InvalidArgument,
      rest: "permission_mode_immutable",
    });
  });

  test("CreateApiToken returns the credential once; the minted token authenticates the next call", async () => {
    world = await createWorld();
    const { tokens } = clients(world);
    const created = await tokens.createApiToken({ name: "rpc", scope: "read_write" }, bearer(world.ownerToken));
    expect(created.token).toMatch(/^service_live_[0-9A-Za-z]{43}$/);
    expect(created.apiToken?.id).toMatch(/^tok_[0-9a-f]{32}$/);
    const got = await tokens.getApiToken({ id: created.apiToken?.id ?? "" }, bearer(created.token));
    expect(got.apiToken?.name).toBe("rpc");
  });

  test("a token revoked over REST is refused over RPC on the very next call (one admission, one cache)", async () => {
    world = await createWorld();
    const target = await world.mint({ name: "t", scope: "read_write", role: "admin" });
    const { tenant } = clients(world);
    await tenant.getTenant({}, bearer(target.token));
    expect((await world.request("DELETE", `/v1/api_tokens/${target.id}`)).status).toBe(200);
    expect(await failure(tenant.getTenant({}, bearer(target.token)))).toMatchObject({
      connect: Code.Unauthenticated,
      rest: "invalid_credentials",
    });
  });

  test("GetHealth needs no credential", async () => {
    world = await createWorld();
    const res = await clients(world).health.getHealth({});
    expect(res.status).toBe("ok");
    expect(res.version).toBe(pkg.version);
  });
});
