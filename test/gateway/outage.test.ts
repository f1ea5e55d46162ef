/**
 * 503 unavailable: when the store reports it cannot be reached (the adapters' DomainError
 * "unavailable"), every route answers 503 in the one error shape, nothing is half-written,
 * and no outage is remembered as a verdict (an unknown token, a missing service).
 */
import { afterEach, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import type { Store } from "../../src/domain/ports/store.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

/** Makes one repository method fail as an unreachable store would, until the returned restore runs. */
function outage<R extends "tokens" | "services" | "tenants">(
  store: Store,
  repo: R,
  method: keyof Store[R],
): () => void {
  const target = store[repo] as unknown as Record<string, unknown>;
  const original = target[method as string];
  target[method as string] = async () => {
    throw new DomainError("unavailable", "The store cannot be reached.", undefined, {
      cause: new Error("connect ECONNREFUSED 10.0.0.5:5432"),
    });
  };
  return () => {
    target[method as string] = original;
  };
}

test("503 unavailable for a route whose store read fails, with no internals in the message", async () => {
  world = await createWorld();
  const { id } = await world.createService();
  const restore = outage(world.app.store, "services", "get");
  const reply = await world.request("GET", `/v1/services/${id}`);
  expect(reply.status).toBe(503);
  expect(reply.body.error.code).toBe("unavailable");
  expect(reply.body.error.message).not.toContain("ECONNREFUSED");
  expect(reply.body.error.request_id).toBe(reply.headers.get("x-request-id"));
  restore();
  expect((await world.request("GET", `/v1/services/${id}`)).status).toBe(200);
});

test("503 unavailable for an uncached token when the token lookup fails, and the outage is not cached as unknown", async () => {
  world = await createWorld();
  const { token } = await world.mint({ name: "fresh" });
  const restore = outage(world.app.store, "tokens", "findByDigest");
  const reply = await world.request("GET", "/v1/tenant", { token });
  expect(reply.status).toBe(503);
  expect(reply.body.error.code).toBe("unavailable");
  restore();
  // The very next request, inside the negative-cache window, authenticates.
  expect((await world.request("GET", "/v1/tenant", { token })).status).toBe(200);
});

test("503 unavailable when revocation cannot be written: the token stays valid (nothing half-done)", async () => {
  world = await createWorld();
  const target = await world.mint({ name: "t", scope: "read_write" });
  await world.request("GET", "/v1/tenant", { token: target.token });
  const restore = outage(world.app.store, "tokens", "revoke");
  expect((await world.request("DELETE", `/v1/api_tokens/${target.id}`)).status).toBe(503);
  restore();
  expect((await world.request("GET", "/v1/tenant", { token: target.token })).status).toBe(200);
  expect((await world.request("GET", `/v1/api_tokens/${target.id}`)).body.revoked_at).toBeNull();
});

test("503 unavailable when a service insert fails: no service appears and no secret is shown", async () => {
  world = await createWorld();
  const restore = outage(world.app.store, "services", "insert");
  const reply = await world.request("POST", "/v1/services", { body: { service_name: "billing" } });
  expect(reply.status).toBe(503);
  expect(reply.text).not.toContain("whsec_");
  restore();
  expect((await world.request("GET", "/v1/services")).body.data).toEqual([]);
  expect((await world.request("POST", "/v1/services", { body: { service_name: "billing" } })).status).toBe(201);
});

test("503 never touches health: GET /v1/health stays 200 during a store outage", async () => {
  world = await createWorld();
  outage(world.app.store, "tokens", "findByDigest");
  outage(world.app.store, "tenants", "get");
  expect((await world.request("GET", "/v1/health", { token: null })).status).toBe(200);
});

test("no 429 without a configured rate limit: 300 rapid calls all succeed", async () => {
  world = await createWorld();
  const replies = await Promise.all(Array.from({ length: 300 }, () => world.request("GET", "/v1/tenant")));
  expect(replies.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
});
