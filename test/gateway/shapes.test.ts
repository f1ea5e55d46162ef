/** Shapes that hold on every response: X-Request-Id, Content-Type, the error shape, timestamps. */
import { afterEach, expect, spyOn, test } from "bun:test";
import { createWorld, type Reply, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TIMESTAMP_KEYS = new Set([
  "created_at",
  "updated_at",
  "expires_at",
  "last_used_at",
  "revoked_at",
  "secret_rotated_at",
  "previous_secret_expires_at",
  "rotated_at",
  "received_at",
]);

/** A mixed session: successes and every kind of failure the gateway answers. */
async function session(w: World): Promise<Array<[string, Reply]>> {
  const replies: Array<[string, Reply]> = [];
  const at = async (label: string, method: string, path: string, opts = {}) => {
    replies.push([label, await w.request(method, path, opts)]);
  };
  const { id: svc } = await w.createService("billing");
  const minted = await w.mint({ name: "ro", expires_at: "2027-01-01T00:00:00+01:00" });
  await at("health", "GET", "/v1/health", { token: null });
  await at("tenant", "GET", "/v1/tenant");
  await at("tenant patch", "PATCH", "/v1/tenant", { body: { name: "N" } });
  await at("token create", "POST", "/v1/api_tokens", { body: { name: "x" } });
  await at("token list", "GET", "/v1/api_tokens?include_revoked=true");
  await at("token get", "GET", `/v1/api_tokens/${minted.id}`);
  await at("token revoke", "DELETE", `/v1/api_tokens/${minted.id}`);
  await at("service create", "POST", "/v1/services", { body: { service_name: "s2" } });
  await at("service list", "GET", "/v1/services");
  await at("service get", "GET", `/v1/services/${svc}`);
  await at("service patch", "PATCH", `/v1/services/${svc}`, { body: { is_monitored: false } });
  await at("rotation", "POST", `/v1/services/${svc}/secret_rotations`);
  await at("400", "POST", "/v1/services", { body: { bogus: 1 } });
  await at("400 parse", "POST", "/v1/services", { body: "{", headers: { "content-type": "application/json" } });
  await at("401 missing", "GET", "/v1/tenant", { token: null });
  await at("401 invalid", "GET", "/v1/tenant", { token: "nope" });
  await at("403", "POST", "/v1/api_tokens", { token: minted.token, body: { name: "x" } });
  await at("404 route", "GET", "/v1/unknown");
  await at("404 id", "GET", "/v1/services/nope");
  await at("405", "PATCH", `/v1/api_tokens/${minted.id}`);
  await at("409", "POST", "/v1/services", { body: { service_name: "billing" } });
  await at("413", "POST", "/v1/services", {
    body: "x".repeat(70_000),
    headers: { "content-type": "application/json" },
  });
  await at("415", "POST", "/v1/services", { body: "x", headers: { "content-type": "text/plain" } });
  return replies;
}

function timestampsIn(value: unknown, out: Array<[string, unknown]> = []): Array<[string, unknown]> {
  if (Array.isArray(value)) for (const v of value) timestampsIn(v, out);
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (TIMESTAMP_KEYS.has(k)) out.push([k, v]);
      else timestampsIn(v, out);
    }
  }
  return out;
}

test("every response has X-Request-Id req_ + 32 hex, unique per response", async () => {
  world = await createWorld();
  const replies = await session(world);
  const ids = replies.map(([, r]) => r.headers.get("x-request-id"));
  for (const [label, reply] of replies) {
    expect([label, reply.headers.get("x-request-id")]).toEqual([label, expect.stringMatching(/^req_[0-9a-f]{32}$/)]);
  }
  expect(new Set(ids).size).toBe(ids.length);
});

test("every response with a body is Content-Type: application/json; charset=utf-8", async () => {
  world = await createWorld();
  for (const [label, reply] of await session(world)) {
    expect([label, reply.headers.get("content-type")]).toEqual([label, "application/json; charset=utf-8"]);
    expect(reply.body).not.toBeNull();
  }
});

test("every error is {error: {code, message, request_id, details?}} with request_id = X-Request-Id", async () => {
  world = await createWorld();
  const errors = (await session(world)).filter(([, r]) => r.status >= 400);
  expect(errors.length).toBeGreaterThanOrEqual(11);
  for (const [label, reply] of errors) {
    expect([label, Object.keys(reply.body)]).toEqual([label, ["error"]]);
    const keys = Object.keys(reply.body.error).sort();
    expect(keys.filter((k) => k !== "details")).toEqual(["code", "message", "request_id"]);
    expect(reply.body.error.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(reply.body.error.request_id).toBe(reply.headers.get("x-request-id"));
    if (keys.includes("details")) {
      expect(reply.body.error.details.length).toBeGreaterThan(0);
      for (const d of reply.body.error.details) expect(Object.keys(d).sort()).toEqual(["field", "message"]);
    }
  }
});

test("a caller-sent X-Request-Id is never echoed: Intake always generates its own", async () => {
  world = await createWorld();
  const mine = "req_00000000000000000000000000000000";
  for (const path of ["/v1/tenant", "/v1/health", "/v1/nope"]) {
    const reply = await world.request("GET", path, { headers: { "x-request-id": mine } });
    expect(reply.headers.get("x-request-id")).not.toBe(mine);
    expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  }
});

test("every timestamp in every response is RFC 3339 UTC with milliseconds (or null)", async () => {
  world = await createWorld();
  const found = (await session(world)).flatMap(([, r]) => timestampsIn(r.body));
  expect(found.filter(([, v]) => v !== null).length).toBeGreaterThan(20);
  for (const [key, value] of found) {
    if (value !== null) expect([key, value]).toEqual([key, expect.stringMatching(TIMESTAMP)]);
  }
});

test("expires_at sent with an offset comes back in UTC, in the create response and the list", async () => {
  world = await createWorld();
  const { id } = await world.mint({ name: "x", expires_at: "2027-06-01T12:00:00-07:00" });
  const list = await world.request("GET", "/v1/api_tokens");
  const item = list.body.data.find((t: { id: string }) => t.id === id);
  expect(item.expires_at).toBe("2027-06-01T19:00:00.000Z");
});

test("500 internal_error never carries internals: an unexpected store failure is answered with the fixed message", async () => {
  world = await createWorld();
  const { id } = await world.createService();
  // An error no rule maps (not a lost connection, which is 503 unavailable): its text is full
  // of what a caller must not see.
  const cause = "select * from services: database disk image is malformed at /srv/intake/src/store.ts:42";
  spyOn(world.app.store.services, "get").mockImplementation(() => Promise.reject(new Error(cause)));
  const reply = await world.request("GET", `/v1/services/${id}`);
  expect([reply.status, reply.body.error.code]).toEqual([500, "internal_error"]);
  expect(reply.body.error.message).toBe("Something went wrong on our side.");
  expect(reply.text).not.toMatch(/select|malformed|\.ts/);
  expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  // The cause is kept for the operator, in the log only.
  expect(world.logs.some((line) => line.includes("disk image is malformed"))).toBe(true);
});
