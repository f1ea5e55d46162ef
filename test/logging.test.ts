/**
 * Secrets, tokens, setup codes, peppers and payloads never appear in logs (README.md): a whole
 * session of calls — successes, failures with bad credentials, ingests good and bad, setup codes
 * redeemed and refused, and internal errors —
 * is run against a world whose pepper and secrets key are known, with the access log on and the
 * log level at debug (every line the code can write), and its captured log is searched for
 * every one of them;
 * so are the session's audit events (stored and served), for those and every token digest.
 */
import { afterEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { generateToken } from "../src/domain/credentials.ts";
import { createWorld, type World } from "./support/harness.ts";
import { sign } from "./support/signing.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

const PEPPER = `pepper-${randomBytes(24).toString("hex")}`;
const KEY = randomBytes(32);

/** Every place a secret could hide in a log line: whole, its random body, or encoded. */
function needles(secrets: string[]): string[] {
  const out: string[] = [];
  for (const s of secrets) {
    out.push(s);
    const body = s.replace(/^(service_live_|whsec_)/, "");
    if (body !== s) out.push(body.slice(0, 20), body.slice(-20));
    out.push(Buffer.from(s).toString("base64"), Buffer.from(s).toString("hex"));
  }
  return out;
}

function leaks(logs: string[], secrets: string[]): string[] {
  const found: string[] = [];
  const text = logs.join("\n");
  for (const needle of needles(secrets)) if (text.includes(needle)) found.push(needle);
  for (const m of text.matchAll(/service_live_[0-9A-Za-z]{43}|whsec_[0-9A-Za-z]{43}/g)) found.push(m[0]);
  return found;
}

test("the leak detector finds a planted token, secret, pepper and key (so the next test can fail)", () => {
  const token = generateToken();
  for (const planted of [token, `whsec_${"a".repeat(43)}`, PEPPER, KEY.toString("base64")]) {
    expect(leaks([`{"msg":"x","v":${JSON.stringify(`..${planted}..`)}}`], [planted]).length).toBeGreaterThan(0);
  }
  expect(leaks([`{"msg":"x","v":"${token.slice(13)}"}`], [token]).length).toBeGreaterThan(0);
});

test("no token, signing secret, setup code, pepper, secrets key or payload appears in the log of a whole session", async () => {
  world = await createWorld({
    env: {
      INTAKE_TOKEN_PEPPER: PEPPER,
      INTAKE_SECRETS_KEY: KEY.toString("base64"),
      INTAKE_ACCESS_LOG: "true",
      INTAKE_LOG_LEVEL: "debug",
    },
  });
  const secrets: string[] = [world.ownerToken, PEPPER, KEY.toString("base64"), KEY.toString("hex")];
  const req = world.request;

  // Tokens: mint (every kind), use, list, read, revoke.
  const admin = await world.mint({ name: "admin", scope: "read_write", role: "admin" });
  const reader = await world.mint({ name: "reader", expires_at: "2026-11-22T11:00:00Z" });
  secrets.push(admin.token, reader.token);
  await req("GET", "/v1/api_tokens?include_revoked=true", { token: admin.token });
  await req("GET", `/v1/api_tokens/${reader.id}`, { token: reader.token });

  // Services: create, rotate twice, pause, delete.
  const svc = await world.createService("billing");
  secrets.push(svc.secret);
  let current = svc.secret;
  for (let i = 0; i < 2; i++) {
    const rotated = await req("POST", `/v1/services/${svc.id}/secret_rotations`);
    current = rotated.body.signing_secret;
    secrets.push(current);
  }
  // Ingest: accepted, duplicate, each kind of 401, a 400, over REST and Connect; the payloads
  // (and the signature headers, which are derived from them) must not reach the log.
  const marker = `payload-${randomBytes(12).toString("hex")}`;
  const body = JSON.stringify({ secret_note: marker });
  const now = world.clock.now();
  const signature = sign(current, body, now);
  secrets.push(marker, signature.slice(signature.indexOf("v1=") + 3));
  const ingest = (id: string, sig: string, payload = body, key?: string) =>
    req("POST", `/v1/ingest/${id}`, {
      token: null,
      body: payload,
      headers: { "x-service-signature": sig, ...(key && { "idempotency-key": key }) },
    });
  expect((await ingest(svc.id, signature, body, "k")).status).toBe(202);
  expect((await ingest(svc.id, signature, body, "k")).status).toBe(200);
  await ingest(`svc_${"0".repeat(32)}`, signature);
  await ingest(svc.id, `garbage ${marker}`);
  await ingest(svc.id, sign(current, body, now - 3_600_000));
  await ingest(svc.id, sign(current, `${body} `, now));
  await ingest(svc.id, sign(current, `[${marker}]`, now), `[${marker}]`);
  await req("POST", "/intake.v1.IngestService/Ingest", {
    token: null,
    body: { serviceId: svc.id, signature, payload: Buffer.from(body).toString("base64") },
  });
  await req("PATCH", `/v1/services/${svc.id}`, { body: { is_monitored: false } });
  const doomed = await world.createService("doomed");
  secrets.push(doomed.secret);
  await req("DELETE", `/v1/services/${doomed.id}`);

  // Failures: bad credentials of every kind, in the header and where a body is echoed.
  const typo = `${world.ownerToken.slice(0, -1)}${world.ownerToken.endsWith("A") ? "B" : "A"}`;
  const unknown = generateToken();
  secrets.push(typo, unknown);
  for (const credential of [typo, unknown, "garbage", world.ownerTokenId, admin.token.toLowerCase()]) {
    await req("GET", "/v1/tenant", { token: credential });
    await req("POST", "/v1/api_tokens", { token: credential, body: { name: "x" } });
  }
  await req("POST", "/v1/api_tokens", { token: reader.token, body: { name: world.ownerToken } });
  await req("POST", "/v1/api_tokens", { body: { name: world.ownerToken, bogus: svc.secret } });
  await req("POST", "/v1/services", { body: { service_name: svc.secret, x: PEPPER } });
  await req("PATCH", "/v1/tenant", {
    body: `{"name": "${world.ownerToken}"`,
    headers: { "content-type": "application/json" },
  });
  await req("PATCH", "/v1/tenant", { body: { permission_mode: world.ownerToken } });

  // Setup codes: redeemed once (its token is a secret too), then reused, and a made-up one.
  const setup = await world.app.domain.onboarding.issueSetupCode({ expiresInSeconds: 3600 });
  secrets.push(setup.code);
  const redeemed = await req("POST", "/v1/setup", {
    token: null,
    body: { setup_code: setup.code, tenant_name: "Setup Co", permission_mode: "flat" },
  });
  expect(redeemed.status).toBe(201);
  secrets.push(redeemed.body.token);
  await req("POST", "/v1/setup", { token: null, body: { setup_code: setup.code, tenant_name: "Again" } });
  await req("POST", "/v1/setup", { token: null, body: { setup_code: `${setup.code}x`, tenant_name: "Guess" } });

  // Revocation, then use of the revoked and the expired token.
  await req("DELETE", `/v1/api_tokens/${admin.id}`);
  await req("GET", "/v1/tenant", { token: admin.token });
  world.clock.set(Date.parse("2026-11-22T11:00:00Z"));
  await req("GET", "/v1/tenant", { token: reader.token });
  await world.app.domain.tokens.flushLastUsed();

  // The audit log of the same session holds none of them either, nor any digest (docs/api.md).
  const audit = [
    ...(await world.app.store.audit.list(world.tenantId, { limit: 100 })),
    ...(await world.app.store.audit.list(redeemed.body.tenant_id, { limit: 100 })),
  ];
  expect(audit.length).toBeGreaterThan(5);
  const digests: string[] = [];
  // A list shows no digest (docs/store.md, "List pages"): each token's full record has it.
  for (const token of await world.app.store.tokens.list(world.tenantId, { limit: 100, includeRevoked: true })) {
    const record = await world.app.store.tokens.get(world.tenantId, token.id);
    if (record) digests.push(record.digest);
  }
  const auditText = [JSON.stringify(audit), (await req("GET", "/v1/audit_events?limit=100")).text];
  expect(leaks(auditText, [...secrets, ...digests])).toEqual([]);

  // Internal errors: the store goes away mid-session (logged with their cause).
  await world.app.store.close();
  await req("GET", `/v1/services/${svc.id}`);
  await req("POST", "/v1/services", { body: { service_name: "after-close" } });
  await req("POST", "/v1/api_tokens", { body: { name: "after-close" } });
  await req("GET", "/v1/tenant", { token: generateToken() });

  // The session did log, including error entries: the search below ran over real output.
  expect(world.logs.length).toBeGreaterThan(0);
  expect(world.logs.some((l) => JSON.parse(l).level === "error")).toBe(true);
  expect(world.logs.filter((l) => JSON.parse(l).msg === "access").length).toBeGreaterThan(30);
  expect(world.logs.some((l) => JSON.parse(l).reason === "no_matching_signature")).toBe(true);
  expect(leaks(world.logs, secrets)).toEqual([]);
});

test("a statement the database rejects is logged with its cause and without its parameters", async () => {
  world = await createWorld();
  const { store } = world.app;
  const owner = await store.tokens.get(world.tenantId, world.ownerTokenId.replace(/^tok_/, ""));
  if (!owner) throw new Error("no bootstrap token");
  // A real INSERT that the database refuses: the new row reuses the owner token's digest
  // (UNIQUE). drizzle used to put the whole parameter list into the error it raised.
  const insert = store.tokens.insert;
  store.tokens.insert = (record, audit) => insert({ ...record, digest: owner.digest }, audit);
  const marker = `forced-${randomBytes(8).toString("hex")}`;
  const reply = await world.request("POST", "/v1/api_tokens", { body: { name: marker } });
  expect(reply.status).toBe(500);

  const errors = world.logs.filter((l) => JSON.parse(l).level === "error");
  expect(errors.length).toBeGreaterThan(0);
  const text = errors.join("\n");
  // The cause is there to debug with: the unique constraint, by code or by name.
  expect(text).toMatch(/23505|UNIQUE constraint failed/);
  for (const value of [owner.digest, marker, world.tenantId, "params:", "Failed query"]) {
    expect(text).not.toContain(value);
  }
});
