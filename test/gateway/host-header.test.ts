/**
 * Routing never depends on the Host header (docs/api.md, "Requests"): Elysia's default path
 * lookup skipped the URL's first 11 characters, so a Host of 3 characters or fewer routed
 * every request by the wrong path (docs/architecture.md, "Upstream reports").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
let server: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  world = await createWorld();
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: world.app.fetch });
});
afterAll(async () => {
  await server.stop(true);
  await world.close();
});

const HOSTS = ["api", "a", "ab", "abc", "abcd", "[::1]", "1.2.3.4", "x:1", "localhost:8080", "intake.example.com"];

/** One raw HTTP/1.1 exchange: exactly the bytes a client like curl sends, the Host included. */
async function raw(request: string): Promise<{ status: number; text: string }> {
  let received = "";
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port: server.port as number,
    socket: {
      data(_socket, data) {
        received += data.toString("latin1");
      },
      close: () => resolve(),
      error: (_socket, error) => reject(error),
    },
  });
  socket.write(request);
  await promise;
  const status = Number(received.slice(9, 12));
  return { status, text: received };
}

describe("a short Host header", () => {
  for (const host of HOSTS) {
    test(`200 GET /v1/tenant and 404 not_found for GET /zz/v1/tenant with Host: ${host}`, async () => {
      const auth = { authorization: `Bearer ${world.ownerToken}`, host };
      const tenant = await fetch(`${server.url}v1/tenant`, { headers: auth });
      expect([host, tenant.status]).toEqual([host, 200]);
      expect(((await tenant.json()) as { id: string }).id).toBe(world.tenantId);

      const wrong = await fetch(`${server.url}zz/v1/tenant`, { headers: auth });
      expect([host, wrong.status]).toEqual([host, 404]);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("not_found");
    });
  }

  test("200 GET /openapi.json and the /v1/health probe with Host: a", async () => {
    for (const path of ["openapi.json", "v1/health"]) {
      expect([path, (await fetch(`${server.url}${path}`, { headers: { host: "a" } })).status]).toEqual([path, 200]);
    }
  });

  test("200 on the Connect route and 401 invalid_signature on ingest with Host: api", async () => {
    const connect = await fetch(`${server.url}intake.v1.TenantService/GetTenant`, {
      method: "POST",
      headers: { host: "api", "content-type": "application/json", authorization: `Bearer ${world.ownerToken}` },
      body: "{}",
    });
    expect(connect.status).toBe(200);
    expect(((await connect.json()) as { tenant: { id: string } }).tenant.id).toBe(world.tenantId);

    const ingest = await fetch(`${server.url}v1/ingest/svc_${"0".repeat(32)}`, {
      method: "POST",
      headers: { host: "api", "content-type": "application/json" },
      body: "{}",
    });
    expect([ingest.status, ((await ingest.json()) as { error: { code: string } }).error.code]).toEqual([
      401,
      "invalid_signature",
    ]);
  });

  test("200 for a raw request with Host: api, and for an HTTP/1.0 request with no Host at all", async () => {
    const auth = `Authorization: Bearer ${world.ownerToken}\r\n`;
    const short = await raw(`GET /v1/tenant HTTP/1.1\r\nHost: api\r\n${auth}Connection: close\r\n\r\n`);
    expect(short.status).toBe(200);
    expect(short.text).toContain(world.tenantId);
    const none = await raw(`GET /v1/tenant HTTP/1.0\r\n${auth}\r\n`);
    expect(none.status).toBe(200);
  });
});
