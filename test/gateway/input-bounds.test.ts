/**
 * Input at the edges of what the contract can represent (docs/api.md): timestamps up to
 * 9999-12-31T23:59:59.999Z, names that are well-formed Unicode, bodies without `__proto__`,
 * and cursors that belong to one list of one tenant.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { OPERATOR } from "../../src/domain/audit.ts";
import { createWorld, type Reply, type World } from "../support/harness.ts";
import { sign } from "../support/signing.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function open(): Promise<World> {
  world = await createWorld();
  return world;
}

function expect400(reply: Reply, field: string) {
  expect([reply.status, reply.body?.error?.code]).toEqual([400, "invalid_request"]);
  expect(reply.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  expect(reply.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
}

describe("expires_at range", () => {
  test("400 invalid_request for an expires_at past 9999-12-31T23:59:59.999Z (an offset that rolls into year 10000)", async () => {
    const w = await open();
    const reply = await w.request("POST", "/v1/api_tokens", {
      body: { name: "far", expires_at: "9999-12-31T23:59:59.999-23:59" },
    });
    expect400(reply, "expires_at");
    // Nothing was minted, and the list still reads.
    const list = await w.request("GET", "/v1/api_tokens?include_revoked=true");
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
  });

  test("201 for the last representable instant, returned as RFC 3339 with milliseconds", async () => {
    const w = await open();
    const reply = await w.request("POST", "/v1/api_tokens", {
      body: { name: "far", expires_at: "9999-12-31T23:59:59.999Z" },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.expires_at).toBe("9999-12-31T23:59:59.999Z");
    const got = await w.request("GET", `/v1/api_tokens/${reply.body.id}`);
    expect(got.body.expires_at).toBe("9999-12-31T23:59:59.999Z");
  });

  test("500 internal_error with the fixed message for a stored time no encoder can write, on GET and list", async () => {
    // A row written before the range check existed: the read must fail in the one error shape.
    const w = await open();
    const id = w.app.domain.newId();
    await w.app.store.tokens.insert(
      {
        id,
        tenantId: w.tenantId,
        name: "legacy",
        scope: "read_only",
        role: "member",
        prefix: "service_live_legacy00",
        digest: "0".repeat(64),
        createdAt: w.clock.now(),
        createdBy: null,
        expiresAt: 1e18,
        lastUsedAt: null,
        revokedAt: null,
      },
      w.app.domain.audit.record(w.tenantId, OPERATOR, "api_token.create", { type: "api_token", id }),
    );
    for (const path of [`/v1/api_tokens/tok_${id}`, "/v1/api_tokens"]) {
      const reply = await w.request("GET", path);
      expect([reply.status, reply.body?.error?.code]).toEqual([500, "internal_error"]);
      expect(reply.body.error.message).toBe("Something went wrong on our side.");
      expect(reply.text).not.toContain("Invalid");
    }
  });
});

describe("names are well-formed Unicode", () => {
  const lone = ["ls\ud800", "ls\udfff", "\udc00x", "x\ud83d"];

  test("400 invalid_request for a lone surrogate in service_name; nothing is stored", async () => {
    const w = await open();
    for (const name of lone)
      expect400(await w.request("POST", "/v1/services", { body: { service_name: name } }), "service_name");
    expect((await w.request("GET", "/v1/services")).body.data).toEqual([]);
    // The names a lone surrogate would have collided with are still free.
    expect((await w.request("POST", "/v1/services", { body: { service_name: "ls\ufffd" } })).status).toBe(201);
  });

  test("400 invalid_request for a lone surrogate in a token name and in the tenant name", async () => {
    const w = await open();
    for (const name of lone) {
      expect400(await w.request("POST", "/v1/api_tokens", { body: { name } }), "name");
      expect400(await w.request("PATCH", "/v1/tenant", { body: { name } }), "name");
    }
    expect((await w.request("GET", "/v1/tenant")).body.name).toBe("Acme");
  });

  test("400 invalid_request for a lone surrogate in POST /v1/setup's tenant_name", async () => {
    const w = await open();
    const reply = await w.request("POST", "/v1/setup", {
      token: null,
      body: { setup_code: `setup_${"A".repeat(43)}`, tenant_name: "ls\ud800" },
    });
    expect400(reply, "tenant_name");
  });

  test("201 for a name with a surrogate pair (an emoji), echoed and stored alike", async () => {
    const w = await open();
    const created = await w.request("POST", "/v1/services", { body: { service_name: "ship \ud83d\ude80" } });
    expect(created.status).toBe(201);
    expect(created.body.service_name).toBe("ship 🚀");
    expect((await w.request("GET", `/v1/services/${created.body.id}`)).body.service_name).toBe("ship 🚀");
  });
});

describe("__proto__ in a body", () => {
  const routes: Array<[string, string, (w: World) => Promise<string>, string]> = [
    ["POST", "/v1/api_tokens", async () => "/v1/api_tokens", '{"name": "x", "__proto__": {"scope": "read_write"}}'],
    ["POST", "/v1/services", async () => "/v1/services", '{"service_name": "x", "__proto__": {}}'],
    [
      "PATCH",
      "/v1/services/{id}",
      async (w) => `/v1/services/${(await w.createService("kept")).id}`,
      '{"__proto__": null}',
    ],
    ["PATCH", "/v1/tenant", async () => "/v1/tenant", '{"name": "y", "__proto__": {"name": "z"}}'],
    [
      "POST",
      "/v1/setup",
      async () => "/v1/setup",
      `{"setup_code": "setup_${"A".repeat(43)}", "tenant_name": "t", "__proto__": {}}`,
    ],
  ];
  for (const [method, label, path, body] of routes) {
    test(`400 invalid_request naming __proto__ on ${method} ${label}`, async () => {
      const w = await open();
      const reply = await w.request(method, await path(w), { body, headers: { "content-type": "application/json" } });
      expect400(reply, "__proto__");
    });
  }

  test("nothing is created or changed by a body with __proto__", async () => {
    const w = await open();
    await w.request("POST", "/v1/services", {
      body: '{"service_name": "x", "__proto__": {}}',
      headers: { "content-type": "application/json" },
    });
    await w.request("PATCH", "/v1/tenant", {
      body: '{"name": "y", "__proto__": {}}',
      headers: { "content-type": "application/json" },
    });
    expect((await w.request("GET", "/v1/services")).body.data).toEqual([]);
    expect((await w.request("GET", "/v1/tenant")).body.name).toBe("Acme");
  });
});

describe("cursors belong to one list of one tenant", () => {
  test("400 invalid_request for a /v1/services cursor on /v1/api_tokens, and the reverse", async () => {
    const w = await open();
    await w.createService("a");
    await w.createService("b");
    await w.mint({ name: "second" });
    const services = await w.request("GET", "/v1/services?limit=1");
    const tokens = await w.request("GET", "/v1/api_tokens?limit=1");
    expect(services.body.next_cursor).toEqual(expect.any(String));
    expect(tokens.body.next_cursor).toEqual(expect.any(String));

    expect400(await w.request("GET", `/v1/api_tokens?cursor=${services.body.next_cursor}`), "cursor");
    expect400(await w.request("GET", `/v1/services?cursor=${tokens.body.next_cursor}`), "cursor");
    // Each still works where it came from.
    expect((await w.request("GET", `/v1/services?cursor=${services.body.next_cursor}`)).body.data).toHaveLength(1);
    expect((await w.request("GET", `/v1/api_tokens?cursor=${tokens.body.next_cursor}`)).body.data).toHaveLength(1);
  });

  test("400 invalid_request for another tenant's cursor of the same list", async () => {
    const w = await open();
    const other = await w.otherTenant();
    await w.createService("a", other.token);
    await w.createService("b", other.token);
    const theirs = await w.request("GET", "/v1/services?limit=1", { token: other.token });
    expect(theirs.body.next_cursor).toEqual(expect.any(String));
    expect400(await w.request("GET", `/v1/services?cursor=${theirs.body.next_cursor}`), "cursor");
  });

  test("400 invalid_request for one service's events cursor on another service's events", async () => {
    const w = await open();
    const a = await w.createService("a");
    const b = await w.createService("b");
    // The cursor a's events list hands out after its first page of one.
    for (const n of [1, 2]) {
      const body = JSON.stringify({ n });
      const sent = await w.request("POST", `/v1/ingest/${a.id}`, {
        token: null,
        body,
        headers: { "x-service-signature": sign(a.secret, body, w.clock.now()) },
      });
      expect(sent.status).toBe(202);
    }
    const first = await w.request("GET", `/v1/services/${a.id}/events?limit=1`);
    const cursor = first.body.next_cursor as string;
    expect((await w.request("GET", `/v1/services/${a.id}/events?cursor=${cursor}`)).status).toBe(200);
    expect400(await w.request("GET", `/v1/services/${b.id}/events?cursor=${cursor}`), "cursor");
  });
});
