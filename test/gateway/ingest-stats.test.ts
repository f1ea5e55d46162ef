/**
 * §22's service stats fed by real ingest requests through the REST edge: what a sender's
 * chart will show. Runs on both stacks (INTAKE_TEST_STACK). The read goes through the domain
 * function the stats route calls (the route itself: test/gateway/search.test.ts).
 */
import { afterEach, expect, test } from "bun:test";
import type { Principal } from "../../src/domain/types.ts";
import { createWorld, type World } from "../support/harness.ts";
import { sign } from "../support/signing.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function reader(w: World): Principal {
  return { tokenId: "x", tenantId: w.tenantId, scope: "read_only", role: "member", permissionMode: "role_based" };
}

test("refused ingests (bad signature, stale timestamp, oversized, paused) are counted per reason beside the accepted and duplicates", async () => {
  world = await createWorld();
  const w = world;
  const { id, secret } = await w.createService();
  const other = await w.createService();
  const post = (body: string, signature: string, headers: Record<string, string> = {}) =>
    w.request("POST", `/v1/ingest/${id}`, {
      token: null,
      body,
      headers: { "x-service-signature": signature, ...headers },
    });
  const body = JSON.stringify({ type: "invoice.paid" });
  const now = w.clock.now();
  expect((await post(body, sign(secret, body, now))).status).toBe(202);
  expect((await post(body, sign(secret, body, now), { "idempotency-key": "k1" })).status).toBe(202);
  expect((await post(body, sign(secret, body, now), { "idempotency-key": "k1" })).status).toBe(200);
  // Signed with another service's secret, and with a timestamp ten minutes old.
  expect((await post(body, sign(other.secret, body, now))).status).toBe(401);
  expect((await post(body, sign(secret, body, now - 600_000))).status).toBe(401);
  expect((await post(body, sign(secret, body, now - 600_000))).status).toBe(401);
  expect((await post(body, "t=nope")).status).toBe(401);
  expect((await post("[1]", sign(secret, "[1]", now))).status).toBe(400);
  const huge = JSON.stringify({ pad: "x".repeat(300_000) });
  expect((await post(huge, sign(secret, huge, now))).status).toBe(413);
  expect((await w.request("PATCH", `/v1/services/${id}`, { body: { is_monitored: false } })).status).toBe(200);
  expect((await post(body, sign(secret, body, now))).status).toBe(409);
  // An unknown service's refusals are nobody's stats.
  const unknown = `svc_${"0".repeat(32)}`;
  expect((await w.request("POST", `/v1/ingest/${unknown}`, { token: null, body })).status).toBe(401);

  await w.app.domain.statsAggregator.flush();
  const stats = await w.app.domain.serviceStats.serviceStats(reader(w), id, "24h");
  expect(stats.totals).toEqual({
    accepted: 2,
    duplicate: 1,
    no_matching_signature: 1,
    timestamp_outside_tolerance: 2,
    malformed_signature_header: 1,
    invalid_request: 1,
    payload_too_large: 1,
    paused: 1,
  });
  expect((await w.app.domain.serviceStats.serviceStats(reader(w), other.id, "24h")).totals).toEqual({});
});

test("counts wait in memory until the flush: no store write per request", async () => {
  world = await createWorld();
  const w = world;
  const { id, secret } = await w.createService();
  const body = "{}";
  expect(
    (
      await w.request("POST", `/v1/ingest/${id}`, {
        token: null,
        body,
        headers: { "x-service-signature": sign(secret, body, w.clock.now()) },
      })
    ).status,
  ).toBe(202);
  expect((await w.app.domain.serviceStats.serviceStats(reader(w), id, "24h")).totals).toEqual({});
  await w.app.domain.statsAggregator.flush();
  expect((await w.app.domain.serviceStats.serviceStats(reader(w), id, "24h")).totals).toEqual({ accepted: 1 });
});
