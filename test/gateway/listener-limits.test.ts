/**
 * What `intake serve`'s listener answers before any route runs (docs/api.md, "Limits the HTTP
 * layer enforces"): large bodies reach the gateway, which answers in the one error shape and
 * in the contract's check order (401 before 413); oversized headers are refused by Bun itself
 * with a bare 431, which no option of Bun.serve can shape, pinned here so a change shows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { serve } from "../../src/serve.ts";
import { acquireStack, type StackResources } from "../support/stack.ts";

let stack: StackResources;
let running: Awaited<ReturnType<typeof serve>>;
let token: string;
let port: number;
beforeAll(async () => {
  stack = await acquireStack();
  const config = parseConfig({ ...stack.env, PORT: "0", HOST: "127.0.0.1", INTAKE_GRPC_PORT: "0" });
  running = await serve(
    config,
    { tokenPepper: "p".repeat(32), secretsKey: new Uint8Array(32) },
    createLogger(() => {}),
  );
  port = running.server.port as number;
  token = (await running.app.domain.onboarding.bootstrapTenant({ name: "Acme", permissionMode: "role_based" })).token;
});
afterAll(async () => {
  // fetch keeps its connections alive: close them now rather than wait out Bun's idle timeout.
  await running.server.stop(true);
  await running.stop();
  await stack.release();
});

/** One raw HTTP/1.1 exchange on a fresh connection; resolves with everything the server sent. */
async function exchange(head: string, body = ""): Promise<string> {
  let received = "";
  const { promise, resolve, reject } = Promise.withResolvers<string>();
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_socket, data) {
        received += data.toString("latin1");
      },
      close: () => resolve(received),
      error: (_socket, error) => reject(error),
    },
  });
  socket.write(head + body);
  return promise;
}

function statusOf(raw: string): number {
  return Number(raw.slice(9, 12));
}

const TWO_MB = "x".repeat(2 * 1024 * 1024);

describe("large bodies reach the gateway", () => {
  test("401 missing_credentials, not a bare 413, for a 2 MB body to POST /v1/services without a token", async () => {
    const res = await fetch(`${running.server.url}v1/services`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: TWO_MB,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("missing_credentials");
  });

  test("413 payload_too_large in the error shape for a 2 MB body with a valid token", async () => {
    const res = await fetch(`${running.server.url}v1/services`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: TWO_MB,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });

  test("401 for a declared 100 MB body without a token, answered without waiting for the body", async () => {
    const raw = await exchange(
      "POST /v1/services HTTP/1.1\r\nHost: intake.test\r\nContent-Type: application/json\r\n" +
        `Content-Length: ${100 * 1024 * 1024}\r\nConnection: close\r\n\r\n`,
      "{",
    );
    expect(statusOf(raw)).toBe(401);
    expect(raw.toLowerCase()).toContain("x-request-id: req_");
    expect(raw).toContain('"code":"missing_credentials"');
  });

  test("413 payload_too_large in the error shape for a 2 MB body on ingest to a known service", async () => {
    const created = await fetch(`${running.server.url}v1/services`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ service_name: "big-sender" }),
    });
    const { id } = (await created.json()) as { id: string };
    const res = await fetch(`${running.server.url}v1/ingest/${id}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-service-signature": `t=${Math.floor(Date.now() / 1000)},v1=00`,
      },
      body: TWO_MB,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });

  test("unauthenticated, not a bare 413, for a 2 MB Connect request without a token", async () => {
    const res = await fetch(`${running.server.url}intake.v1.ServiceRegistryService/CreateService`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: TWO_MB,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(((await res.json()) as { code: string }).code).toBe("unauthenticated");
  });
});

describe("Bun's header limits (a bare 431 Intake cannot shape)", () => {
  /** A request head of exactly `size` bytes, request line and final blank line included. */
  function headOf(size: number): string {
    const start = "GET /v1/tenant HTTP/1.1\r\nHost: intake.test\r\nConnection: close\r\nX-Pad: ";
    return `${start}${"a".repeat(size - start.length - 4)}\r\n\r\n`;
  }

  test("a request head of 16384 bytes reaches Intake (401 in the error shape)", async () => {
    const raw = await exchange(headOf(16_384));
    expect(statusOf(raw)).toBe(401);
    expect(raw.toLowerCase()).toContain("x-request-id: req_");
  });

  test("a request head of 16385 bytes gets Bun's bare 431: no body, no X-Request-Id", async () => {
    const raw = await exchange(headOf(16_385));
    expect(statusOf(raw)).toBe(431);
    expect(raw.toLowerCase()).not.toContain("x-request-id");
    expect(raw.endsWith("\r\n\r\n")).toBe(true);
  });

  test("about 200 header fields get Bun's bare 431 too; 150 reach Intake", async () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `X-F${i}: v\r\n`).join("");
    const head = (n: number) => `GET /v1/tenant HTTP/1.1\r\nHost: intake.test\r\nConnection: close\r\n${fields(n)}\r\n`;
    expect(statusOf(await exchange(head(150)))).toBe(401);
    const refused = await exchange(head(250));
    expect(statusOf(refused)).toBe(431);
    expect(refused.toLowerCase()).not.toContain("x-request-id");
  });
});
