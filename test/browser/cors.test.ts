/**
 * CORS in a real browser (SPEC §20): a page served by a second local server (another origin)
 * calls Intake with a bearer token — a preflighted REST read and write, the feed stream and a
 * Connect call — when its origin is listed in INTAKE_CORS_ORIGINS, and is refused by the
 * browser when it is not, or when it posts to ingest. Without Chromium the tests are skipped
 * with one line, or fail under INTAKE_REQUIRE_SERVICES=1.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { chromiumPresent, launchChromium, requireChromium } from "../support/browser.ts";
import { createWorld, type World } from "../support/harness.ts";

const present = chromiumPresent("CORS browser check");
const required = process.env.INTAKE_REQUIRE_SERVICES === "1";

let world: World;
let intake: ReturnType<typeof Bun.serve>;
let listed: ReturnType<typeof Bun.serve>;
let unlisted: ReturnType<typeof Bun.serve>;
let browser: Browser;
let serviceId: string;

const pageServer = () =>
  Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response("<!doctype html><title>another origin</title>", { headers: { "content-type": "text/html" } }),
  });

beforeAll(async () => {
  if (!present) return;
  listed = pageServer();
  unlisted = pageServer();
  world = await createWorld({ env: { INTAKE_CORS_ORIGINS: `http://127.0.0.1:${listed.port}` } });
  serviceId = (await world.createService()).id;
  intake = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: world.app.nativeRoutes, fetch: world.app.fetch });
  browser = await launchChromium();
});

afterAll(async () => {
  if (!present) return;
  await browser?.close();
  for (const server of [intake, listed, unlisted]) server?.stop(true);
  await world?.close();
});

async function pageOn(server: ReturnType<typeof Bun.serve>): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.port}/`);
  return page;
}

/** What the page's script saw of each call: the status and the fields it could read, or the browser's refusal. */
type Seen = Record<string, { status?: number; requestId?: string | null; body?: string; refused?: string }>;

function callsFrom(page: Page): Promise<Seen> {
  return page.evaluate(
    async ({ base, token, serviceId }) => {
      const auth = { authorization: `Bearer ${token}` };
      const seen: Seen = {};
      const attempt = async (name: string, run: () => Promise<Response>, read = true) => {
        try {
          const res = await run();
          seen[name] = {
            status: res.status,
            requestId: res.headers.get("x-request-id"),
            body: read ? (await res.text()).slice(0, 200) : "",
          };
          if (!read) await res.body?.cancel();
        } catch (error) {
          seen[name] = { refused: String(error) };
        }
      };
      await attempt("tenant", () => fetch(`${base}/v1/tenant`, { headers: auth }));
      await attempt("patch", () =>
        fetch(`${base}/v1/services/${serviceId}`, {
          method: "PATCH",
          headers: { ...auth, "content-type": "application/json", "idempotency-key": "k1" },
          body: JSON.stringify({ is_monitored: false }),
        }),
      );
      await attempt(
        "stream",
        () => fetch(`${base}/v1/feed/stream`, { headers: { ...auth, "last-event-id": "" } }),
        false,
      );
      await attempt("connect", () =>
        fetch(`${base}/intake.v1.TenantService/GetTenant`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", "connect-protocol-version": "1" },
          body: "{}",
        }),
      );
      await attempt("ingest", () =>
        fetch(`${base}/v1/ingest/${serviceId}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }),
      );
      return seen;
    },
    { base: `http://127.0.0.1:${intake.port}`, token: world.ownerToken, serviceId },
  ) as Promise<Seen>;
}

test.if(present || required)(
  "a page of a listed origin calls REST, the feed stream and Connect and reads X-Request-Id; ingest stays closed",
  async () => {
    requireChromium();
    const page = await pageOn(listed);
    const seen = await callsFrom(page);
    await page.close();
    expect(seen.tenant?.status).toBe(200);
    expect(seen.tenant?.body).toContain('"name":"Acme"');
    expect(seen.tenant?.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(seen.patch?.status).toBe(200);
    expect(seen.patch?.body).toContain('"is_monitored":false');
    expect(seen.stream?.status).toBe(200);
    expect(seen.connect?.status).toBe(200);
    expect(seen.connect?.body).toContain("Acme");
    expect(seen.ingest?.refused).toContain("Failed to fetch");
  },
  60_000,
);

test.if(present || required)(
  "a page of an unlisted origin is refused by the browser on every route",
  async () => {
    requireChromium();
    await world.request("PATCH", `/v1/services/${serviceId}`, { body: { is_monitored: true } });
    const page = await pageOn(unlisted);
    const seen = await callsFrom(page);
    await page.close();
    for (const name of ["tenant", "patch", "stream", "connect", "ingest"]) {
      expect([name, seen[name]?.refused]).toEqual([name, expect.stringContaining("Failed to fetch")]);
    }
    // The preflighted write never reached the service.
    expect((await world.request("GET", `/v1/services/${serviceId}`)).body.is_monitored).toBe(true);
  },
  60_000,
);
