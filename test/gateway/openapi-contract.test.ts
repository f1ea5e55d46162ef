/**
 * The contract (SPEC §20): a representative call set — every operation of /openapi.json, its
 * success and its main errors — replayed against the app, each request and answer checked
 * against the document the app serves (test/support/openapi-contract.ts: Ajv over the
 * document's own schemas). Zero mismatches: a request the document allows is one the server
 * takes, a request it forbids is one the server refuses, and every answer (status, media type,
 * headers, body) is one the document describes.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createWorld, type World } from "../support/harness.ts";
import { createContractChecker } from "../support/openapi-contract.ts";
import { sign } from "../support/signing.ts";

let world: World;
let checker: ReturnType<typeof createContractChecker>;
/** Every exchange's mismatches, and which operation/status pairs were seen. */
const mismatches: string[] = [];
const seen = new Set<string>();

beforeAll(async () => {
  // Limits on, so every limited answer carries (and the document must declare) the RateLimit fields.
  world = await createWorld({
    env: { INTAKE_RATE_LIMIT_API: "10000/60s", INTAKE_RATE_LIMIT_INGEST: "10000/60s", INTAKE_MAX_EVENT_BYTES: "4096" },
  });
  const res = await world.app.fetch(new Request("http://intake.test/openapi.json"));
  checker = createContractChecker(await res.json());
});
afterAll(async () => {
  await world.close();
});

interface Call {
  token?: string | null;
  /** An object is sent as JSON; a string as it is (with `headers` naming its type). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Whether the document allows this request (default true): a forbidden one must be refused. */
  allowed?: boolean;
  /** A stream: read the headers only. */
  headersOnly?: boolean;
}

/** Sends one request through the app and records what the document says of it; returns status and body. */
async function call(
  method: string,
  url: string,
  expected: number,
  options: Call = {},
  // biome-ignore lint/suspicious/noExplicitAny: answers are read freely
): Promise<any> {
  const headers = new Headers(options.headers);
  const token = options.token === undefined ? world.ownerToken : options.token;
  if (token !== null) headers.set("authorization", `Bearer ${token}`);
  let bytes: Uint8Array | null = null;
  if (options.body !== undefined) {
    const text = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    bytes = new TextEncoder().encode(text);
    if (typeof options.body !== "string" && !headers.has("content-type"))
      headers.set("content-type", "application/json");
  }
  const res = await world.app.fetch(new Request(`http://intake.test${url}`, { method, headers, body: bytes }));
  let text: string | null = null;
  if (options.headersOnly && res.ok) await res.body?.cancel();
  else text = await res.text();
  const where = `${method} ${url} → ${res.status}`;
  if (res.status !== expected) mismatches.push(`${where}: expected ${expected} (${text?.slice(0, 200)})`);
  const verdict = checker.check({
    method,
    url,
    requestHeaders: headers,
    requestBody: bytes,
    status: res.status,
    responseHeaders: res.headers,
    responseText: text,
  });
  const allowed = options.allowed ?? true;
  if (allowed && verdict.request.length > 0)
    mismatches.push(`${where}: request refused by the document: ${verdict.request}`);
  if (!allowed && verdict.request.length === 0)
    mismatches.push(`${where}: the document allows a request the server refused`);
  for (const problem of verdict.response) mismatches.push(`${where}: ${problem}`);
  seen.add(
    `${method} ${new URL(url, "http://x").pathname.replace(/(tok|svc|evt|inc)_[0-9a-f]{32}/g, "$1")} ${res.status}`,
  );
  return text ? JSON.parse(text.startsWith("{") ? text : "null") : null;
}

const unknownId = (kind: string) => `${kind}_0193a1b2c3d4e5f60718293a4b5c6d7e`;

test("every operation, its success and main errors, agrees with /openapi.json: zero request- or response-side mismatches", async () => {
  // Health, tenant.
  await call("GET", "/v1/health", 200, { token: null });
  await call("GET", "/v1/tenant", 200);
  await call("GET", "/v1/tenant", 401, { token: null });
  await call("GET", "/v1/tenant", 401, { token: "service_live_nope" });
  await call("PATCH", "/v1/tenant", 200, { body: { name: "Acme Inc." } });
  await call("PATCH", "/v1/tenant", 200, { body: {} });
  await call("PATCH", "/v1/tenant", 200);
  await call("PATCH", "/v1/tenant", 400, { body: { name: "" }, allowed: false });
  await call("PATCH", "/v1/tenant", 400, { body: { permission_mode: "flat" } });
  await call("PATCH", "/v1/tenant", 415, {
    body: "name=x",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    allowed: false,
  });
  const reader = await world.mint({ name: "reader", scope: "read_only" });
  await call("PATCH", "/v1/tenant", 403, { token: reader.token, body: { name: "X" } });

  // API tokens.
  const minted = await call("POST", "/v1/api_tokens", 201, {
    body: { name: "ci", scope: "read_write", role: "admin", expires_at: "2099-01-31T23:59:59+02:00" },
  });
  await call("POST", "/v1/api_tokens", 400, { body: { scope: "read_only" }, allowed: false });
  await call("POST", "/v1/api_tokens", 400, { body: { name: "x", expires_at: "tomorrow" }, allowed: false });
  await call("POST", "/v1/api_tokens", 400, { body: { name: "x", expires_at: "2020-01-01T00:00:00Z" } });
  await call("POST", "/v1/api_tokens", 403, { token: reader.token, body: { name: "x" } });
  const member = await world.mint({ name: "member", scope: "read_write", role: "member" });
  await call("POST", "/v1/api_tokens", 403, { token: member.token, body: { name: "x", role: "owner" } });
  const page = await call("GET", "/v1/api_tokens?limit=1&include_revoked=true", 200);
  await call("GET", `/v1/api_tokens?cursor=${page.next_cursor}`, 200);
  await call("GET", "/v1/api_tokens?limit=0", 400, { allowed: false });
  await call("GET", "/v1/api_tokens?cursor=bm9wZQ", 400);
  await call("GET", `/v1/api_tokens/${minted.id}`, 200);
  await call("GET", `/v1/api_tokens/${unknownId("tok")}`, 404);
  await call("DELETE", `/v1/api_tokens/${minted.id}`, 200);
  await call("DELETE", `/v1/api_tokens/${unknownId("tok")}`, 404);
  await call("DELETE", `/v1/api_tokens/${world.ownerTokenId}`, 409);

  // Services.
  const service = await call("POST", "/v1/services", 201, { body: { service_name: "billing" } });
  await call("POST", "/v1/services", 409, { body: { service_name: "billing" } });
  await call("POST", "/v1/services", 400, { body: {}, allowed: false });
  await call("POST", "/v1/services", 400, { body: { service_name: "x", extra: 1 }, allowed: false });
  await call("GET", "/v1/services?limit=10", 200);
  await call("GET", "/v1/services?limit=101", 400, { allowed: false });
  await call("GET", `/v1/services/${service.id}`, 200);
  await call("GET", `/v1/services/${unknownId("svc")}`, 404);
  await call("PATCH", `/v1/services/${service.id}`, 200, { body: { rate_limit: { limit: 100, window_seconds: 60 } } });
  await call("PATCH", `/v1/services/${service.id}`, 200, { body: { rate_limit: null } });
  await call("PATCH", `/v1/services/${service.id}`, 200, { body: {} });
  await call("PATCH", `/v1/services/${service.id}`, 400, { body: { service_name: "renamed" } });
  await call("PATCH", `/v1/services/${service.id}`, 400, {
    body: { rate_limit: { limit: 0, window_seconds: 60 } },
    allowed: false,
  });
  // A number as text is refused by both (SPEC §20: JSON numbers only).
  await call("PATCH", `/v1/services/${service.id}`, 400, {
    body: { rate_limit: { limit: "5", window_seconds: 60 } },
    allowed: false,
  });
  await call("PATCH", `/v1/services/${unknownId("svc")}`, 404, { body: { is_monitored: false } });
  await call("POST", `/v1/services/${service.id}/secret_rotations`, 201);
  await call("POST", `/v1/services/${unknownId("svc")}/secret_rotations`, 404);

  // Ingest: a fresh service, whose secret is known.
  const sender = await world.createService("sender");
  const ingest = (body: string, headers: Record<string, string>, expected: number, allowed = true) =>
    call("POST", `/v1/ingest/${sender.id}`, expected, { token: null, body, headers, allowed });
  const signed = (body: string) => sign(sender.secret, body, world.clock.now());
  const event = JSON.stringify({ type: "invoice.paid", amount: 4200 });
  const first = await ingest(
    event,
    { "content-type": "application/json", "x-service-signature": signed(event), "idempotency-key": "k-1" },
    202,
  );
  await ingest(
    event,
    { "content-type": "application/json", "x-service-signature": signed(event), "idempotency-key": "k-1" },
    200,
  );
  const plain = JSON.stringify({ type: "plain" });
  await ingest(plain, { "content-type": "text/plain", "x-service-signature": signed(plain) }, 202);
  await ingest(event, { "content-type": "application/json", "x-service-signature": "t=1,v1=00" }, 401);
  // No signature header: the document allows it (the set needed depends on the scheme); the 401 is documented.
  await ingest(event, { "content-type": "application/json" }, 401);
  const notObject = "[1,2]";
  await ingest(notObject, { "content-type": "application/json", "x-service-signature": signed(notObject) }, 400, false);
  const big = JSON.stringify({ pad: "x".repeat(5000) });
  await ingest(big, { "content-type": "application/json", "x-service-signature": signed(big) }, 413);
  await call("PATCH", `/v1/services/${sender.id}`, 200, { body: { is_monitored: false } });
  await ingest(event, { "content-type": "application/json", "x-service-signature": signed(event) }, 409);
  await call("PATCH", `/v1/services/${sender.id}`, 200, { body: { is_monitored: true } });
  // A Standard Webhooks sender (SPEC §19): its headers, then a repeated webhook-id.
  const sw = await call("POST", "/v1/services", 201, {
    body: { service_name: "sw-sender", signature_scheme: "standard_webhooks" },
  });
  const swHeaders = (id: string) => {
    const when = new Date(world.clock.now());
    return {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(when.getTime() / 1000)),
      "webhook-signature": new Webhook(sw.signing_secret).sign(id, when, event),
    };
  };
  await call("POST", `/v1/ingest/${sw.id}`, 202, { token: null, body: event, headers: swHeaders("msg_1") });
  await call("POST", `/v1/ingest/${sw.id}`, 200, { token: null, body: event, headers: swHeaders("msg_1") });
  await call("GET", `/v1/services/${sender.id}/events?limit=5`, 200);
  await call("GET", `/v1/services/${unknownId("svc")}/events`, 404);
  await call("GET", `/v1/services/${sender.id}/stats?window=7d`, 200);
  await call("GET", `/v1/services/${sender.id}/stats?window=1y`, 400, { allowed: false });
  await call("GET", `/v1/services/${unknownId("svc")}/stats`, 404);

  // Finding events: filters (search itself is off in this world).
  await call("GET", `/v1/events?service_id=${sender.id}&type=invoice.paid&limit=1`, 200);
  await call("GET", "/v1/events?received_after=yesterday", 400, { allowed: false });
  await call("GET", "/v1/events?q=invoice", 400);

  // Feed.
  const feed = await call("GET", `/v1/feed?limit=2&service_id=${sender.id}`, 200);
  await call("GET", `/v1/feed?after=${feed.next_cursor}&wait=0`, 200);
  await call("GET", "/v1/feed?start=latest", 200);
  await call("GET", "/v1/feed?limit=abc", 400, { allowed: false });
  await call("GET", "/v1/feed?after=bm9wZQ", 400);
  await call("GET", "/v1/feed/stream?start=latest", 200, { headersOnly: true });
  await call("GET", "/v1/feed/stream?after=bm9wZQ", 400);
  await call("GET", `/v1/events/${first.id}`, 200);
  await call("GET", `/v1/events/${unknownId("evt")}`, 404);

  // Incidents: the lists; an unknown id for the rest (this world has no alert events).
  await call("GET", "/v1/incidents", 200);
  await call("GET", "/v1/incidents/stream", 200, { headersOnly: true });
  const inc = unknownId("inc");
  await call("GET", `/v1/incidents/${inc}`, 404);
  await call("GET", `/v1/incidents/${inc}/events`, 404);
  await call("POST", `/v1/incidents/${inc}/acknowledge`, 404);
  await call("POST", `/v1/incidents/${inc}/resolve`, 404);

  // Audit log.
  await call("GET", "/v1/audit_events?limit=5", 200);
  await call("GET", `/v1/audit_events?target_id=${service.id}&action=service.update`, 200);
  await call("GET", "/v1/audit_events?target_id=bogus", 400, { allowed: false });
  await call("GET", "/v1/audit_events", 403, { token: member.token });

  // Setup: a code issued by the operator, then the same code again.
  const { code } = await world.app.domain.onboarding.issueSetupCode({ expiresInSeconds: 3600 });
  await call("POST", "/v1/setup", 201, { token: null, body: { setup_code: code, tenant_name: "Globex" } });
  await call("POST", "/v1/setup", 401, { token: null, body: { setup_code: code, tenant_name: "Globex" } });
  await call("POST", "/v1/setup", 400, { token: null, body: { tenant_name: "Globex" }, allowed: false });

  // Services deleted last: the calls above used them.
  await call("DELETE", `/v1/services/${service.id}`, 204);
  await call("DELETE", `/v1/services/${service.id}`, 404);

  // /metrics, outside /v1.
  await call("GET", "/metrics", 200, { token: null });

  expect(mismatches).toEqual([]);
  // Every documented operation was called; each with a success, but the incident operations on
  // one incident (called with an unknown id only).
  const doc = (await (await world.app.fetch(new Request("http://intake.test/openapi.json"))).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const succeeded = [...seen].filter((s) => / 2\d\d$/.test(s)).map((s) => s.replace(/ \d+$/, ""));
  const called = [...seen].map((s) => s.replace(/ \d+$/, ""));
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of Object.keys(ops)) {
      const template = `${method.toUpperCase()} ${path}`;
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[a-z]+")}$`);
      const onOneIncident = path.startsWith("/v1/incidents/{id}");
      expect(
        (onOneIncident ? called : succeeded).some((s) => pattern.test(s)),
        `${template} called${onOneIncident ? "" : " with a success"}`,
      ).toBe(true);
    }
  }
});

test("429 rate_limited, with Retry-After and the RateLimit fields, agrees with /openapi.json", async () => {
  const limited = await createWorld({ env: { INTAKE_RATE_LIMIT_API: "1/60s" } });
  try {
    const res = await limited.app.fetch(new Request("http://intake.test/openapi.json"));
    const strict = createContractChecker(await res.json());
    const problems: string[] = [];
    for (const expected of [200, 429]) {
      const headers = new Headers({ authorization: `Bearer ${limited.ownerToken}` });
      const answer = await limited.app.fetch(new Request("http://intake.test/v1/services", { headers }));
      const text = await answer.text();
      expect(answer.status).toBe(expected);
      const verdict = strict.check({
        method: "GET",
        url: "/v1/services",
        requestHeaders: headers,
        requestBody: null,
        status: answer.status,
        responseHeaders: answer.headers,
        responseText: text,
      });
      problems.push(...verdict.request, ...verdict.response);
    }
    expect(problems).toEqual([]);
  } finally {
    await limited.close();
  }
});
