/**
 * GET /metrics (docs/operations.md): after each ingest outcome and each kind of request has
 * happened once, the scrape counts it under the right labels, and the exposition parses with
 * a real Prometheus text-format parser (not a regex of ours).
 */
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import parsePrometheusTextFormat, { type Family, type Sample } from "parse-prometheus-text-format";
import { DomainError } from "../../src/domain/errors.ts";
import { noopObserver } from "../../src/domain/ports/observer.ts";
import { createWorld, type World } from "../support/harness.ts";
import { sign } from "../support/signing.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Scrape {
  text: string;
  families: Map<string, Family>;
}

async function scrapeText(w: World): Promise<Scrape> {
  const res = await w.request("GET", "/metrics", { token: null });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  // The parser throws on any line that is not valid text format.
  return { text: res.text, families: new Map(parsePrometheusTextFormat(res.text).map((f) => [f.name, f])) };
}

async function scrape(w: World): Promise<Map<string, Family>> {
  return (await scrapeText(w)).families;
}

/**
 * The buckets of one labelled series of a histogram. The parser folds every series of a
 * histogram family into one bucket map (it keys buckets by `le` alone, and keeps `_count` and
 * `_sum` of unlabelled series only), so it is given the family's lines of that one label set.
 */
function histogram(text: string, name: string, labels: Record<string, string>): Sample {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const lines = text
    .split("\n")
    .filter((l) =>
      l.startsWith("#")
        ? l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `)
        : l.startsWith(`${name}_`) && pairs.every((p) => l.includes(p)),
    );
  const [f] = parsePrometheusTextFormat(`${lines.join("\n")}\n`);
  expect(f?.type).toBe("HISTOGRAM");
  return f?.metrics[0] as Sample;
}

function family(families: Map<string, Family>, name: string, type: Family["type"]): Family {
  const found = families.get(name);
  if (!found) throw new Error(`no ${name} in the exposition`);
  expect(found.type).toBe(type);
  return found;
}

/** The one sample whose labels are exactly `labels`. */
const sorted = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort());

function sample(f: Family, labels: Record<string, string>): Sample {
  const found = f.metrics.filter((m) => sorted(m.labels ?? {}) === sorted(labels));
  if (found.length !== 1) throw new Error(`${f.name}: ${found.length} samples with ${JSON.stringify(labels)}`);
  return found[0] as Sample;
}

const value = (f: Family, labels: Record<string, string>) => Number(sample(f, labels).value);

function ingest(w: World, serviceId: string, body: string, signature: string, key?: string) {
  const headers: Record<string, string> = { "content-type": "application/json", "x-service-signature": signature };
  if (key) headers["idempotency-key"] = key;
  return w.request("POST", `/v1/ingest/${serviceId}`, { token: null, body, headers });
}

describe("GET /metrics", () => {
  test("200 without a token: every series of docs/operations.md, counted under route templates and closed labels", async () => {
    world = await createWorld({ env: { INTAKE_MAX_EVENT_BYTES: "1024" } });
    const w = world;
    const svc = await w.createService("billing");
    const now = w.clock.now();
    const signed = (body: string) => sign(svc.secret, body, now);

    // Each ingest outcome once (rate_limited below), and each signature failure reason once.
    expect((await ingest(w, svc.id, '{"n":1}', signed('{"n":1}'), "k1")).status).toBe(202);
    expect((await ingest(w, svc.id, '{"n":1}', signed('{"n":1}'), "k1")).status).toBe(200);
    expect((await ingest(w, svc.id, "[1]", signed("[1]"))).status).toBe(400);
    expect((await ingest(w, svc.id, "x".repeat(2000), signed("x"))).status).toBe(413);
    expect((await ingest(w, `svc_${"0".repeat(32)}`, "{}", signed("{}"))).status).toBe(401);
    expect((await ingest(w, svc.id, "{}", "garbage")).status).toBe(401);
    expect((await ingest(w, svc.id, "{}", sign(svc.secret, "{}", now - 3_600_000))).status).toBe(401);
    expect((await ingest(w, svc.id, "{}", sign("whsec_wrong", "{}", now))).status).toBe(401);
    const spy = spyOn(w.app.store.events, "insertBatch").mockImplementationOnce(() =>
      Promise.reject(new DomainError("unavailable", "The store cannot be reached.")),
    );
    expect((await ingest(w, svc.id, "{}", signed("{}"))).status).toBe(503);
    spy.mockRestore();
    await w.request("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
    expect((await ingest(w, svc.id, "{}", signed("{}"))).status).toBe(409);

    // Management routes: a template with an id, a 401, a 404 of an unknown path, a 405.
    await w.request("GET", "/v1/tenant");
    await w.request("GET", "/v1/tenant", { token: null });
    await w.request("GET", `/v1/services/${svc.id}`);
    await w.request("GET", `/v1/nothing/${svc.id}`);
    await w.request("PUT", `/v1/services/${svc.id}`);
    // The feed and rate limits report through the same observer (docs/operations.md).
    w.app.observer.feedStreams(1);
    w.app.observer.rateLimited("api");
    w.app.observer.rateLimiterFallback("ingest");

    const { text, families: m } = await scrapeText(w);
    const requests = family(m, "intake_http_requests_total", "COUNTER");
    expect(value(requests, { route: "/v1/ingest/:service_id", method: "POST", status: "202" })).toBe(1);
    expect(value(requests, { route: "/v1/ingest/:service_id", method: "POST", status: "401" })).toBe(4);
    expect(value(requests, { route: "/v1/tenant", method: "GET", status: "200" })).toBe(1);
    expect(value(requests, { route: "/v1/tenant", method: "GET", status: "401" })).toBe(1);
    expect(value(requests, { route: "/v1/services/:id", method: "GET", status: "200" })).toBe(1);
    expect(value(requests, { route: "/v1/services/:id", method: "PUT", status: "405" })).toBe(1);
    expect(value(requests, { route: "unmatched", method: "GET", status: "404" })).toBe(1);

    family(m, "intake_http_request_duration_seconds", "HISTOGRAM");
    const ingestDurations = histogram(text, "intake_http_request_duration_seconds", {
      route: "/v1/ingest/:service_id",
      method: "POST",
    });
    expect(Number(ingestDurations.buckets?.["+Inf"])).toBe(10);
    // Sub-millisecond buckets exist for the authenticated reads (bench/README.md).
    expect(Object.keys(ingestDurations.buckets ?? {})).toContain("0.0005");

    const outcomes = family(m, "intake_ingest_events_total", "COUNTER");
    for (const [outcome, n] of Object.entries({
      accepted: 1,
      duplicate: 1,
      invalid_request: 1,
      payload_too_large: 1,
      invalid_signature: 4,
      unavailable: 1,
      paused: 1,
      rate_limited: 0,
    })) {
      expect({ outcome, n: value(outcomes, { outcome }) }).toEqual({ outcome, n });
    }
    const reasons = family(m, "intake_ingest_signature_failures_total", "COUNTER");
    for (const reason of [
      "unknown_service",
      "malformed_signature_header",
      "timestamp_outside_tolerance",
      "no_matching_signature",
    ]) {
      expect({ reason, n: value(reasons, { reason }) }).toEqual({ reason, n: 1 });
    }

    // Two commits: the accepted event and the one the store refused is not counted.
    const batches = sample(family(m, "intake_ingest_commit_batch_size", "HISTOGRAM"), {});
    expect(Number(batches.count)).toBe(2);
    expect(Number(batches.buckets?.["1"])).toBe(2);
    const commits = sample(family(m, "intake_ingest_commit_duration_seconds", "HISTOGRAM"), {});
    expect(Number(commits.count)).toBe(2);

    const lookups = family(m, "intake_cache_lookups_total", "COUNTER");
    expect(value(lookups, { namespace: "tok", result: "hit" })).toBeGreaterThan(0);
    expect(value(lookups, { namespace: "svc", result: "hit" })).toBeGreaterThan(0);
    expect(value(lookups, { namespace: "tnt", result: "miss" })).toBe(1);
    // The unknown service was looked up once and then cached as "does not exist".
    expect(value(lookups, { namespace: "svc", result: "miss" })).toBeGreaterThan(0);

    expect(value(family(m, "intake_feed_streams", "GAUGE"), {})).toBe(1);
    expect(value(family(m, "intake_rate_limited_total", "COUNTER"), { policy: "api" })).toBe(1);
    expect(value(family(m, "intake_rate_limiter_fallback_total", "COUNTER"), { policy: "ingest" })).toBe(1);
    expect(value(family(m, "intake_build_info", "GAUGE"), { version: w.app.config.version })).toBe(1);
    expect(value(family(m, "process_cpu_seconds_total", "COUNTER"), {})).toBeGreaterThan(0);
    expect(value(family(m, "process_resident_memory_bytes", "GAUGE"), {})).toBeGreaterThan(1_000_000);

    // No label anywhere carries a tenant, token or service id, or a raw path.
    const labelValues = [...m.values()].flatMap((f) => f.metrics.flatMap((s) => Object.values(s.labels ?? {})));
    for (const leaked of [svc.id, w.tenantId, w.ownerTokenId, w.ownerToken, "/v1/nothing"]) {
      expect(labelValues.filter((v) => v.includes(leaked))).toEqual([]);
    }
    expect(labelValues.filter((v) => /svc_|tok_|req_/.test(v))).toEqual([]);
  });

  test("an ingest refused as rate_limited inside the domain is counted under outcome rate_limited", async () => {
    // Stand-in for the rate limiter (docs/operations.md): any rate_limited DomainError raised
    // while ingesting is counted by its code.
    world = await createWorld();
    const svc = await world.createService();
    spyOn(world.app.store.events, "insertBatch").mockImplementation(() =>
      Promise.reject(new DomainError("rate_limited", "Slow down.")),
    );
    const body = "{}";
    expect((await ingest(world, svc.id, body, sign(svc.secret, body, world.clock.now()))).status).toBe(429);
    const outcomes = family(await scrape(world), "intake_ingest_events_total", "COUNTER");
    expect(value(outcomes, { outcome: "rate_limited" })).toBe(1);
  });

  test("a route counts each status apart, whatever their order; a route never called has no series", async () => {
    world = await createWorld();
    for (const token of [world.ownerToken, "service_live_not-a-token", world.ownerToken, null]) {
      await world.request("GET", "/v1/tenant", { token });
    }
    const { text, families } = await scrapeText(world);
    const requests = family(families, "intake_http_requests_total", "COUNTER");
    const tenant = { route: "/v1/tenant", method: "GET" };
    expect(value(requests, { ...tenant, status: "200" })).toBe(2);
    expect(value(requests, { ...tenant, status: "401" })).toBe(2);
    expect(Number(histogram(text, "intake_http_request_duration_seconds", tenant).buckets?.["+Inf"])).toBe(4);
    expect(text).not.toContain('route="/v1/api_tokens/:id"');
  });

  test("an unknown method is counted as method=other: the label is a closed set", async () => {
    world = await createWorld();
    await world.app.fetch(new Request("http://intake.test/v1/tenant", { method: "PROPFIND" }));
    const requests = family(await scrape(world), "intake_http_requests_total", "COUNTER");
    expect(requests.metrics.map((s) => s.labels?.method)).not.toContain("PROPFIND");
    expect(requests.metrics.some((s) => s.labels?.method === "other")).toBe(true);
  });

  test("404 for GET /metrics with INTAKE_METRICS=false, and nothing is recorded", async () => {
    world = await createWorld({ env: { INTAKE_METRICS: "false" } });
    const res = await world.request("GET", "/metrics", { token: null });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect(world.app.observer).toBe(noopObserver);
  });
});

describe("a long poll's wait", () => {
  test("is left out of intake_http_request_duration_seconds on REST and Connect: an empty wait=1 poll records well under 1 s", async () => {
    world = await createWorld();
    const started = performance.now();
    const rest = await world.request("GET", "/v1/feed?start=latest&wait=1");
    expect(rest.status).toBe(200);
    const rpc = await world.request("POST", "/intake.v1.EventFeedService/ListFeed", {
      body: { start: "FEED_START_LATEST", waitSeconds: 1 },
      headers: { "connect-protocol-version": "1" },
    });
    expect(rpc.status).toBe(200);
    // Both polls really waited their second for an event that never came.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1900);
    const { text } = await scrapeText(world);
    for (const route of ["/v1/feed", "/intake.v1.EventFeedService/ListFeed"]) {
      const { buckets } = histogram(text, "intake_http_request_duration_seconds", { route });
      // One request, and it fell in the 0.5 s bucket: its second of waiting is not in it.
      expect([route, buckets?.["+Inf"], buckets?.["0.5"]]).toEqual([route, "1", "1"]);
    }
  });
});
