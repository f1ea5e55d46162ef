/**
 * Every status and code of docs/api.md the management routes can produce, each proved by a test
 * named after it. The auth suite (auth.test.ts) covers the 401s route by route.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createWorld, type Reply, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

function expectError(reply: Reply, status: number, code: string) {
  expect({ status: reply.status, code: reply.body?.error?.code }).toEqual({ status, code });
  expect(reply.body.error.request_id).toBe(reply.headers.get("x-request-id"));
  expect(typeof reply.body.error.message).toBe("string");
  expect(reply.body.error.message.length).toBeGreaterThan(0);
}

/** A Request with a streamed body: no Content-Length, as with chunked transfer encoding. */
function chunked(path: string, token: string, chunks: Uint8Array[], contentType = "application/json"): Request {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Request(`http://intake.test${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": contentType },
    body: stream,
  });
}

describe("400", () => {
  test("400 invalid_request with details naming the field for a missing required field", async () => {
    world = await createWorld();
    const reply = await world.request("POST", "/v1/api_tokens", { body: { scope: "read_only" } });
    expectError(reply, 400, "invalid_request");
    expect(reply.body.error.details.length).toBeGreaterThan(0);
    expect(reply.body.error.details.map((d: { field: string }) => d.field)).toContain("name");
    for (const detail of reply.body.error.details) {
      expect(Object.keys(detail).sort()).toEqual(["field", "message"]);
    }
  });

  test("400 invalid_request with details for a wrong enum value (scope, role)", async () => {
    world = await createWorld();
    const reply = await world.request("POST", "/v1/api_tokens", { body: { name: "x", scope: "admin", role: "god" } });
    expectError(reply, 400, "invalid_request");
    const fields = reply.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toContain("scope");
    expect(fields).toContain("role");
  });

  test("400 invalid_request with details for a constraint broken after trimming (name of spaces)", async () => {
    world = await createWorld();
    const reply = await world.request("POST", "/v1/services", { body: { service_name: "   " } });
    expectError(reply, 400, "invalid_request");
    expect(reply.body.error.details).toEqual([{ field: "service_name", message: "must not be empty after trimming" }]);
  });

  test("400 invalid_request for expires_at in the past, and for one that is not RFC 3339", async () => {
    world = await createWorld();
    for (const expires_at of [
      "2026-11-22T09:59:59.999Z",
      "2026-11-22T10:00:00Z",
      "tomorrow",
      "2026-11-23",
      "1732000000",
    ]) {
      const reply = await world.request("POST", "/v1/api_tokens", { body: { name: "x", expires_at } });
      expectError(reply, 400, "invalid_request");
      expect(reply.body.error.details[0].field).toBe("expires_at");
    }
  });

  test("400 invalid_request for an expires_at that is not a calendar date (Feb 30, hour 25)", async () => {
    world = await createWorld();
    for (const expires_at of [
      "2027-02-30T00:00:00Z",
      "2027-04-31T00:00:00Z",
      "2027-01-01T25:00:00Z",
      "2027-13-01T00:00:00Z",
    ]) {
      const reply = await world.request("POST", "/v1/api_tokens", { body: { name: "x", expires_at } });
      expectError(reply, 400, "invalid_request");
      expect(reply.body.error.details[0].field).toBe("expires_at");
    }
  });

  test("400 permission_mode_immutable when PATCH /v1/tenant names permission_mode, whatever its value", async () => {
    world = await createWorld();
    for (const value of ["flat", "role_based", null, 5, "", {}, []]) {
      const reply = await world.request("PATCH", "/v1/tenant", { body: { permission_mode: value } });
      expectError(reply, 400, "permission_mode_immutable");
    }
    const withName = await world.request("PATCH", "/v1/tenant", { body: { name: "New", permission_mode: "flat" } });
    expectError(withName, 400, "permission_mode_immutable");
    // Nothing changed.
    expect((await world.request("GET", "/v1/tenant")).body).toMatchObject({
      name: "Acme",
      permission_mode: "role_based",
    });
  });

  test("400 service_name_immutable when PATCH /v1/services/{id} names service_name, whatever its value", async () => {
    world = await createWorld();
    const { id } = await world.createService("billing");
    for (const value of ["billing", "other", null, 1, ""]) {
      const reply = await world.request("PATCH", `/v1/services/${id}`, { body: { service_name: value } });
      expectError(reply, 400, "service_name_immutable");
    }
    const mixed = await world.request("PATCH", `/v1/services/${id}`, {
      body: { service_name: "x", is_monitored: false },
    });
    expectError(mixed, 400, "service_name_immutable");
    expect((await world.request("GET", `/v1/services/${id}`)).body).toMatchObject({
      service_name: "billing",
      is_monitored: true,
    });
  });
});

describe("403", () => {
  test("403 token_scope_insufficient for read_only POST, PATCH and DELETE", async () => {
    world = await createWorld();
    const { id } = await world.createService();
    const { token } = await world.mint({ name: "ro", scope: "read_only", role: "owner" });
    for (const [method, path, body] of [
      ["POST", "/v1/api_tokens", { name: "x" }],
      ["POST", "/v1/services", { service_name: "x" }],
      ["PATCH", `/v1/services/${id}`, { is_monitored: false }],
      ["DELETE", `/v1/services/${id}`, undefined],
      ["POST", `/v1/services/${id}/secret_rotations`, undefined],
      ["PATCH", "/v1/tenant", { name: "x" }],
      ["DELETE", `/v1/api_tokens/${world.ownerTokenId}`, undefined],
    ] as const) {
      expectError(await world.request(method, path, { token, body }), 403, "token_scope_insufficient");
    }
  });

  test("403 owner_required for admin and member read_write tokens on DELETE service and PATCH tenant", async () => {
    world = await createWorld();
    const { id } = await world.createService();
    for (const role of ["admin", "member"]) {
      const { token } = await world.mint({ name: role, scope: "read_write", role });
      expectError(await world.request("DELETE", `/v1/services/${id}`, { token }), 403, "owner_required");
      expectError(await world.request("PATCH", "/v1/tenant", { token, body: { name: "x" } }), 403, "owner_required");
    }
    expect((await world.request("GET", `/v1/services/${id}`)).status).toBe(200);
  });

  test("flat mode: no owner_required, a member read_write token may DELETE a service and PATCH the tenant", async () => {
    world = await createWorld({ permissionMode: "flat" });
    const { id } = await world.createService();
    const { token } = await world.mint({ name: "m", scope: "read_write", role: "member" });
    expect((await world.request("PATCH", "/v1/tenant", { token, body: { name: "Flat Co" } })).status).toBe(200);
    expect((await world.request("DELETE", `/v1/services/${id}`, { token })).status).toBe(204);
  });

  test("flat mode: scopes still apply (403 token_scope_insufficient for read_only)", async () => {
    world = await createWorld({ permissionMode: "flat" });
    const { token } = await world.mint({ name: "r", scope: "read_only", role: "owner" });
    expectError(
      await world.request("PATCH", "/v1/tenant", { token, body: { name: "x" } }),
      403,
      "token_scope_insufficient",
    );
  });

  test("403 role_escalation for minting above the caller's role (member→admin, member→owner, admin→owner)", async () => {
    world = await createWorld();
    const member = await world.mint({ name: "m", scope: "read_write", role: "member" });
    const admin = await world.mint({ name: "a", scope: "read_write", role: "admin" });
    for (const [caller, role] of [
      [member.token, "admin"],
      [member.token, "owner"],
      [admin.token, "owner"],
    ] as const) {
      const reply = await world.request("POST", "/v1/api_tokens", { token: caller, body: { name: "x", role } });
      expectError(reply, 403, "role_escalation");
    }
  });

  test("201 for minting a token of the caller's own role or below (equal is fine)", async () => {
    world = await createWorld();
    const admin = await world.mint({ name: "a", scope: "read_write", role: "admin" });
    const member = await world.mint({ name: "m", scope: "read_write", role: "member" });
    for (const [caller, role] of [
      [admin.token, "admin"],
      [admin.token, "member"],
      [member.token, "member"],
      [world.ownerToken, "owner"],
    ] as const) {
      const reply = await world.request("POST", "/v1/api_tokens", { token: caller, body: { name: "x", role } });
      expect(reply.status).toBe(201);
      expect(reply.body.role).toBe(role);
    }
  });

  test("403 role_escalation for revoking a token above the caller's role; nothing is revoked", async () => {
    world = await createWorld();
    const admin = await world.mint({ name: "a", scope: "read_write", role: "admin" });
    const member = await world.mint({ name: "m", scope: "read_write", role: "member" });
    const otherAdmin = await world.mint({ name: "a2", role: "admin" });
    expectError(
      await world.request("DELETE", `/v1/api_tokens/${world.ownerTokenId}`, { token: admin.token }),
      403,
      "role_escalation",
    );
    expectError(
      await world.request("DELETE", `/v1/api_tokens/${otherAdmin.id}`, { token: member.token }),
      403,
      "role_escalation",
    );
    const target = await world.request("GET", `/v1/api_tokens/${otherAdmin.id}`);
    expect(target.body.revoked_at).toBeNull();
  });

  test("200 for revoking a token of the caller's own role or below", async () => {
    world = await createWorld();
    const admin = await world.mint({ name: "a", scope: "read_write", role: "admin" });
    const peer = await world.mint({ name: "a2", role: "admin" });
    const member = await world.mint({ name: "m", role: "member" });
    expect((await world.request("DELETE", `/v1/api_tokens/${peer.id}`, { token: admin.token })).status).toBe(200);
    expect((await world.request("DELETE", `/v1/api_tokens/${member.id}`, { token: admin.token })).status).toBe(200);
  });

  test("flat mode: no role_escalation, a member mints and revokes owner tokens", async () => {
    world = await createWorld({ permissionMode: "flat" });
    const member = await world.mint({ name: "m", scope: "read_write", role: "member" });
    const minted = await world.request("POST", "/v1/api_tokens", {
      token: member.token,
      body: { name: "o", role: "owner", scope: "read_write" },
    });
    expect(minted.status).toBe(201);
    const revoked = await world.request("DELETE", `/v1/api_tokens/${minted.body.id}`, { token: member.token });
    expect(revoked.status).toBe(200);
  });
});

describe("404", () => {
  test("404 not_found for an unknown route, with or without a token", async () => {
    world = await createWorld();
    for (const path of [
      "/v1/nope",
      "/v2/tenant",
      "/nope",
      "/v1",
      "/v1/api_tokens/x/y",
      "/v1/services/x/secret_rotations/y",
    ]) {
      expectError(await world.request("GET", path), 404, "not_found");
      expectError(await world.request("GET", path, { token: null }), 404, "not_found");
    }
  });

  test("404 not_found for a malformed id in every id route", async () => {
    world = await createWorld();
    const { id: svc } = await world.createService();
    const tokenHex = world.ownerTokenId.slice(4);
    for (const [method, path] of [
      ["GET", "/v1/api_tokens/nope"],
      ["DELETE", "/v1/api_tokens/nope"],
      ["GET", `/v1/api_tokens/svc_${tokenHex}`],
      ["GET", `/v1/api_tokens/${tokenHex}`],
      ["GET", `/v1/services/${world.ownerTokenId}`],
      ["GET", `/v1/services/${svc.toUpperCase()}`],
      ["PATCH", `/v1/services/${svc}0`],
      ["DELETE", `/v1/services/${svc.slice(0, -1)}`],
      ["POST", "/v1/services/nope/secret_rotations"],
    ] as const) {
      const body = method === "PATCH" ? { is_monitored: false } : undefined;
      expectError(await world.request(method, path, { body }), 404, "not_found");
    }
  });

  test("404 not_found for an unknown well-formed id", async () => {
    world = await createWorld();
    const unknown = "0193a1b2c3d4e5f60718293a4b5c6d7e";
    expectError(await world.request("GET", `/v1/api_tokens/tok_${unknown}`), 404, "not_found");
    expectError(await world.request("DELETE", `/v1/api_tokens/tok_${unknown}`), 404, "not_found");
    expectError(await world.request("GET", `/v1/services/svc_${unknown}`), 404, "not_found");
    expectError(await world.request("DELETE", `/v1/services/svc_${unknown}`), 404, "not_found");
    expectError(await world.request("POST", `/v1/services/svc_${unknown}/secret_rotations`), 404, "not_found");
  });

  test("404 not_found for a deleted service", async () => {
    world = await createWorld();
    const { id } = await world.createService();
    expect((await world.request("DELETE", `/v1/services/${id}`)).status).toBe(204);
    expectError(await world.request("GET", `/v1/services/${id}`), 404, "not_found");
    expectError(await world.request("DELETE", `/v1/services/${id}`), 404, "not_found");
  });

  test("another tenant's tokens and services are not listed, and its tenant is not shown", async () => {
    world = await createWorld();
    const other = await world.otherTenant();
    await world.createService("theirs", other.token);
    await world.mint({ name: "theirs" }, other.token);
    const services = await world.request("GET", "/v1/services");
    expect(services.body.data).toEqual([]);
    const tokens = await world.request("GET", "/v1/api_tokens");
    expect(tokens.body.data.map((t: { id: string }) => t.id)).toEqual([world.ownerTokenId]);
    const tenant = await world.request("GET", "/v1/tenant");
    expect(tenant.body.id).toBe(world.tenantId);
    expect((await world.request("GET", "/v1/tenant", { token: other.token })).body.id).toBe(other.tenantId);
  });

  test("the same service_name may exist in two tenants", async () => {
    world = await createWorld();
    const other = await world.otherTenant();
    await world.createService("billing");
    await world.createService("billing", other.token);
  });
});

describe("405", () => {
  test("405 method_not_allowed with Allow for a known path and a wrong method", async () => {
    world = await createWorld();
    const id = "tok_0193a1b2c3d4e5f60718293a4b5c6d7e";
    const svc = "svc_0193a1b2c3d4e5f60718293a4b5c6d7e";
    for (const [method, path, allow] of [
      ["PATCH", `/v1/api_tokens/${id}`, ["DELETE", "GET"]],
      ["PUT", `/v1/api_tokens/${id}`, ["DELETE", "GET"]],
      ["DELETE", "/v1/api_tokens", ["GET", "POST"]],
      ["PUT", "/v1/services", ["GET", "POST"]],
      ["POST", `/v1/services/${svc}`, ["DELETE", "GET", "PATCH"]],
      ["GET", `/v1/services/${svc}/secret_rotations`, ["POST"]],
      ["DELETE", "/v1/tenant", ["GET", "PATCH"]],
      ["POST", "/v1/health", ["GET"]],
    ] as const) {
      const reply = await world.request(method, path, { token: null });
      expectError(reply, 405, "method_not_allowed");
      const advertised = (reply.headers.get("allow") ?? "").split(/,\s*/).filter((m) => m !== "HEAD");
      expect(advertised.sort()).toEqual([...allow]);
    }
  });

  test("405 method_not_allowed for PATCH /v1/api_tokens/{id}: tokens are immutable, the token is untouched", async () => {
    world = await createWorld();
    const { id } = await world.mint({ name: "keep" });
    const reply = await world.request("PATCH", `/v1/api_tokens/${id}`, {
      body: { name: "changed", scope: "read_write" },
    });
    expectError(reply, 405, "method_not_allowed");
    expect((await world.request("GET", `/v1/api_tokens/${id}`)).body).toMatchObject({
      name: "keep",
      scope: "read_only",
    });
  });
});

describe("409", () => {
  test("409 service_name_taken for a duplicate name in the tenant, compared after trimming", async () => {
    world = await createWorld();
    await world.createService("billing");
    for (const service_name of ["billing", "  billing  "]) {
      expectError(await world.request("POST", "/v1/services", { body: { service_name } }), 409, "service_name_taken");
    }
  });

  test("201 for a name differing only in case: uniqueness is case-sensitive", async () => {
    world = await createWorld();
    await world.createService("billing");
    expect((await world.request("POST", "/v1/services", { body: { service_name: "Billing" } })).status).toBe(201);
  });

  test("201 for a service_name freed by deleting its service", async () => {
    world = await createWorld();
    const { id } = await world.createService("billing");
    await world.request("DELETE", `/v1/services/${id}`);
    expect((await world.request("POST", "/v1/services", { body: { service_name: "billing" } })).status).toBe(201);
  });

  test("409 last_owner_token when revoking the tenant's only active owner read_write token", async () => {
    world = await createWorld();
    const reply = await world.request("DELETE", `/v1/api_tokens/${world.ownerTokenId}`);
    expectError(reply, 409, "last_owner_token");
    expect((await world.request("GET", "/v1/tenant")).status).toBe(200);
  });

  test("409 last_owner_token when the other owner tokens are expired, revoked, read_only, or admin", async () => {
    world = await createWorld();
    const expiresAt = new Date(world.clock.now() + 60_000).toISOString();
    await world.mint({ name: "expiring", scope: "read_write", role: "owner", expires_at: expiresAt });
    const revoked = await world.mint({ name: "revoked", scope: "read_write", role: "owner" });
    await world.request("DELETE", `/v1/api_tokens/${revoked.id}`);
    await world.mint({ name: "ro", scope: "read_only", role: "owner" });
    await world.mint({ name: "admin", scope: "read_write", role: "admin" });
    world.clock.advance(60_000);
    expectError(await world.request("DELETE", `/v1/api_tokens/${world.ownerTokenId}`), 409, "last_owner_token");
  });

  test("409 last_owner_token when revoking the last owner token that does not expire while the other owners all expire", async () => {
    world = await createWorld();
    const expiresAt = new Date(world.clock.now() + 3_000).toISOString();
    const shortLived = await world.mint({ name: "3s", scope: "read_write", role: "owner", expires_at: expiresAt });
    expectError(
      await world.request("DELETE", `/v1/api_tokens/${world.ownerTokenId}`, { token: shortLived.token }),
      409,
      "last_owner_token",
    );
    // At expiry the tenant still has its permanent owner.
    world.clock.advance(3_000);
    expect((await world.request("GET", "/v1/tenant", { token: shortLived.token })).status).toBe(401);
    expect((await world.request("GET", "/v1/tenant")).status).toBe(200);
  });

  test("200 revoking an expiring owner token, or a permanent one while another permanent one exists", async () => {
    world = await createWorld();
    const expiresAt = new Date(world.clock.now() + 3_000).toISOString();
    const shortLived = await world.mint({ name: "3s", scope: "read_write", role: "owner", expires_at: expiresAt });
    const permanent = await world.mint({ name: "second", scope: "read_write", role: "owner" });
    expect((await world.request("DELETE", `/v1/api_tokens/${world.ownerTokenId}`)).status).toBe(200);
    expect((await world.request("DELETE", `/v1/api_tokens/${shortLived.id}`, { token: permanent.token })).status).toBe(
      200,
    );
    expectError(
      await world.request("DELETE", `/v1/api_tokens/${permanent.id}`, { token: permanent.token }),
      409,
      "last_owner_token",
    );
  });

  test("200 revoking an owner read_write token while another active one exists; then the last one is 409", async () => {
    world = await createWorld();
    const second = await world.mint({ name: "second", scope: "read_write", role: "owner" });
    expect(
      (await world.request("DELETE", `/v1/api_tokens/${world.ownerTokenId}`, { token: second.token })).status,
    ).toBe(200);
    expectError(
      await world.request("DELETE", `/v1/api_tokens/${second.id}`, { token: second.token }),
      409,
      "last_owner_token",
    );
  });

  test("200 revoking the last owner read_write token is still fine when it is already revoked (idempotent)", async () => {
    world = await createWorld();
    const second = await world.mint({ name: "second", scope: "read_write", role: "owner" });
    expect((await world.request("DELETE", `/v1/api_tokens/${second.id}`)).status).toBe(200);
    expect((await world.request("DELETE", `/v1/api_tokens/${second.id}`)).status).toBe(200);
  });
});

describe("409 under concurrency", () => {
  test("409 service_name_taken: of three concurrent creates of one name, exactly one is 201", async () => {
    world = await createWorld();
    const replies = await Promise.all(
      [1, 2, 3].map(() => world.request("POST", "/v1/services", { body: { service_name: "dup" } })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect((await world.request("GET", "/v1/services")).body.data).toHaveLength(1);
  });

  test("409 last_owner_token: revoking every owner read_write token at once leaves exactly one", async () => {
    world = await createWorld();
    const owners = await Promise.all(
      [1, 2, 3].map((i) => world.mint({ name: `o${i}`, scope: "read_write", role: "owner" })),
    );
    const ids = [world.ownerTokenId, ...owners.map((o) => o.id)];
    const replies = await Promise.all(
      ids.map((id) => world.request("DELETE", `/v1/api_tokens/${id}`, { token: owners[0]?.token })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 409]);
    // Read the list with whichever owner token survived.
    let listed: { data: Array<{ role: string }> } = { data: [] };
    for (const token of [world.ownerToken, ...owners.map((o) => o.token)]) {
      const reply = await world.request("GET", "/v1/api_tokens", { token });
      if (reply.status === 200) listed = reply.body;
    }
    expect(listed.data.filter((t: { role: string }) => t.role === "owner")).toHaveLength(1);
  });
});

describe("413", () => {
  test("413 payload_too_large for a JSON body over 64 KiB (with Content-Length)", async () => {
    world = await createWorld();
    const body = JSON.stringify({ name: "x".repeat(64 * 1024) });
    const reply = await world.request("POST", "/v1/api_tokens", {
      body,
      headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
    });
    expectError(reply, 413, "payload_too_large");
  });

  test("413 payload_too_large on every body route", async () => {
    world = await createWorld();
    const { id } = await world.createService();
    const body = JSON.stringify({ pad: "x".repeat(70_000) });
    for (const [method, path] of [
      ["POST", "/v1/api_tokens"],
      ["POST", "/v1/services"],
      ["PATCH", `/v1/services/${id}`],
      ["PATCH", "/v1/tenant"],
    ] as const) {
      const reply = await world.request(method, path, { body, headers: { "content-type": "application/json" } });
      expectError(reply, 413, "payload_too_large");
    }
  });

  test("413 payload_too_large for a chunked body with no Content-Length that grows past 64 KiB", async () => {
    world = await createWorld();
    const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
    const parts = [
      new TextEncoder().encode('{"name":"x"'),
      chunk,
      chunk,
      chunk,
      chunk,
      chunk,
      new TextEncoder().encode("}"),
    ];
    const request = chunked("/v1/api_tokens", world.ownerToken, parts);
    expect(request.headers.get("content-length")).toBeNull();
    const res = await world.app.fetch(request);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });

  test("201 for a chunked body under the limit (the cap does not break streaming)", async () => {
    world = await createWorld();
    const enc = new TextEncoder();
    const res = await world.app.fetch(
      chunked("/v1/services", world.ownerToken, [enc.encode('{"service_name":'), enc.encode('"streamed"}')]),
    );
    expect(res.status).toBe(201);
  });

  test("201 for a body of exactly 64 KiB (the limit is inclusive)", async () => {
    world = await createWorld();
    const head = '{"name":"x"';
    const tail = "}";
    const body = head + " ".repeat(64 * 1024 - head.length - tail.length) + tail;
    expect(Buffer.byteLength(body)).toBe(64 * 1024);
    const reply = await world.request("POST", "/v1/api_tokens", {
      body,
      headers: { "content-type": "application/json" },
    });
    expect(reply.status).toBe(201);
    const over = await world.request("POST", "/v1/api_tokens", {
      body: `${body} `,
      headers: { "content-type": "application/json" },
    });
    expectError(over, 413, "payload_too_large");
  });
});

describe("415", () => {
  test("415 unsupported_media_type for a body sent as text/plain, form data, or with no Content-Type", async () => {
    world = await createWorld();
    const body = JSON.stringify({ name: "x" });
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/xml",
      "application/jsonp",
      null,
    ]) {
      const request = new Request("http://intake.test/v1/api_tokens", {
        method: "POST",
        headers: { authorization: `Bearer ${world.ownerToken}`, ...(type && { "content-type": type }) },
        body: new TextEncoder().encode(body),
      });
      const res = await world.app.fetch(request);
      expect(res.status).toBe(415);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported_media_type");
    }
  });

  test("201 for application/json with parameters or in another letter case", async () => {
    world = await createWorld();
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"]) {
      const reply = await world.request("POST", "/v1/api_tokens", {
        body: JSON.stringify({ name: "x" }),
        headers: { "content-type": type },
      });
      expect(reply.status).toBe(201);
    }
  });

  test("routes without a body ignore one, whatever its type (GET, DELETE, rotation)", async () => {
    world = await createWorld();
    const { id } = await world.createService();
    const rotation = await world.request("POST", `/v1/services/${id}/secret_rotations`, {
      body: "not json at all",
      headers: { "content-type": "text/plain" },
    });
    expect(rotation.status).toBe(201);
    const target = await world.mint({ name: "t" });
    const revoke = await world.request("DELETE", `/v1/api_tokens/${target.id}`, {
      body: "<xml/>",
      headers: { "content-type": "application/xml" },
    });
    expect(revoke.status).toBe(200);
  });

  test("200 for a PATCH with no body at all: like {}", async () => {
    world = await createWorld();
    const reply = await world.request("PATCH", "/v1/tenant");
    expect(reply.status).toBe(200);
    expect(reply.body.name).toBe("Acme");
  });
});
