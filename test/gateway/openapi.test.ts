/**
 * docs/api.md: /openapi.json is a valid OpenAPI 3.1 document of the whole /v1 surface, generated
 * from the routes the app serves; /docs is served with its assets from Intake itself; both
 * need no token and both go away with INTAKE_API_DOCS=false.
 */
import { afterEach, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { operationKey } from "../../src/gateway/operation.ts";
import { ERROR_TABLE } from "../../src/rpc/errors.ts";
import { POLICY } from "../../src/rpc/policy.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Operation {
  summary?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }>;
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; scheme?: string }> };
}

async function openapi(w: World): Promise<Document> {
  const res = await w.request("GET", "/openapi.json", { token: null });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  return res.body as Document;
}

/** "GET /v1/services/{id}" for every /v1 route the Elysia app serves. */
function servedOperations(w: World): string[] {
  return w.app.gateway.elysia.routes
    .filter((r) => r.path.startsWith("/v1/"))
    .map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:([^/]+)/g, "{$1}")}`)
    .sort();
}

/** The /v1 surface of the document (`/metrics` sits outside it, documented on its own). */
function v1Paths(doc: Document): Array<[string, Record<string, Operation>]> {
  return Object.entries(doc.paths).filter(([path]) => path.startsWith("/v1/"));
}

function documentedOperations(doc: Document): string[] {
  return v1Paths(doc)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

test("200 /openapi.json without a token is a valid OpenAPI 3.1 document (swagger-parser)", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  expect(doc.openapi).toMatch(/^3\.1\./);
  expect(doc.info).toMatchObject({ title: "Intake API", version: world.app.config.version });
  // The parser dereferences in place: hand it a copy.
  const validated = await SwaggerParser.validate(JSON.parse(JSON.stringify(doc)));
  expect("openapi" in validated ? validated.openapi : "swagger 2").toBe(doc.openapi);
});

test("/openapi.json lists exactly the /v1 paths and methods the app routes, and nothing else", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  const served = servedOperations(world);
  expect(served.length).toBeGreaterThanOrEqual(15);
  expect(documentedOperations(doc)).toEqual(served);
});

test("every operation has a summary, a tag, a 2xx and the one error shape; bodies are JSON schemas", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  for (const [path, ops] of v1Paths(doc)) {
    for (const [method, op] of Object.entries(ops)) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.summary, where).toBeTruthy();
      expect(op.tags?.length, where).toBeGreaterThan(0);
      const statuses = Object.keys(op.responses);
      expect(
        statuses.some((s) => s.startsWith("2")),
        where,
      ).toBe(true);
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const schema = op.responses[status]?.content?.["application/json"]?.schema as { allOf?: unknown[] };
        expect(schema?.allOf?.[0], `${where} ${status}`).toEqual({ $ref: "#/components/schemas/Error" });
      }
      // The bodiless POSTs: a secret rotation, acknowledging and resolving an incident.
      if (["post", "patch"].includes(method) && !/\/(secret_rotations|acknowledge|resolve)$/.test(path)) {
        expect(op.requestBody?.content["application/json"]?.schema, `${where} body`).toBeDefined();
      }
    }
  }
});

test("bearer routes name the bearer scheme; health, ingest and setup need none", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
  for (const [path, ops] of v1Paths(doc)) {
    for (const [method, op] of Object.entries(ops)) {
      const open = path === "/v1/health" || path === "/v1/setup" || path.startsWith("/v1/ingest/");
      expect(op.security, `${method} ${path}`).toEqual(open ? [] : [{ bearer: [] }]);
      if (!open) expect(Object.keys(op.responses), `${method} ${path}`).toContain("401");
    }
  }
});

test("the documented error statuses match what routes answer: 409s, 413/415 on bodies, 204 on DELETE service", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {});
  expect(statuses("/v1/services", "post")).toEqual(expect.arrayContaining(["201", "409", "413", "415", "400"]));
  expect(statuses("/v1/api_tokens/{id}", "delete")).toEqual(expect.arrayContaining(["200", "403", "409"]));
  expect(statuses("/v1/services/{id}", "delete")).toEqual(expect.arrayContaining(["204", "403"]));
  expect(statuses("/v1/tenant", "patch")).toEqual(expect.arrayContaining(["200", "400", "403", "413", "415"]));
});

test("200 /docs is HTML that names no other origin; every script it loads is served here", async () => {
  world = await createWorld();
  const res = await world.request("GET", "/docs", { token: null });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/html");
  expect(res.text).not.toMatch(/https?:\/\//);
  expect(res.text).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}\//i);
  const scripts = [...res.text.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1] as string);
  expect(scripts.length).toBeGreaterThan(0);
  for (const src of scripts) {
    expect(src.startsWith("/")).toBe(true);
    const asset = await world.app.fetch(new Request(`http://intake.test${src}`));
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toContain("javascript");
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
  }
});

test("404 for /openapi.json, /docs and the bundle when INTAKE_API_DOCS=false", async () => {
  world = await createWorld({ env: { INTAKE_API_DOCS: "false" } });
  for (const path of ["/openapi.json", "/docs", "/docs/assets/scalar-api-reference.js"]) {
    const res = await world.request("GET", path, { token: null });
    expect(res.status, path).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  }
  // The API itself is unaffected.
  expect((await world.request("GET", "/v1/tenant")).status).toBe(200);
});

test("limited operations (bearer, ingest) document 429 with Retry-After and the RateLimit fields; health and setup none", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  type Headed = { headers?: Record<string, unknown> };
  for (const [path, ops] of v1Paths(doc)) {
    for (const [method, op] of Object.entries(ops)) {
      const responses = op.responses as Record<string, Headed>;
      if (path === "/v1/health" || path === "/v1/setup") {
        expect(responses["429"]).toBeUndefined();
        for (const response of Object.values(responses)) expect(response.headers?.RateLimit).toBeUndefined();
        continue;
      }
      expect(Object.keys(responses)).toContain("429");
      expect(Object.keys(responses["429"]?.headers ?? {})).toContain("Retry-After");
      for (const [status, response] of Object.entries(responses)) {
        expect({ at: `${method} ${path} ${status}`, keys: Object.keys(response.headers ?? {}) }).toEqual({
          at: `${method} ${path} ${status}`,
          keys: expect.arrayContaining(["RateLimit-Policy", "RateLimit"]),
        });
      }
    }
  }
  const patch = resolve(doc, doc.paths["/v1/services/{id}"]?.patch?.requestBody?.content["application/json"]?.schema);
  expect(JSON.stringify(patch.properties.rate_limit)).toContain("#/components/schemas/RateLimit");
  expect(JSON.stringify(resolve(doc, { $ref: "#/components/schemas/RateLimit" }))).toContain('"maximum":86400');
});

// The reader's expectations (docs/api.md, "The OpenAPI document").

// biome-ignore lint/suspicious/noExplicitAny: the document is walked freely
type Any = any;

function operations(doc: Document): Array<{ where: string; path: string; method: string; op: Any }> {
  return v1Paths(doc).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, path, method, op })),
  );
}

function resolve(doc: Any, node: Any): Any {
  if (node && typeof node.$ref === "string") {
    return node.$ref
      .slice(2)
      .split("/")
      .reduce((at: Any, key: string) => at?.[key], doc);
  }
  return node;
}

test("every /v1 route is a declared operation: an operationId that is its RPC method's name, unique", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  const declared = new Map(world.app.gateway.operations.map((op) => [operationKey(op), op]));
  expect([...declared.keys()].sort()).toEqual(servedOperations(world));
  const ids = new Set<string>();
  for (const { where, op } of operations(doc)) {
    const row = declared.get(where);
    expect(op.operationId, where).toBe(row?.rpc.split("/")[1]);
    expect(row?.rpc ?? "", where).toBeOneOf(Object.keys(POLICY));
    expect(ids.has(op.operationId), `${where}: duplicate operationId`).toBe(false);
    ids.add(op.operationId);
  }
  expect(ids).toContain("CreateApiToken");
});

test("every operation lists its error statuses, each with the codes it may carry, all from the error table", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  for (const { where, op } of operations(doc)) {
    const errors = Object.keys(op.responses).filter((s) => Number(s) >= 400);
    expect(errors, where).toContain("500");
    for (const status of errors) {
      const codes: string[] =
        op.responses[status].content["application/json"].schema.allOf[1].properties.error.properties.code.enum;
      expect(codes.length, `${where} ${status}`).toBeGreaterThan(0);
      for (const code of codes) {
        expect(ERROR_TABLE[code as keyof typeof ERROR_TABLE]?.http, `${where} ${status} ${code}`).toBe(Number(status));
        expect(op.responses[status].description, `${where} ${status}`).toContain(`\`${code}\``);
      }
    }
  }
  const codes = (path: string, method: string, status: number) =>
    doc.paths[path][method].responses[status].content["application/json"].schema.allOf[1].properties.error.properties
      .code.enum;
  expect(codes("/v1/api_tokens/{id}", "delete", 409)).toEqual(["last_owner_token"]);
  expect(codes("/v1/services", "post", 403)).toEqual(["token_scope_insufficient"]);
  expect(codes("/v1/services/{id}", "delete", 403)).toEqual(["owner_required", "token_scope_insufficient"]);
  expect(codes("/v1/services/{id}", "patch", 400)).toEqual(["invalid_request", "service_name_immutable"]);
  expect(codes("/v1/ingest/{service_id}", "post", 401)).toEqual(["invalid_signature"]);
  expect(codes("/v1/tenant", "get", 401)).toEqual(["invalid_credentials", "missing_credentials"]);
  expect(Object.keys(doc.paths["/v1/ingest/{service_id}"].post.responses)).not.toContain("415");
  expect(Object.keys(doc.paths["/v1/health"].get.responses)).toEqual(["200", "500"]);
});

test("resources and the error object are named component schemas, referenced from the operations", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  const schemas = doc.components.schemas;
  for (const name of ["Error", "ApiToken", "CreatedApiToken", "Service", "CreatedService", "Tenant", "Event"])
    expect(schemas[name], name).toBeDefined();
  expect(schemas.Error.properties.error.required).toEqual(["code", "message", "request_id"]);
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (path: string, method: string, status: number) =>
    doc.paths[path][method].responses[status].content["application/json"].schema;
  expect(json("/v1/tenant", "get", 200)).toEqual(ref("Tenant"));
  expect(json("/v1/services", "post", 201)).toEqual(ref("CreatedService"));
  expect(schemas.ServiceList.properties.data.items).toEqual(ref("Service"));
  expect(doc.paths["/v1/services"].post.requestBody.content["application/json"].schema).toEqual(
    ref("CreateServiceRequest"),
  );
  // The documentation markers never leak.
  expect(JSON.stringify(doc)).not.toMatch(/"x-(component|limits|required)"/);
});

test("servers names the origin the document was fetched from", async () => {
  world = await createWorld();
  const res = await world.app.fetch(new Request("http://intake.example:8080/openapi.json"));
  expect(((await res.json()) as Any).servers).toEqual([
    { url: "http://intake.example:8080", description: "this server" },
  ]);
});

test("response headers are declared: X-Request-Id everywhere, WWW-Authenticate on 401, Retry-After and RateLimit on 429, Allow on 405", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  for (const { where, op } of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses as Record<string, Any>)) {
      expect(Object.keys(response.headers ?? {}), `${where} ${status}`).toContain("X-Request-Id");
    }
    if (where !== "GET /v1/health" && where !== "POST /v1/setup") {
      expect(Object.keys(op.responses["429"].headers)).toEqual(
        expect.arrayContaining(["Retry-After", "RateLimit", "RateLimit-Policy"]),
      );
      const success = Object.keys(op.responses).find((s) => s.startsWith("2")) as string;
      expect(Object.keys(op.responses[success].headers), where).toContain("RateLimit");
    }
  }
  expect(Object.keys(doc.paths["/v1/tenant"].get.responses["401"].headers)).toContain("WWW-Authenticate");
  expect(Object.keys(doc.paths["/v1/ingest/{service_id}"].post.responses["401"].headers)).not.toContain(
    "WWW-Authenticate",
  );
  for (const name of ["X-Request-Id", "WWW-Authenticate", "Retry-After", "RateLimit", "RateLimit-Policy", "Allow"])
    expect(doc.components.headers[name], name).toBeDefined();
  expect(doc.components.headers.Allow.schema.type).toBe("string");
});

test("limits are schema keywords: names 1..80, limit an integer 1..100 (no string branch), Idempotency-Key ≤ 255", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  const schemas = doc.components.schemas;
  for (const [schema, field] of [
    ["CreateServiceRequest", "service_name"],
    ["CreateApiTokenRequest", "name"],
    ["UpdateTenantRequest", "name"],
  ] as const) {
    expect(schemas[schema].properties[field], schema).toMatchObject({ minLength: 1, maxLength: 80 });
  }
  for (const path of ["/v1/api_tokens", "/v1/services", "/v1/services/{id}/events"]) {
    const limit = doc.paths[path].get.parameters.find((p: Any) => p.name === "limit");
    expect(limit.schema, path).toEqual({ minimum: 1, maximum: 100, default: 20, title: "limit", type: "integer" });
  }
  const ingest = doc.paths["/v1/ingest/{service_id}"].post;
  const header = (name: string) => ingest.parameters.find((p: Any) => p.name === name);
  expect(header("idempotency-key").schema).toMatchObject({ minLength: 1, maxLength: 255 });
  // Each scheme's headers are optional to the document: which set is required depends on the
  // service's signature_scheme (§19), and a missing one is the domain's 401.
  for (const name of ["x-service-signature", "webhook-id", "webhook-timestamp", "webhook-signature"]) {
    expect(header(name), name).toBeDefined();
    expect(header(name).required, name).toBe(false);
  }
});

test("every request body example in the document is accepted as it stands (2xx)", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  const svc = await world.createService("for-examples");
  let tried = 0;
  for (const { where, path, method, op } of operations(doc)) {
    const media = op.requestBody?.content?.["application/json"];
    if (!media || path.startsWith("/v1/ingest/")) continue;
    const schema = resolve(doc, media.schema);
    expect(media.example, `${where}: an example`).toBeDefined();
    expect(schema.examples?.[0], `${where}: the schema's example`).toEqual(media.example);
    const res = await world.request(method.toUpperCase(), path.replace("{id}", svc.id), { body: media.example });
    if (path === "/v1/setup") {
      // A well-formed request whose code was never issued: the code is judged, not the shape.
      expect(res.body.error?.code, `${where} ${res.text}`).toBe("invalid_setup_code");
    } else {
      expect(res.status, `${where} ${res.text}`).toBeLessThan(300);
    }
    tried++;
  }
  expect(tried).toBe(5);
});

// Issue 33: what Spectral, Redocly and a reader of /docs found (the linters themselves run in
// `bun run openapi:lint`, in CI).

test("every operation has a description and every tag it names is declared", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  const declared = new Set(doc.tags.map((tag: Any) => tag.name));
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      expect(op.description?.length, `${method} ${path}`).toBeGreaterThan(20);
      for (const tag of op.tags) expect(declared.has(tag), `${method} ${path}: tag ${tag}`).toBe(true);
    }
  }
});

test("a body of optional fields is not required (PATCH takes {} or nothing); a body with required fields is", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  expect(doc.paths["/v1/tenant"].patch.requestBody.required).toBe(false);
  expect(doc.paths["/v1/services/{id}"].patch.requestBody.required).toBe(false);
  expect(doc.paths["/v1/services"].post.requestBody.required).toBe(true);
  expect(doc.paths["/v1/api_tokens"].post.requestBody.required).toBe(true);
  expect((await world.request("PATCH", "/v1/tenant")).status).toBe(200);
});

test("ingest takes any Content-Type, lists the 202 before the 200 duplicate, and its payload examples are objects a sender posts", async () => {
  world = await createWorld();
  const res = await world.request("GET", "/openapi.json", { token: null });
  const ingest = (res.body as Any).paths["/v1/ingest/{service_id}"].post;
  expect(Object.keys(ingest.requestBody.content)).toEqual(["application/json", "*/*"]);
  // Scalar sorts the statuses and shows the first one's example: the 202, then the duplicate as 2XX.
  const successes = Object.keys(ingest.responses)
    .filter((s) => s.startsWith("2"))
    .sort();
  expect(successes).toEqual(["202", "2XX"]);
  expect(ingest.responses["2XX"].description).toStartWith("200: ");
  expect(ingest.responses["2XX"].content["application/json"].schema).toEqual({
    $ref: "#/components/schemas/IngestDuplicate",
  });
  expect(ingest.requestBody.content["application/json"].example).toMatchObject({ type: "invoice.paid" });
  expect(res.text).not.toContain("additionalProperty");
  expect((res.body as Any).components.schemas.Event.properties.payload.examples[0]).toMatchObject({
    type: "invoice.paid",
  });
});

test("descriptions keep `<...>` inside code spans, so /docs shows `t=<unix seconds>` instead of eating it as HTML", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  const descriptions: string[] = [];
  const walk = (node: Any) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === "object") {
      if (typeof node.description === "string") descriptions.push(node.description);
      Object.values(node).forEach(walk);
    }
  };
  walk(doc);
  for (const text of descriptions) {
    const outsideCode = text.split("`").filter((_, i) => i % 2 === 0);
    expect(outsideCode.join(" "), text).not.toMatch(/<[a-z]/i);
  }
  const signature = doc.paths["/v1/ingest/{service_id}"].post.parameters.find(
    (p: Any) => p.name === "x-service-signature",
  );
  expect(signature.description).toStartWith("`t=<unix seconds>,v1=<hex>");
  // Which signature headers a request needs depends on the service's scheme (SPEC §19): none is required.
  expect(signature.required).toBe(false);
});

test("formats and patterns: expires_at is date-time, target_id and {id} constrained, no string branch for integers", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  const schemas = doc.components.schemas;
  expect(JSON.stringify(schemas.CreateApiTokenRequest.properties.expires_at)).toContain('"format":"date-time"');
  const target = doc.paths["/v1/audit_events"].get.parameters.find((p: Any) => p.name === "target_id");
  expect(new RegExp(target.schema.pattern).test("svc_0193a1b2c3d4e5f60718293a4b5c6d7e")).toBe(true);
  expect(new RegExp(target.schema.pattern).test(world.tenantId)).toBe(true);
  expect(new RegExp(target.schema.pattern).test("bogus")).toBe(false);
  for (const { where, op } of operations(doc)) {
    for (const p of op.parameters ?? []) {
      if (p.in === "path") expect(p.schema.minLength ?? p.schema.pattern, `${where} ${p.name}`).toBeTruthy();
    }
  }
  expect(schemas.RateLimit.properties.limit).toMatchObject({ type: "integer", minimum: 1 });
  expect(JSON.stringify(doc)).not.toMatch(/"format":"(integer|numeric)"/);
});

test("the feed stream is text/event-stream; /metrics is documented as Prometheus text 0.0.4, and absent with INTAKE_METRICS=false", async () => {
  world = await createWorld();
  const doc = (await openapi(world)) as Any;
  expect(Object.keys(doc.paths["/v1/feed/stream"].get.responses["200"].content)).toEqual(["text/event-stream"]);
  const metrics = doc.paths["/metrics"].get;
  expect(Object.keys(metrics.responses["200"].content)).toEqual(["text/plain; version=0.0.4"]);
  expect(metrics.security).toEqual([]);
  const served = await world.app.fetch(new Request("http://intake.test/metrics"));
  expect(served.headers.get("content-type")).toContain("text/plain; version=0.0.4");
  await world.close();
  world = await createWorld({ env: { INTAKE_METRICS: "false" } });
  expect(Object.keys((await openapi(world)).paths)).not.toContain("/metrics");
});
