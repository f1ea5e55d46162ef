/**
 * SPEC §8: /openapi.json is a valid OpenAPI 3.1 document of the whole /v1 surface, generated
 * from the routes the app serves; /docs is served with its assets from Intake itself; both
 * need no token and both go away with INTAKE_API_DOCS=false.
 */
import { afterEach, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
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
  return w.app.gateway.routes
    .filter((r) => r.path.startsWith("/v1/"))
    .map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:([^/]+)/g, "{$1}")}`)
    .sort();
}

function documentedOperations(doc: Document): string[] {
  return Object.entries(doc.paths)
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
  for (const [path, ops] of Object.entries(doc.paths)) {
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
        const schema = op.responses[status]?.content?.["application/json"]?.schema;
        expect(Object.keys(schema?.properties ?? {}), `${where} ${status}`).toEqual(["error"]);
      }
      if (["post", "patch"].includes(method) && !path.endsWith("/secret_rotations")) {
        expect(op.requestBody?.content["application/json"]?.schema, `${where} body`).toBeDefined();
      }
    }
  }
});

test("bearer routes name the bearer scheme; health, ingest and setup need none", async () => {
  world = await createWorld();
  const doc = await openapi(world);
  expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
  for (const [path, ops] of Object.entries(doc.paths)) {
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
  for (const [path, ops] of Object.entries(doc.paths)) {
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
  const patch = doc.paths["/v1/services/{id}"]?.patch?.requestBody?.content["application/json"]?.schema as {
    properties: Record<string, unknown>;
  };
  expect(JSON.stringify(patch.properties.rate_limit)).toContain('"maximum":86400');
});
