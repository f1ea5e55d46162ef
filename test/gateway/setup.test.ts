/**
 * POST /v1/setup and intake.v1.SetupService/RedeemSetupCode (docs/console.md): a one-time setup
 * code buys one tenant and its first owner read_write token, shown once.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { generateSetupCode } from "../../src/domain/credentials.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;

beforeEach(async () => {
  world = await createWorld();
});

afterEach(async () => {
  await world.close();
});

async function setupCode(expiresInSeconds = 3600): Promise<string> {
  return (await world.app.domain.onboarding.issueSetupCode({ expiresInSeconds })).code;
}

function redeem(body: unknown, headers?: Record<string, string>) {
  return world.request("POST", "/v1/setup", { token: null, body, ...(headers && { headers }) });
}

describe("POST /v1/setup", () => {
  test("201 with a new tenant and its first owner read_write token, which then works", async () => {
    const res = await redeem({ setup_code: await setupCode(), tenant_name: "  Globex  ", permission_mode: "flat" });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["tenant_id", "token", "token_id"]);
    expect(res.body.token).toMatch(/^service_live_[0-9A-Za-z]{43}$/);
    expect(res.body.token_id).toMatch(/^tok_[0-9a-f]{32}$/);

    const tenant = await world.request("GET", "/v1/tenant", { token: res.body.token });
    expect(tenant.status).toBe(200);
    expect(tenant.body).toMatchObject({ id: res.body.tenant_id, name: "Globex", permission_mode: "flat" });
    const self = await world.request("GET", `/v1/api_tokens/${res.body.token_id}`, { token: res.body.token });
    expect(self.body).toMatchObject({ role: "owner", scope: "read_write", created_by: null });
  });

  test("permission_mode defaults to role_based", async () => {
    const res = await redeem({ setup_code: await setupCode(), tenant_name: "Initech" });
    const tenant = await world.request("GET", "/v1/tenant", { token: res.body.token });
    expect(tenant.body.permission_mode).toBe("role_based");
  });

  test("401 invalid_setup_code on the second use of a code", async () => {
    const code = await setupCode();
    expect((await redeem({ setup_code: code, tenant_name: "First" })).status).toBe(201);
    const again = await redeem({ setup_code: code, tenant_name: "Second" });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe("invalid_setup_code");
    expect(again.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  });

  test("401 invalid_setup_code for an expired, unknown or malformed code, each with the same message", async () => {
    const expired = await setupCode(60);
    world.clock.advance(60_000);
    // Well-formed, checksum and all, but never issued.
    const unknown = generateSetupCode();
    const answers = await Promise.all(
      [expired, unknown, "setup_nope", "service_live_x"].map((code) => redeem({ setup_code: code, tenant_name: "X" })),
    );
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("invalid_setup_code");
    }
    expect(new Set(answers.map((r) => r.body.error.message)).size).toBe(1);
  });

  test("400 for a bad tenant_name leaves the code unused", async () => {
    const code = await setupCode();
    const bad = await redeem({ setup_code: code, tenant_name: "   " });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: "tenant_name", message: expect.any(String) }]);
    expect((await redeem({ setup_code: code, tenant_name: "Fine" })).status).toBe(201);
  });

  test("400 invalid_request for an unknown field or a permission_mode that is not flat or role_based", async () => {
    const code = await setupCode();
    const unknown = await redeem({ setup_code: code, tenant_name: "X", plan: "pro" });
    expect(unknown.status).toBe(400);
    const mode = await redeem({ setup_code: code, tenant_name: "X", permission_mode: "owner" });
    expect(mode.status).toBe(400);
    expect((await redeem({ setup_code: code, tenant_name: "X" })).status).toBe(201);
  });

  test("415 unsupported_media_type for a body that is not application/json", async () => {
    const res = await redeem(JSON.stringify({ setup_code: await setupCode(), tenant_name: "X" }), {
      "content-type": "text/plain",
    });
    expect(res.status).toBe(415);
  });

  test("the setup code never reaches the log", async () => {
    const code = await setupCode();
    await redeem({ setup_code: code, tenant_name: "Logged" });
    await redeem({ setup_code: code, tenant_name: "Logged again" });
    expect(world.logs.join("\n")).not.toContain(code);
  });
});

describe("intake.v1.SetupService/RedeemSetupCode over Connect", () => {
  function call(body: unknown) {
    return world.request("POST", "/intake.v1.SetupService/RedeemSetupCode", { token: null, body });
  }

  test("redeems without a bearer token; a used code is unauthenticated with the REST code", async () => {
    const code = await setupCode();
    const ok = await call({ setupCode: code, tenantName: "Over RPC" });
    expect(ok.status).toBe(200);
    expect(ok.body.token).toMatch(/^service_live_/);
    const again = await call({ setupCode: code, tenantName: "Again" });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe("unauthenticated");
    expect(JSON.stringify(again.body)).toContain("invalid_setup_code");
  });
});
