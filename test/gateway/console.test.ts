/**
 * How /console is served (docs/console.md): the bundled page under a strict CSP, its assets
 * under /console/assets/, every other /console path answering the page, and GET / redirecting
 * there — all of it gone with INTAKE_CONSOLE=false.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { CONSOLE_CSP } from "../../src/gateway/console.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

function assetsOf(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
}

describe("the console's responses", () => {
  test("200 HTML page with the strict CSP (no inline script, frame-ancestors 'none'), no token needed", async () => {
    world = await createWorld();
    const res = await world.request("GET", "/console", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/html");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toBe(CONSOLE_CSP);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    // Every script is a file of this origin: nothing inline for the CSP to allow.
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(assetsOf(res.text).length).toBeGreaterThanOrEqual(2);
  });

  test("the page's script and stylesheet are served under /console/assets with the CSP and long caching", async () => {
    world = await createWorld();
    const page = await world.request("GET", "/console", { token: null });
    for (const path of assetsOf(page.text)) {
      const res = await world.request("GET", path, { token: null });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/(javascript|css)/);
      expect(res.headers.get("cache-control")).toContain("immutable");
      expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    }
  });

  test("deep links under /console answer the page; an unknown asset is 404 not_found", async () => {
    world = await createWorld();
    const page = await world.request("GET", "/console", { token: null });
    for (const path of [
      "/console/setup",
      "/console/services/svc_0193a1b2c3d4e5f60718293a4b5c6d7e",
      "/console/tokens",
    ]) {
      const res = await world.request("GET", path, { token: null });
      expect(res.status).toBe(200);
      expect(res.text).toBe(page.text);
    }
    const missing = await world.request("GET", "/console/assets/nope.js", { token: null });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
  });

  test("404s and 405s under /console carry the console's CSP, nosniff and referrer policy", async () => {
    world = await createWorld();
    for (const [method, path, status] of [
      ["GET", "/console/assets/does-not-exist.js", 404],
      ["HEAD", "/console/assets/does-not-exist.js", 404],
      ["POST", "/console", 405],
      ["DELETE", "/console/assets/x.js", 405],
    ] as const) {
      const res = await world.request(method, path, { token: null });
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} ${status}`);
      expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });

  test("GET / is a 302 to /console", async () => {
    world = await createWorld();
    const res = await world.request("GET", "/", { token: null });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/console");
  });

  test("INTAKE_CONSOLE=false: /console and its assets are 404 and / does not redirect there", async () => {
    world = await createWorld({ env: { INTAKE_CONSOLE: "false" } });
    expect((await world.request("GET", "/console", { token: null })).status).toBe(404);
    expect((await world.request("GET", "/console/setup", { token: null })).status).toBe(404);
    expect((await world.request("GET", "/", { token: null })).headers.get("location")).toBeNull();
  });
});
