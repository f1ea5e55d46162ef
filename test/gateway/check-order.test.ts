/**
 * docs/api.md check order: route 404 / 405 → 401 → 403 scope → 403 owner → 404 resource → 413 →
 * 415 → 400 body → 403 role_escalation. Each test breaks two rules at once and proves which wins.
 */
import { afterEach, expect, test } from "bun:test";
import { createWorld, type Reply, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

const UNKNOWN_SVC = "svc_0193a1b2c3d4e5f60718293a4b5c6d7e";
const UNKNOWN_TOK = "tok_0193a1b2c3d4e5f60718293a4b5c6d7e";
const OVERSIZE = JSON.stringify({ name: "x".repeat(70_000) });

function code(reply: Reply): string {
  return `${reply.status} ${reply.body?.error?.code}`;
}

test("404 not_found for an unknown route wins over 401 (no token)", async () => {
  world = await createWorld();
  expect(code(await world.request("POST", "/v1/nothing", { token: null, body: "x" }))).toBe("404 not_found");
});

test("405 method_not_allowed wins over 401 (no token)", async () => {
  world = await createWorld();
  expect(code(await world.request("PATCH", `/v1/api_tokens/${UNKNOWN_TOK}`, { token: null }))).toBe(
    "405 method_not_allowed",
  );
});

test("401 missing_credentials wins over 400 (no token, bad body)", async () => {
  world = await createWorld();
  expect(code(await world.request("POST", "/v1/api_tokens", { token: null, body: { bogus: true } }))).toBe(
    "401 missing_credentials",
  );
});

test("401 missing_credentials wins over the 404 of an id that is not valid percent-encoding", async () => {
  world = await createWorld();
  for (const path of ["/v1/services/%E0%A4%A", "/v1/api_tokens/%E0%A4%A", "/v1/events/%E0%A4%A"]) {
    expect(code(await world.request("GET", path, { token: null })), path).toBe("401 missing_credentials");
    expect(code(await world.request("GET", path)), path).toBe("404 not_found");
  }
});

test("401 wins over 413 and 415 (no token, oversized text body)", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/services", {
    token: null,
    body: OVERSIZE,
    headers: { "content-type": "text/plain" },
  });
  expect(code(reply)).toBe("401 missing_credentials");
});

test("401 invalid_credentials wins over 404 resource (bad token, unknown service)", async () => {
  world = await createWorld();
  expect(code(await world.request("GET", `/v1/services/${UNKNOWN_SVC}`, { token: "nope" }))).toBe(
    "401 invalid_credentials",
  );
});

test("403 token_scope_insufficient, not 400, for read_only + bad body", async () => {
  world = await createWorld();
  const { token } = await world.mint({ name: "ro", scope: "read_only", role: "owner" });
  const reply = await world.request("POST", "/v1/api_tokens", { token, body: { name: 5, bogus: [] } });
  expect(code(reply)).toBe("403 token_scope_insufficient");
});

test("403 token_scope_insufficient, not 413, for read_only + oversized body", async () => {
  world = await createWorld();
  const { token } = await world.mint({ name: "ro", scope: "read_only", role: "owner" });
  const reply = await world.request("POST", "/v1/services", {
    token,
    body: OVERSIZE,
    headers: { "content-type": "application/json" },
  });
  expect(code(reply)).toBe("403 token_scope_insufficient");
});

test("403 token_scope_insufficient, not owner_required, for a read_only member on PATCH /v1/tenant", async () => {
  world = await createWorld();
  const { token } = await world.mint({ name: "ro", scope: "read_only", role: "member" });
  expect(code(await world.request("PATCH", "/v1/tenant", { token, body: { name: "x" } }))).toBe(
    "403 token_scope_insufficient",
  );
});

test("403 token_scope_insufficient, not 404, for read_only on an unknown service", async () => {
  world = await createWorld();
  const { token } = await world.mint({ name: "ro", scope: "read_only", role: "owner" });
  expect(code(await world.request("DELETE", `/v1/services/${UNKNOWN_SVC}`, { token }))).toBe(
    "403 token_scope_insufficient",
  );
});

test("403 owner_required, not 404, for an admin deleting an unknown service", async () => {
  world = await createWorld();
  const { token } = await world.mint({ name: "a", scope: "read_write", role: "admin" });
  expect(code(await world.request("DELETE", `/v1/services/${UNKNOWN_SVC}`, { token }))).toBe("403 owner_required");
});

test("403 owner_required, not 400, for an admin PATCHing the tenant with a bad body or permission_mode", async () => {
  world = await createWorld();
  const { token } = await world.mint({ name: "a", scope: "read_write", role: "admin" });
  expect(code(await world.request("PATCH", "/v1/tenant", { token, body: { name: "" } }))).toBe("403 owner_required");
  expect(code(await world.request("PATCH", "/v1/tenant", { token, body: { permission_mode: "flat" } }))).toBe(
    "403 owner_required",
  );
});

test("404 not_found, not 400, for PATCH of an unknown service id with a bad body", async () => {
  world = await createWorld();
  const reply = await world.request("PATCH", `/v1/services/${UNKNOWN_SVC}`, { body: { is_monitored: "nope", x: 1 } });
  expect(code(reply)).toBe("404 not_found");
});

test("404 not_found, not 400, for PATCH of a malformed service id with non-JSON", async () => {
  world = await createWorld();
  const reply = await world.request("PATCH", "/v1/services/garbage", {
    body: "{{{",
    headers: { "content-type": "application/json" },
  });
  expect(code(reply)).toBe("404 not_found");
});

test("404 not_found, not service_name_immutable, for PATCH of another tenant's service naming service_name", async () => {
  world = await createWorld();
  const other = await world.otherTenant();
  const { id } = await world.createService("theirs", other.token);
  expect(code(await world.request("PATCH", `/v1/services/${id}`, { body: { service_name: "x" } }))).toBe(
    "404 not_found",
  );
});

test("404 not_found, not 413 or 415, for PATCH of an unknown service with an oversized text body", async () => {
  world = await createWorld();
  const reply = await world.request("PATCH", `/v1/services/${UNKNOWN_SVC}`, {
    body: OVERSIZE,
    headers: { "content-type": "text/plain" },
  });
  expect(code(reply)).toBe("404 not_found");
});

test("413 payload_too_large, not 415, for an oversized body with the wrong content type", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/api_tokens", {
    body: OVERSIZE,
    headers: { "content-type": "text/plain" },
  });
  expect(code(reply)).toBe("413 payload_too_large");
});

test("413 payload_too_large, not 400, for an oversized body that is not JSON", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/api_tokens", {
    body: "{".repeat(70_000),
    headers: { "content-type": "application/json" },
  });
  expect(code(reply)).toBe("413 payload_too_large");
});

test("415 unsupported_media_type, not 400, for a non-JSON body with the wrong content type", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/services", {
    body: "name=x",
    headers: { "content-type": "text/plain" },
  });
  expect(code(reply)).toBe("415 unsupported_media_type");
});

test("400 invalid_request, not 403 role_escalation: escalation is decided only on a valid body", async () => {
  world = await createWorld();
  const member = await world.mint({ name: "m", scope: "read_write", role: "member" });
  for (const body of [
    { role: "owner" },
    { name: "", role: "owner" },
    { name: "x", role: "owner", bogus: 1 },
    { name: "x", role: "owner", expires_at: "2000-01-01T00:00:00Z" },
  ]) {
    expect(code(await world.request("POST", "/v1/api_tokens", { token: member.token, body }))).toBe(
      "400 invalid_request",
    );
  }
  expect(
    code(await world.request("POST", "/v1/api_tokens", { token: member.token, body: { name: "x", role: "owner" } })),
  ).toBe("403 role_escalation");
});

test("404 not_found, not 403 role_escalation, for an admin revoking an unknown token", async () => {
  world = await createWorld();
  const admin = await world.mint({ name: "a", scope: "read_write", role: "admin" });
  expect(code(await world.request("DELETE", `/v1/api_tokens/${UNKNOWN_TOK}`, { token: admin.token }))).toBe(
    "404 not_found",
  );
});

test("403 role_escalation, not 409 last_owner_token, for an admin revoking the last owner token", async () => {
  world = await createWorld();
  const admin = await world.mint({ name: "a", scope: "read_write", role: "admin" });
  expect(code(await world.request("DELETE", `/v1/api_tokens/${world.ownerTokenId}`, { token: admin.token }))).toBe(
    "403 role_escalation",
  );
});

test("400 service_name_immutable on an existing service even when is_monitored is also valid", async () => {
  world = await createWorld();
  const { id } = await world.createService();
  const reply = await world.request("PATCH", `/v1/services/${id}`, {
    body: { is_monitored: false, service_name: null },
  });
  expect(code(reply)).toBe("400 service_name_immutable");
});
