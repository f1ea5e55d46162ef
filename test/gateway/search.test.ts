/**
 * GET /v1/events (SPEC §18) and GET /v1/services/{id}/stats (§22) through the REST edge, on both
 * stacks (INTAKE_TEST_STACK). The query rules' every corner is test/domain/search.test.ts's; the
 * index's is test/store/search-contract.ts's; here: what a caller of the routes sees.
 */
import { afterEach, expect, test } from "bun:test";
import { createWorld, type World } from "../support/harness.ts";
import { sign } from "../support/signing.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function ingest(w: World, service: { id: string; secret: string }, payload: unknown): Promise<string> {
  const body = JSON.stringify(payload);
  const reply = await w.request("POST", `/v1/ingest/${service.id}`, {
    token: null,
    body,
    headers: { "content-type": "application/json", "x-service-signature": sign(service.secret, body, w.clock.now()) },
  });
  expect(reply.status).toBe(202);
  return reply.body.id;
}

const ids = (reply: { body: { data: { id: string }[] } }) => reply.body.data.map((e) => e.id);

test("GET /v1/events: the tenant's events newest first, each filter and their AND, received_after inclusive and received_before exclusive", async () => {
  world = await createWorld();
  const w = world;
  const a = await w.createService("a");
  const b = await w.createService("b");
  const first = await ingest(w, a, { type: "invoice.paid", n: 1 });
  w.clock.advance(1000);
  const middle = w.clock.now();
  const second = await ingest(w, b, { type: "invoice.paid", n: 2 });
  w.clock.advance(1000);
  const third = await ingest(w, a, { type: "customer.created", n: 3 });
  const other = await w.otherTenant();
  const all = await w.request("GET", "/v1/events");
  expect(all.status).toBe(200);
  expect(ids(all)).toEqual([third, second, first]);
  expect(all.body.next_cursor).toBeNull();
  expect(all.body.data[0]).toMatchObject({
    service_id: a.id,
    type: "customer.created",
    incident_id: null,
    payload: { n: 3 },
  });
  expect(ids(await w.request("GET", `/v1/events?service_id=${a.id}`))).toEqual([third, first]);
  expect(ids(await w.request("GET", "/v1/events?type=invoice.paid"))).toEqual([second, first]);
  expect(ids(await w.request("GET", `/v1/events?service_id=${a.id}&type=invoice.paid`))).toEqual([first]);
  const at = new Date(middle).toISOString();
  expect(ids(await w.request("GET", `/v1/events?received_after=${at}`))).toEqual([third, second]);
  expect(ids(await w.request("GET", `/v1/events?received_before=${at}`))).toEqual([first]);
  expect(ids(await w.request("GET", `/v1/events?incident_id=inc_${"0".repeat(32)}`))).toEqual([]);
  // Another tenant sees none of them, whatever it names.
  expect(ids(await w.request("GET", "/v1/events", { token: other.token }))).toEqual([]);
  expect(ids(await w.request("GET", `/v1/events?service_id=${a.id}`, { token: other.token }))).toEqual([]);
});

test("GET /v1/events pages by next_cursor without repeats or gaps", async () => {
  world = await createWorld();
  const w = world;
  const s = await w.createService();
  const made: string[] = [];
  for (let i = 0; i < 5; i++) {
    made.unshift(await ingest(w, s, { type: "t.x", i }));
    w.clock.advance(10);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const reply: Awaited<ReturnType<World["request"]>> = await w.request(
      "GET",
      `/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.data.length).toBeLessThanOrEqual(2);
    seen.push(...ids(reply));
    cursor = reply.body.next_cursor;
  } while (cursor);
  expect(seen).toEqual(made);
});

test("GET /v1/events answers 400 invalid_request for bad ids, times, limits, cursors and q terms, and 400 search_disabled for q while search is off", async () => {
  world = await createWorld();
  const w = world;
  for (const [query, field] of [
    ["service_id=nope", "service_id"],
    ["incident_id=svc_0193a1b2c3d4e5f60718293a4b5c6d7e", "incident_id"],
    ["received_after=2026-02-30T00:00:00Z", "received_after"],
    ["received_before=yesterday", "received_before"],
    ["limit=0", "limit"],
    ["cursor=bm9wZQ", "cursor"],
  ] as const) {
    const reply = await w.request("GET", `/v1/events?${query}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe("invalid_request");
    expect(JSON.stringify(reply.body.error.details)).toContain(field);
  }
  const off = await w.request("GET", "/v1/events?q=invoice");
  expect(off.status).toBe(400);
  expect(off.body.error.code).toBe("search_disabled");
});

test("GET /v1/events?q= with search on: substrings case-insensitively (cus_123, an e-mail, invoice.pa), terms ANDed, bad terms 400", async () => {
  world = await createWorld({ env: { INTAKE_EVENT_SEARCH: "true" } });
  const w = world;
  const s = await w.createService();
  const customer = await ingest(w, s, { type: "invoice.paid", customer: "cus_123", email: "Ada@Example.com" });
  w.clock.advance(10);
  const lookalike = await ingest(w, s, { type: "invoice.created", customer: "cusX123" });
  const other = await w.otherTenant();
  const q = async (text: string, token?: string) => {
    const reply = await w.request("GET", `/v1/events?q=${encodeURIComponent(text)}`, token ? { token } : {});
    expect(reply.status).toBe(200);
    return ids(reply);
  };
  expect(await q("cus_123")).toEqual([customer]);
  expect(await q("ada@example.COM")).toEqual([customer]);
  expect(await q("invoice.pa")).toEqual([customer]);
  expect(await q("invoice")).toEqual([lookalike, customer]);
  expect(await q("invoice cusX123")).toEqual([lookalike]);
  expect(await q("invoice.paid cusX123")).toEqual([]);
  expect(await q("cus_123", other.token)).toEqual([]);
  for (const bad of ["ab", "a b c", "x".repeat(257), "one two three four five six seven eight nine"]) {
    const reply = await w.request("GET", `/v1/events?q=${encodeURIComponent(bad)}`);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe("invalid_request");
  }
});

test("GET /v1/services/{id}/stats: accepted, duplicate and bad-signature ingests in their buckets and totals; 404 for another tenant's or an unknown service, 400 for a bad window", async () => {
  world = await createWorld();
  const w = world;
  const s = await w.createService();
  const body = JSON.stringify({ type: "invoice.paid" });
  const post = (signature: string, headers: Record<string, string> = {}) =>
    w.request("POST", `/v1/ingest/${s.id}`, {
      token: null,
      body,
      headers: { "x-service-signature": signature, ...headers },
    });
  const now = w.clock.now();
  expect((await post(sign(s.secret, body, now), { "idempotency-key": "k" })).status).toBe(202);
  expect((await post(sign(s.secret, body, now), { "idempotency-key": "k" })).status).toBe(200);
  expect((await post(sign("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", body, now))).status).toBe(401);
  await w.app.domain.statsAggregator.flush();

  const reply = await w.request("GET", `/v1/services/${s.id}/stats`);
  expect(reply.status).toBe(200);
  const stats = reply.body;
  expect(stats.window).toBe("24h");
  expect(stats.bucket_seconds).toBe(300);
  expect(stats.buckets).toHaveLength(288);
  expect(stats.totals).toEqual({ accepted: 1, duplicate: 1, no_matching_signature: 1 });
  const last = stats.buckets[stats.buckets.length - 1];
  expect(Date.parse(last.start)).toBeLessThanOrEqual(now);
  expect(Date.parse(stats.to)).toBeGreaterThan(now);
  expect(last.counts).toEqual({ accepted: 1, duplicate: 1, no_matching_signature: 1 });
  expect(stats.buckets.slice(0, -1).every((b: { counts: object }) => Object.keys(b.counts).length === 0)).toBe(true);

  const week = await w.request("GET", `/v1/services/${s.id}/stats?window=7d`);
  expect(week.status).toBe(200);
  expect(week.body.bucket_seconds).toBe(3600);
  expect(week.body.buckets).toHaveLength(168);
  expect(week.body.totals).toEqual(stats.totals);

  const other = await w.otherTenant();
  expect((await w.request("GET", `/v1/services/${s.id}/stats`, { token: other.token })).status).toBe(404);
  expect((await w.request("GET", `/v1/services/svc_${"0".repeat(32)}/stats`)).status).toBe(404);
  const bad = await w.request("GET", `/v1/services/${s.id}/stats?window=30d`);
  expect(bad.status).toBe(400);
  expect(bad.body.error.code).toBe("invalid_request");
});

test("INTAKE_SERVICE_STATS=false: ingest answers as always and no outcome is counted (the stats route answers empty totals)", async () => {
  world = await createWorld({ env: { INTAKE_SERVICE_STATS: "false" } });
  const w = world;
  const s = await w.createService();
  await ingest(w, s, { type: "invoice.paid" });
  await w.app.domain.statsAggregator.flush();
  const reply = await w.request("GET", `/v1/services/${s.id}/stats`);
  expect(reply.status).toBe(200);
  expect(reply.body.totals).toEqual({});
});
