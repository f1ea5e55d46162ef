/** What a browser meets outside /v1: a pointer at `/`, and no 404 for the favicon. */
import { afterEach, expect, test } from "bun:test";
import { createWorld, type World } from "../support/harness.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("302 GET / to /console while the console is served (the default)", async () => {
  world = await createWorld();
  const res = await world.request("GET", "/", { token: null });
  expect(res.status).toBe(302);
  expect(res.headers.get("location")).toBe("/console");
});

test("200 GET / without a token points to /docs, /openapi.json and /v1/health when INTAKE_CONSOLE=false", async () => {
  world = await createWorld({ env: { INTAKE_CONSOLE: "false" } });
  const res = await world.request("GET", "/", { token: null });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.body).toEqual({ name: "Intake", docs: "/docs", openapi: "/openapi.json", health: "/v1/health" });
});

test("GET / says docs: null when INTAKE_API_DOCS=false too", async () => {
  world = await createWorld({ env: { INTAKE_API_DOCS: "false", INTAKE_CONSOLE: "false" } });
  const res = await world.request("GET", "/", { token: null });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ docs: null, openapi: null, health: "/v1/health" });
});

test("204 GET /favicon.ico without a token (no 404 in the browser console)", async () => {
  world = await createWorld();
  const res = await world.request("GET", "/favicon.ico", { token: null });
  expect(res.status).toBe(204);
  expect(res.text).toBe("");
});

test("405 with Allow: GET for POST /", async () => {
  world = await createWorld();
  const res = await world.request("POST", "/", { token: null });
  expect(res.status).toBe(405);
  expect(res.headers.get("allow")).toBe("GET");
});
