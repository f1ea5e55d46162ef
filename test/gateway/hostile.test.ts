/**
 * Hostile input never gives a 5xx: bodies, path ids and query strings an attacker or a broken
 * client might send. Each case pins the exact 4xx it must get.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorld, type World } from "../support/harness.ts";

// One world for the whole file: every request here is refused, so nothing is changed by them.
let world: World;
let serviceId: string;
beforeAll(async () => {
  world = await createWorld();
  serviceId = (await world.createService("kept")).id;
});
afterAll(async () => {
  await world.close();
});

const enc = new TextEncoder();

function hostileBodies(): Array<[string, string | Uint8Array]> {
  return [
    ["not JSON", "hello"],
    ["truncated JSON", '{"name": "x"'],
    ["JSON with a trailing comma", '{"name": "x",}'],
    ["a JSON array", '[{"name": "x"}]'],
    ["JSON null", "null"],
    ["a JSON string", '"x"'],
    ["a JSON number", "42"],
    ["JSON true", "true"],
    ["50k unclosed brackets (within 64 KiB)", "[".repeat(50_000)],
    ["50k unclosed brackets in a field", `{"name":${"[".repeat(50_000)}`],
    ["arrays nested 30k levels (within 64 KiB)", `${"[".repeat(30_000)}${"]".repeat(30_000)}`],
    ["objects nested 5k levels in a field", `{"name":${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}}`],
    ["arrays nested 30k levels in a known field", `{"name":${"[".repeat(30_000)}${"]".repeat(30_000)}}`],
    ["arrays nested 30k levels in an unknown field", `{"zz":${"[".repeat(30_000)}${"]".repeat(30_000)}}`],
    [
      "arrays nested 10k levels in an immutable field",
      `{"service_name":${"[".repeat(10_000)}${"]".repeat(10_000)},"permission_mode":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
    ],
    ["a 60 KiB string", JSON.stringify({ name: "x".repeat(60_000), service_name: "y".repeat(10) })],
    ["a NUL byte in a name", JSON.stringify({ name: "a\u0000b", service_name: "a\u0000b" })],
    ["only a NUL", JSON.stringify({ name: "\u0000", service_name: "\u0000" })],
    ["unknown fields", JSON.stringify({ name: "x", service_name: "x", admin: true, __proto__x: 1 })],
    ["a __proto__ key", '{"__proto__": {"scope": "read_write"}, "name": "x", "service_name": "x"}'],
    ["a constructor key", '{"constructor": {"prototype": {}}, "name": "x", "service_name": "x"}'],
    ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])],
    ["a lone surrogate escape", '{"name": "\\ud800", "service_name": "\\udfff"}'],
    ["a UTF-8 BOM", new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('{"name":"x","service_name":"x"}')])],
    ["wrong types", JSON.stringify({ name: 1, service_name: true, is_monitored: "yes", scope: [], role: {} })],
    [
      "null everywhere",
      JSON.stringify({ name: null, service_name: null, is_monitored: null, scope: null, role: null }),
    ],
    ["a huge number", '{"name": 1e999999, "is_monitored": 1e999999}'],
    ["duplicate keys", '{"name": "x", "name": 5, "is_monitored": true, "is_monitored": "no"}'],
    ["many keys", JSON.stringify(Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, i])))],
    ["whitespace only", "   \n\t  "],
  ];
}

// The pattern names the test; the path is resolved when the test runs, once beforeAll has
// created the service (a PATCH to a missing one would be a 404 before the body is looked at).
const BODY_ROUTES: Array<[string, string, () => string]> = [
  ["POST", "/v1/api_tokens", () => "/v1/api_tokens"],
  ["POST", "/v1/services", () => "/v1/services"],
  ["PATCH", "/v1/services/{id}", () => `/v1/services/${serviceId}`],
  ["PATCH", "/v1/tenant", () => "/v1/tenant"],
];

describe("hostile bodies", () => {
  test("the PATCH target exists (the hostile bodies reach the body checks, not a 404)", async () => {
    expect((await world.request("GET", `/v1/services/${serviceId}`)).status).toBe(200);
  });

  for (const [method, pattern, path] of BODY_ROUTES) {
    for (const [label, body] of hostileBodies()) {
      test(`400 invalid_request for ${label} on ${method} ${pattern}`, async () => {
        const reply = await world.request(method, path(), { body, headers: { "content-type": "application/json" } });
        expect(reply.status).toBe(400);
        expect(reply.body.error.code).toBe("invalid_request");
        expect(reply.headers.get("content-type")).toBe("application/json; charset=utf-8");
      });
    }
  }

  test("nothing was created or changed by the hostile bodies", async () => {
    const services = await world.request("GET", "/v1/services");
    expect(services.body.data.map((s: { service_name: string }) => s.service_name)).toEqual(["kept"]);
    expect(services.body.data[0].is_monitored).toBe(true);
    const tokens = await world.request("GET", "/v1/api_tokens");
    expect(tokens.body.data).toHaveLength(1);
    expect((await world.request("GET", "/v1/tenant")).body.name).toBe("Acme");
  });

  test("no 5xx was logged as an internal error", () => {
    expect(world.logs.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });
});

describe("malformed ids in every path", () => {
  const ids = [
    "x",
    "tok_",
    "svc_",
    `tok_${"g".repeat(32)}`,
    `svc_${"A".repeat(32)}`,
    `svc_${"0".repeat(31)}`,
    `svc_${"0".repeat(33)}`,
    "svc_0193a1b2-c3d4-e5f6-0718-293a4b5c6d7e",
    "0193a1b2c3d4e5f60718293a4b5c6d7e",
    "%00",
    "%E0%A4%A",
    "%FF",
    "%",
    "%25",
    "svc_%2e%2e",
    "null",
    "undefined",
    "__proto__",
    "constructor",
    "'%20OR%201=1--",
    "%F0%9F%98%80",
    "a".repeat(5_000),
  ];
  const routes: Array<[string, (id: string) => string]> = [
    ["GET", (id) => `/v1/api_tokens/${id}`],
    ["DELETE", (id) => `/v1/api_tokens/${id}`],
    ["GET", (id) => `/v1/services/${id}`],
    ["PATCH", (id) => `/v1/services/${id}`],
    ["DELETE", (id) => `/v1/services/${id}`],
    ["POST", (id) => `/v1/services/${id}/secret_rotations`],
  ];
  for (const [method, path] of routes) {
    test(`404 not_found for every malformed id on ${method} ${path("{id}")}`, async () => {
      const outcomes: Record<string, number> = {};
      for (const id of ids) {
        const body = method === "PATCH" ? { is_monitored: false } : undefined;
        const reply = await world.request(method, path(id), { body });
        outcomes[id.slice(0, 40)] = reply.status;
        if (reply.status === 404) expect(reply.body.error.code).toBe("not_found");
      }
      expect(Object.entries(outcomes).filter(([, status]) => status !== 404)).toEqual([]);
    });
  }

  test("404 not_found for every malformed id on GET /v1/services/{id}/events", async () => {
    for (const id of ids) {
      const reply = await world.request("GET", `/v1/services/${id}/events`);
      expect([id.slice(0, 40), reply.status]).toEqual([id.slice(0, 40), 404]);
    }
  });
});

describe("hostile query strings", () => {
  const lists = ["/v1/api_tokens", "/v1/services"];
  const bad = [
    "limit=0",
    "limit=101",
    "limit=-1",
    "limit=abc",
    "limit=1.5",
    "limit=",
    "limit=99999999999999999999",
    "limit=%00",
    "cursor=",
    "cursor=garbage",
    "cursor=%00",
    "cursor=%FF%FE",
    `cursor=${"A".repeat(5_000)}`,
    // A bare row id in base64url: the cursor encoding before cursors named their list.
    "cursor=MDE5M2ExYjJjM2Q0ZTVmNjA3MTgyOTNhNGI1YzZkN2U",
  ];
  for (const path of lists) {
    for (const query of bad) {
      test(`400 invalid_request for ${query.slice(0, 40)} on GET ${path}`, async () => {
        const reply = await world.request("GET", `${path}?${query}`);
        expect(reply.status).toBe(400);
        expect(reply.body.error.code).toBe("invalid_request");
        expect(reply.body.error.details.length).toBeGreaterThan(0);
      });
    }
  }

  for (const value of ["maybe", "1", "0", "yes", "TRUE", ""]) {
    test(`400 invalid_request for include_revoked=${value}`, async () => {
      const reply = await world.request("GET", `/v1/api_tokens?include_revoked=${value}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe("invalid_request");
    });
  }

  test("400 invalid_request details name the limit and cursor parameters", async () => {
    for (const [query, field] of [
      ["limit=abc", "limit"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["cursor=", "cursor"],
      ["cursor=garbage", "cursor"],
    ]) {
      const reply = await world.request("GET", `/v1/services?${query}`);
      expect([query, reply.body.error.details.map((d: { field: string }) => d.field)]).toEqual([query, [field]]);
    }
  });

  test("unknown query parameters are ignored (cache busters)", async () => {
    expect((await world.request("GET", "/v1/services?_=123&utm_source=x")).status).toBe(200);
  });
});
