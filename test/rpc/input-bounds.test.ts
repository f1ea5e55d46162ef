/**
 * The domain's input bounds hold on every RPC transport (docs/api.md): an expires_at no
 * encoder can write is refused at create, names must be well-formed Unicode, and a time that
 * cannot be encoded never reaches a caller as the encoder's own message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import { TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import { OPERATOR } from "../../src/domain/audit.ts";
import { bearer, failure, type Served, serveWorld, TRANSPORTS, transportFor } from "./support.ts";

const INTERNAL_MESSAGE = "Something went wrong on our side.";

describe.each(TRANSPORTS)("%s", (name) => {
  let served: Served;
  let owner: ReturnType<typeof bearer>;
  let tokens: ReturnType<typeof createClient<typeof ApiTokenService>>;

  beforeAll(async () => {
    served = await serveWorld();
    owner = bearer(served.world.ownerToken);
    tokens = createClient(ApiTokenService, transportFor(served, name));
  });
  afterAll(() => served.close());

  const outOfRange: Array<[string, { seconds: bigint; nanos: number }]> = [
    ["seconds = 1e15", { seconds: 1_000_000_000_000_000n, nanos: 0 }],
    ["seconds = 1e17", { seconds: 100_000_000_000_000_000n, nanos: 0 }],
    ["the first second of year 10000", { seconds: 253_402_300_800n, nanos: 0 }],
    ["negative nanos", { seconds: 2_000_000_000n, nanos: -1 }],
    ["nanos of a whole second", { seconds: 2_000_000_000n, nanos: 1_000_000_000 }],
  ];
  for (const [label, value] of outOfRange) {
    // Connect JSON cannot even carry these: protobuf-es's client refuses to encode them.
    if (name === "connect-json") continue;
    test(`invalid_argument + invalid_request on expires_at for ${label}`, async () => {
      const result = await failure(
        tokens.createApiToken({ name: "far", expiresAt: create(TimestampSchema, value) }, owner),
      );
      expect(result).toMatchObject({ code: "invalid_argument", restCode: "invalid_request" });
      expect(result.fields).toEqual(["expires_at"]);
    });
  }

  test("the token list still reads after the refused creates, revoked included", async () => {
    const list = await tokens.listApiTokens({ includeRevoked: true }, owner);
    expect(list.data.map((t) => t.name)).not.toContain("far");
  });

  test("the last representable instant (9999-12-31T23:59:59.999Z) is accepted and reads back", async () => {
    const expiresAt = create(TimestampSchema, { seconds: 253_402_300_799n, nanos: 999_000_000 });
    const created = await tokens.createApiToken({ name: `edge-${name}`, expiresAt }, owner);
    const got = await tokens.getApiToken({ id: created.apiToken!.id }, owner);
    expect(got.apiToken?.expiresAt).toEqual(expiresAt);
  });
});

describe("connect-json carries what binary cannot", () => {
  let served: Served;
  let owner: ReturnType<typeof bearer>;
  beforeAll(async () => {
    served = await serveWorld();
    owner = bearer(served.world.ownerToken);
  });
  afterAll(() => served.close());

  test("invalid_argument for a lone surrogate in every name field, and nothing is stored", async () => {
    const transport = transportFor(served, "connect-json");
    const tokens = createClient(ApiTokenService, transport);
    const services = createClient(ServiceRegistryService, transport);
    const tenant = createClient(TenantService, transport);
    for (const bad of ["ls\ud800", "ls\udfff"]) {
      for (const [call, field] of [
        [() => services.createService({ serviceName: bad }, owner), "service_name"],
        [() => tokens.createApiToken({ name: bad }, owner), "name"],
        [() => tenant.updateTenant({ name: bad }, owner), "name"],
      ] as const) {
        // protobuf-es's JSON decoder already refuses them (invalid UTF-8), before the domain's
        // check: either way an invalid_argument, and nothing stored.
        const result = await failure(call());
        expect([field, result.code]).toEqual([field, "invalid_argument"]);
      }
    }
    expect((await services.listServices({}, owner)).data).toEqual([]);
  });

  test("internal + internal_error with the fixed message when a stored time cannot be encoded", async () => {
    // A row from before the range check: the protobuf JSON encoder cannot write year 10000+.
    const { world } = served;
    const id = world.app.domain.newId();
    await world.app.store.tokens.insert(
      {
        id,
        tenantId: world.tenantId,
        name: "legacy",
        scope: "read_only",
        role: "member",
        prefix: "service_live_legacy01",
        digest: "1".repeat(64),
        createdAt: world.clock.now(),
        createdBy: null,
        expiresAt: Date.parse("+010000-01-01T23:58:59.999Z"),
        lastUsedAt: null,
        revokedAt: null,
      },
      world.app.domain.audit.record(world.tenantId, OPERATOR, "api_token.create", { type: "api_token", id }),
    );
    for (const transport of ["connect-json", "connect-binary", "grpc"] as const) {
      const tokens = createClient(ApiTokenService, transportFor(served, transport));
      for (const call of [
        () => tokens.listApiTokens({}, owner),
        () => tokens.getApiToken({ id: `tok_${id}` }, owner),
      ]) {
        const result = await failure(call());
        expect([transport, result]).toEqual([
          transport,
          { code: "internal", restCode: "internal_error", message: INTERNAL_MESSAGE, fields: [] },
        ]);
      }
    }
  });
});
