import { afterEach, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

test("200 GET /v1/tenant returns exactly id, name, permission_mode, created_at", async () => {
  world = await createWorld();
  const reply = await world.request("GET", "/v1/tenant");
  expect(reply.status).toBe(200);
  expect(reply.body).toEqual({
    id: world.tenantId,
    name: "Acme",
    permission_mode: "role_based",
    created_at: "2026-11-22T10:00:00.000Z",
  });
  expect(reply.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});

test("200 GET /v1/tenant shows permission_mode flat for a flat tenant", async () => {
  world = await createWorld({ permissionMode: "flat" });
  expect((await world.request("GET", "/v1/tenant")).body.permission_mode).toBe("flat");
});

test("200 PATCH /v1/tenant stores the name trimmed and returns exactly the four keys", async () => {
  world = await createWorld();
  const reply = await world.request("PATCH", "/v1/tenant", { body: { name: "  Acme Europe \n" } });
  expect(reply.status).toBe(200);
  expect(reply.body).toEqual({
    id: world.tenantId,
    name: "Acme Europe",
    permission_mode: "role_based",
    created_at: "2026-11-22T10:00:00.000Z",
  });
  expect((await world.request("GET", "/v1/tenant")).body.name).toBe("Acme Europe");
});

test("200 PATCH /v1/tenant with 80 astral characters; 400 with 81", async () => {
  world = await createWorld();
  const eighty = "🚀".repeat(80);
  expect((await world.request("PATCH", "/v1/tenant", { body: { name: eighty } })).body.name).toBe(eighty);
  const reply = await world.request("PATCH", "/v1/tenant", { body: { name: `${eighty}🚀` } });
  expect(reply.status).toBe(400);
  expect(reply.body.error.details[0].field).toBe("name");
});

test("400 invalid_request for a tenant name with a control character or only spaces", async () => {
  world = await createWorld();
  for (const name of ["a\u0000b", "a\nb", "   ", ""]) {
    const reply = await world.request("PATCH", "/v1/tenant", { body: { name } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe("invalid_request");
  }
  expect((await world.request("GET", "/v1/tenant")).body.name).toBe("Acme");
});

test("200 PATCH /v1/tenant {} changes nothing", async () => {
  world = await createWorld();
  const reply = await world.request("PATCH", "/v1/tenant", { body: {} });
  expect(reply.status).toBe(200);
  expect(reply.body.name).toBe("Acme");
});

test("200 GET /v1/health is exactly {status: ok, version: package.json's version}", async () => {
  world = await createWorld();
  const reply = await world.request("GET", "/v1/health", { token: null });
  expect(reply.status).toBe(200);
  expect(reply.text).toBe(JSON.stringify({ status: "ok", version: pkg.version }));
  expect(reply.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
});

test("200 GET /v1/health version carries +INTAKE_BUILD when set", async () => {
  world = await createWorld({ env: { INTAKE_BUILD: "git.3f9c2ab" } });
  const reply = await world.request("GET", "/v1/health", { token: null });
  expect(reply.body).toEqual({ status: "ok", version: `${pkg.version}+git.3f9c2ab` });
});

test("200 GET /v1/health needs no token and ignores a bad one", async () => {
  world = await createWorld();
  expect((await world.request("GET", "/v1/health", { token: "garbage" })).status).toBe(200);
});

test("200 GET /v1/health makes no store round trip (it answers with the store closed)", async () => {
  world = await createWorld();
  await world.app.store.close();
  const reply = await world.request("GET", "/v1/health", { token: null });
  expect(reply.status).toBe(200);
  expect(reply.body.status).toBe("ok");
});
