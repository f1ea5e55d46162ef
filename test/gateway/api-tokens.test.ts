import { afterEach, expect, spyOn, test } from "bun:test";
import * as credentials from "../../src/domain/credentials.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(async () => {
  await world?.close();
});

const RECORD_KEYS = [
  "created_at",
  "created_by",
  "expires_at",
  "id",
  "last_used_at",
  "name",
  "prefix",
  "revoked_at",
  "role",
  "scope",
].sort();

test("201 POST /v1/api_tokens returns the record plus token, the only time it is shown", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/api_tokens", {
    body: { name: "  deploy bot  ", scope: "read_write", role: "admin" },
  });
  expect(reply.status).toBe(201);
  expect(Object.keys(reply.body).sort()).toEqual([...RECORD_KEYS, "token"].sort());
  expect(reply.body).toMatchObject({
    name: "deploy bot",
    scope: "read_write",
    role: "admin",
    created_at: "2026-11-22T10:00:00.000Z",
    created_by: world.ownerTokenId,
    expires_at: null,
    last_used_at: null,
    revoked_at: null,
  });
  expect(reply.body.id).toMatch(/^tok_[0-9a-f]{32}$/);
  expect(reply.body.token).toMatch(/^service_live_[0-9A-Za-z]{43}$/);
  expect(reply.body.prefix).toBe(reply.body.token.slice(0, 21));
  // The new token works.
  expect((await world.request("GET", "/v1/tenant", { token: reply.body.token })).status).toBe(200);
});

test("201 defaults: scope read_only, role member", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/api_tokens", { body: { name: "x" } });
  expect(reply.body).toMatchObject({ scope: "read_only", role: "member" });
});

test("200 GET /v1/api_tokens/{id} and the list never include token", async () => {
  world = await createWorld();
  const created = await world.mint({ name: "secretive" });
  const got = await world.request("GET", `/v1/api_tokens/${created.id}`);
  expect(got.status).toBe(200);
  expect(Object.keys(got.body).sort()).toEqual(RECORD_KEYS);
  expect(got.text).not.toContain(created.token);
  const list = await world.request("GET", "/v1/api_tokens?include_revoked=true");
  for (const item of list.body.data) expect(Object.keys(item).sort()).toEqual(RECORD_KEYS);
  expect(list.text).not.toContain(created.token);
  expect(list.text).not.toContain(world.ownerToken);
});

test("expires_at with an offset is returned normalized to UTC with milliseconds", async () => {
  world = await createWorld();
  const reply = await world.request("POST", "/v1/api_tokens", {
    body: { name: "x", expires_at: "2027-01-01T05:30:00+05:30" },
  });
  expect(reply.status).toBe(201);
  expect(reply.body.expires_at).toBe("2027-01-01T00:00:00.000Z");
  const fractional = await world.request("POST", "/v1/api_tokens", {
    body: { name: "y", expires_at: "2026-12-31T19:00:00.25-05:00" },
  });
  expect(fractional.body.expires_at).toBe("2027-01-01T00:00:00.250Z");
  const lower = await world.request("POST", "/v1/api_tokens", {
    body: { name: "z", expires_at: "2027-01-01t00:00:00z" },
  });
  expect(lower.body.expires_at).toBe("2027-01-01T00:00:00.000Z");
  const none = await world.request("POST", "/v1/api_tokens", { body: { name: "n", expires_at: null } });
  expect(none.body.expires_at).toBeNull();
});

test("list is newest first and keyset pages cover every token exactly once", async () => {
  world = await createWorld();
  const minted = [world.ownerTokenId];
  for (let i = 0; i < 24; i++) {
    minted.push((await world.mint({ name: `t${i}` })).id);
    if (i % 5 === 0) world.clock.advance(1);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = cursor ? `limit=7&cursor=${encodeURIComponent(cursor)}` : "limit=7";
    const reply = await world.request("GET", `/v1/api_tokens?${query}`);
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(["data", "next_cursor"]);
    expect(reply.body.data.length).toBeLessThanOrEqual(7);
    seen.push(...reply.body.data.map((t: { id: string }) => t.id));
    cursor = reply.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 10);
  expect(pages).toBe(4);
  expect(seen).toEqual([...minted].reverse());
});

test("a page that ends exactly at the last row has next_cursor null", async () => {
  world = await createWorld();
  for (let i = 0; i < 3; i++) await world.mint({ name: `t${i}` });
  const reply = await world.request("GET", "/v1/api_tokens?limit=4");
  expect(reply.body.data).toHaveLength(4);
  expect(reply.body.next_cursor).toBeNull();
  const first = await world.request("GET", "/v1/api_tokens?limit=2");
  const second = await world.request("GET", `/v1/api_tokens?limit=2&cursor=${first.body.next_cursor}`);
  expect(second.body.data).toHaveLength(2);
  expect(second.body.next_cursor).toBeNull();
});

test("the default page size is 20 and limit=100 is allowed", async () => {
  world = await createWorld();
  for (let i = 0; i < 24; i++) await world.mint({ name: `t${i}` });
  const page = await world.request("GET", "/v1/api_tokens");
  expect(page.body.data).toHaveLength(20);
  expect(page.body.next_cursor).not.toBeNull();
  const all = await world.request("GET", "/v1/api_tokens?limit=100");
  expect(all.body.data).toHaveLength(25);
});

test("include_revoked: revoked tokens are listed only with include_revoked=true", async () => {
  world = await createWorld();
  const kept = await world.mint({ name: "kept" });
  const gone = await world.mint({ name: "gone" });
  await world.request("DELETE", `/v1/api_tokens/${gone.id}`);
  const ids = async (query: string) =>
    (await world.request("GET", `/v1/api_tokens${query}`)).body.data.map((t: { id: string }) => t.id);
  expect(await ids("")).toEqual([kept.id, world.ownerTokenId]);
  expect(await ids("?include_revoked=false")).toEqual([kept.id, world.ownerTokenId]);
  expect(await ids("?include_revoked=true")).toEqual([gone.id, kept.id, world.ownerTokenId]);
});

test("a revoked token stays readable by id (soft delete, kept for audit)", async () => {
  world = await createWorld();
  const gone = await world.mint({ name: "gone" });
  await world.request("DELETE", `/v1/api_tokens/${gone.id}`);
  const reply = await world.request("GET", `/v1/api_tokens/${gone.id}`);
  expect(reply.status).toBe(200);
  expect(reply.body.revoked_at).toBe("2026-11-22T10:00:00.000Z");
});

test("200 DELETE revokes; a repeat is 200 and keeps the first revoked_at", async () => {
  world = await createWorld();
  const target = await world.mint({ name: "target" });
  const first = await world.request("DELETE", `/v1/api_tokens/${target.id}`);
  expect(first.status).toBe(200);
  expect(Object.keys(first.body).sort()).toEqual(RECORD_KEYS);
  expect(first.body.revoked_at).toBe("2026-11-22T10:00:00.000Z");
  world.clock.advance(3_600_000);
  const second = await world.request("DELETE", `/v1/api_tokens/${target.id}`);
  expect(second.status).toBe(200);
  expect(second.body.revoked_at).toBe("2026-11-22T10:00:00.000Z");
  expect(second.body).toEqual(first.body);
});

test("401 for a revoked token on the very next request, though it was cached a moment before", async () => {
  world = await createWorld();
  const target = await world.mint({ name: "target", scope: "read_write", role: "admin" });
  for (let i = 0; i < 3; i++)
    expect((await world.request("GET", "/v1/tenant", { token: target.token })).status).toBe(200);
  expect((await world.request("DELETE", `/v1/api_tokens/${target.id}`)).status).toBe(200);
  const reply = await world.request("GET", "/v1/tenant", { token: target.token });
  expect(reply.status).toBe(401);
  expect(reply.body.error.code).toBe("invalid_credentials");
});

test("a token may revoke itself (when it is not the last owner read_write token)", async () => {
  world = await createWorld();
  const self = await world.mint({ name: "self", scope: "read_write", role: "member" });
  expect((await world.request("DELETE", `/v1/api_tokens/${self.id}`, { token: self.token })).status).toBe(200);
  expect((await world.request("GET", "/v1/tenant", { token: self.token })).status).toBe(401);
});

test("401 from expires_at on, and the record keeps its expires_at", async () => {
  world = await createWorld();
  const expires_at = new Date(world.clock.now() + 10_000).toISOString();
  const short = await world.mint({ name: "short", expires_at });
  world.clock.advance(9_999);
  expect((await world.request("GET", "/v1/tenant", { token: short.token })).status).toBe(200);
  world.clock.advance(1);
  expect((await world.request("GET", "/v1/tenant", { token: short.token })).status).toBe(401);
  expect((await world.request("GET", `/v1/api_tokens/${short.id}`)).body.expires_at).toBe(expires_at);
});

test("created_by is the parent token's id; the bootstrap token has null", async () => {
  world = await createWorld();
  const parent = await world.mint({ name: "parent", scope: "read_write", role: "admin" });
  const child = await world.mint({ name: "child" }, parent.token);
  expect((await world.request("GET", `/v1/api_tokens/${child.id}`)).body.created_by).toBe(parent.id);
  expect((await world.request("GET", `/v1/api_tokens/${world.ownerTokenId}`)).body.created_by).toBeNull();
});

test("last_used_at is set after use and a flush, at the time of use, and moves at most once a minute", async () => {
  world = await createWorld();
  const user = await world.mint({ name: "user" });
  const path = `/v1/api_tokens/${user.id}`;
  expect((await world.request("GET", path)).body.last_used_at).toBeNull();
  await world.request("GET", "/v1/tenant", { token: user.token });
  await world.app.domain.tokens.flushLastUsed();
  expect((await world.request("GET", path)).body.last_used_at).toBe("2026-11-22T10:00:00.000Z");
  world.clock.advance(59_000);
  await world.request("GET", "/v1/tenant", { token: user.token });
  await world.app.domain.tokens.flushLastUsed();
  expect((await world.request("GET", path)).body.last_used_at).toBe("2026-11-22T10:00:00.000Z");
  world.clock.advance(1_000);
  await world.request("GET", "/v1/tenant", { token: user.token });
  await world.app.domain.tokens.flushLastUsed();
  expect((await world.request("GET", path)).body.last_used_at).toBe("2026-11-22T10:01:00.000Z");
});

/** A well-formed token whose public prefix is `prefix` (the first 8 body chars). */
function tokenWithPrefix(prefix: string): string {
  const random = prefix.slice(credentials.TOKEN_PREFIX.length) + "x".repeat(29);
  return credentials.TOKEN_PREFIX + random + credentials.tokenChecksum(random);
}

test("201 with a fresh prefix when the generated one is taken by a revoked token or another tenant's", async () => {
  world = await createWorld();
  const revoked = await world.request("POST", "/v1/api_tokens", { body: { name: "old" } });
  expect((await world.request("DELETE", `/v1/api_tokens/${revoked.body.id}`)).status).toBe(200);
  const other = await world.otherTenant();
  const theirs = await world.request("POST", "/v1/api_tokens", { token: other.token, body: { name: "theirs" } });
  // The random source is made to collide twice, then left alone: the prefix "stays reserved".
  const generate = spyOn(credentials, "generateToken")
    .mockImplementationOnce(() => tokenWithPrefix(revoked.body.prefix))
    .mockImplementationOnce(() => tokenWithPrefix(theirs.body.prefix));
  try {
    const reply = await world.request("POST", "/v1/api_tokens", { body: { name: "new" } });
    expect(reply.status).toBe(201);
    expect(generate).toHaveBeenCalledTimes(3);
    expect([revoked.body.prefix, theirs.body.prefix]).not.toContain(reply.body.prefix);
    expect(reply.body.token.startsWith(reply.body.prefix)).toBe(true);
    expect((await world.request("GET", "/v1/tenant", { token: reply.body.token })).status).toBe(200);
  } finally {
    generate.mockRestore();
  }
});

test("the database row of a token holds only its HMAC digest, never the credential", async () => {
  world = await createWorld();
  const { id, token } = await world.mint({ name: "stored" });
  const record = await world.app.store.tokens.get(world.tenantId, id.slice(4));
  expect(record?.digest).toMatch(/^[0-9a-f]{64}$/);
  const row = JSON.stringify(record);
  expect(row).not.toContain(token);
  expect(row).not.toContain(token.slice(21));
});
