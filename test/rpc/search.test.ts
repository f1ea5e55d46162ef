/**
 * IngestService/SearchEvents and ServiceRegistryService/GetServiceStats against GET /v1/events
 * and GET /v1/services/{id}/stats on one served world (SPEC §18, §22): the same pages, the same
 * counts, the same refusals (search_disabled as FailedPrecondition). Runs on both stacks.
 */
import { afterEach, expect, test } from "bun:test";
import { createClient } from "@connectrpc/connect";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { ServiceRegistryService } from "../../gen/intake/v1/services_pb.ts";
import type { World } from "../support/harness.ts";
import { sign } from "../support/signing.ts";
import { bearer, codeName, failure, type Served, serveWorld, transportFor } from "./support.ts";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

async function ingest(w: World, service: { id: string; secret: string }, payload: unknown, key?: string) {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { "x-service-signature": sign(service.secret, body, w.clock.now()) };
  if (key) headers["idempotency-key"] = key;
  return (await w.request("POST", `/v1/ingest/${service.id}`, { token: null, body, headers })).status;
}

test("SearchEvents returns GET /v1/events' pages (filters, q, cursor); a bad time is invalid_request", async () => {
  served = await serveWorld({ env: { INTAKE_EVENT_SEARCH: "true" } });
  const s = served;
  const w = s.world;
  const a = await w.createService("a");
  const b = await w.createService("b");
  expect(await ingest(w, a, { type: "invoice.paid", customer: "cus_123" })).toBe(202);
  w.clock.advance(10);
  expect(await ingest(w, b, { type: "invoice.paid" })).toBe(202);
  w.clock.advance(10);
  expect(await ingest(w, a, { type: "customer.created" })).toBe(202);
  const client = createClient(IngestService, transportFor(s, "connect-json"));
  const auth = bearer(w.ownerToken);
  for (const query of [{}, { service_id: a.id }, { type: "invoice.paid" }, { q: "CUS_123" }, { limit: 2 }]) {
    const rest = await w.request("GET", `/v1/events?${new URLSearchParams(query as Record<string, string>)}`);
    expect(rest.status).toBe(200);
    const rpc = await client.searchEvents(
      {
        serviceId: (query as { service_id?: string }).service_id,
        type: (query as { type?: string }).type,
        q: (query as { q?: string }).q,
        limit: (query as { limit?: number }).limit,
      },
      auth,
    );
    expect(rpc.data.map((e) => ({ id: e.id, type: e.type ?? null }))).toEqual(
      rest.body.data.map((e: { id: string; type: string | null }) => ({ id: e.id, type: e.type })),
    );
    expect(rpc.data.map((e) => JSON.parse(new TextDecoder().decode(e.payload)))).toEqual(
      rest.body.data.map((e: { payload: unknown }) => e.payload),
    );
    expect(rpc.nextCursor === undefined).toBe(rest.body.next_cursor === null);
  }
  const first = await client.searchEvents({ limit: 2 }, auth);
  const rest = await w.request("GET", `/v1/events?limit=2&cursor=${first.nextCursor}`);
  expect((await client.searchEvents({ limit: 2, cursor: first.nextCursor }, auth)).data.map((e) => e.id)).toEqual(
    rest.body.data.map((e: { id: string }) => e.id),
  );
  const bad = await failure(client.searchEvents({ receivedAfter: "yesterday" }, auth));
  expect(bad.restCode).toBe("invalid_request");
});

test("SearchEvents with search off: q is search_disabled (FailedPrecondition), the filters answer", async () => {
  served = await serveWorld();
  const client = createClient(IngestService, transportFor(served, "connect-json"));
  const auth = bearer(served.world.ownerToken);
  const off = await failure(client.searchEvents({ q: "invoice" }, auth));
  expect(off.restCode).toBe("search_disabled");
  expect(off.code).toBe(codeName(9));
  expect((await client.searchEvents({ type: "invoice.paid" }, auth)).data).toEqual([]);
});

test("GetServiceStats gives GET /v1/services/{id}/stats' buckets and totals; another tenant's service is not_found", async () => {
  served = await serveWorld();
  const s = served;
  const w = s.world;
  const svc = await w.createService();
  expect(await ingest(w, svc, { n: 1 }, "k")).toBe(202);
  expect(await ingest(w, svc, { n: 1 }, "k")).toBe(200);
  expect(await ingest(w, { id: svc.id, secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" }, { n: 2 })).toBe(
    401,
  );
  await w.app.domain.statsAggregator.flush();
  const client = createClient(ServiceRegistryService, transportFor(s, "connect-json"));
  const auth = bearer(w.ownerToken);
  for (const window of ["24h", "7d"]) {
    const rest = (await w.request("GET", `/v1/services/${svc.id}/stats?window=${window}`)).body;
    const rpc = await client.getServiceStats({ id: svc.id, window }, auth);
    const numbers = (counts: Record<string, bigint>) =>
      Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Number(v)]));
    const iso = (t: { seconds: bigint } | undefined) => new Date(Number(t?.seconds ?? 0n) * 1000).toISOString();
    expect({
      window: rpc.window,
      bucket_seconds: rpc.bucketSeconds,
      from: iso(rpc.from),
      to: iso(rpc.to),
      buckets: rpc.buckets.map((bucket) => ({ start: iso(bucket.start), counts: numbers(bucket.counts) })),
      totals: numbers(rpc.totals),
    }).toEqual(rest);
    expect(numbers(rpc.totals)).toEqual({ accepted: 1, duplicate: 1, no_matching_signature: 1 });
  }
  const other = await w.otherTenant();
  const foreign = await failure(client.getServiceStats({ id: svc.id }, bearer(other.token)));
  expect(foreign.restCode).toBe("not_found");
});
