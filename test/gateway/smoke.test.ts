import { afterEach, expect, test } from "bun:test";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(() => world?.close());

test("200 GET /v1/tenant returns exactly the four public fields", async () => {
  world = await createWorld();
  const res = await world.request("GET", "/v1/tenant");
  expect(res.status).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(["created_at", "id", "name", "permission_mode"]);
  expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
});

test("400 invalid_request for an unknown body field", async () => {
  world = await createWorld();
  const res = await world.request("POST", "/v1/api_tokens", { body: { name: "x", bogus: 1 } });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("invalid_request");
  expect(res.body.error.details[0].field).toBe("bogus");
});
