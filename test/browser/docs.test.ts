/**
 * /docs renders in a real browser with the network cut off: headless Chromium (Debian's
 * package) may reach only 127.0.0.1, and the reference must still list the operations.
 * Without Chromium the test is skipped with one line, or fails under INTAKE_REQUIRE_SERVICES=1.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { chromiumPresent, launchChromium, requireChromium } from "../support/browser.ts";
import { createWorld, type World } from "../support/harness.ts";

const present = chromiumPresent("/docs browser check");
const required = process.env.INTAKE_REQUIRE_SERVICES === "1";

let world: World;
let server: ReturnType<typeof Bun.serve>;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  world = await createWorld();
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: world.app.fetch });
  browser = await launchChromium();
});

afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await server?.stop(true);
  await world?.close();
});

test.if(present || required)(
  "/docs renders the operation list offline: every request but 127.0.0.1 is aborted",
  async () => {
    requireChromium();
    const page = await browser.newPage();
    const blocked: string[] = [];
    await page.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1") return route.continue();
      blocked.push(url.href);
      return route.abort("internetdisconnected");
    });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // Any 4xx/5xx the page causes shows in the browser's console (the favicon's 404 did).
    const failed: string[] = [];
    page.on("response", (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });

    await page.goto(`http://127.0.0.1:${server.port}/docs`, { waitUntil: "load" });
    // Summaries of operations from three tags: the list came from /openapi.json.
    for (const summary of ["Mint a token", "Register a service", "Rename the tenant"]) {
      await page.getByText(summary, { exact: false }).first().waitFor({ state: "visible", timeout: 20_000 });
    }
    if (process.env.INTAKE_DOCS_SCREENSHOT) await page.screenshot({ path: process.env.INTAKE_DOCS_SCREENSHOT });
    expect(errors).toEqual([]);
    // Nothing the page needs lives elsewhere (a blocked request would mean a missing asset offline).
    expect(blocked).toEqual([]);
    await page.getByText("Shell Curl").first().waitFor({ state: "visible", timeout: 20_000 });
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered lines are what a reader sees
    const text = await page.innerText("body");
    // "Client Libraries" offers curl only: Intake ships no SDK for any other language.
    for (const language of ["Python", "Node.js", "Ruby", "PHP", "Java", "C#", "Go", "Swift", "Kotlin", "JavaScript"]) {
      expect(text.split("\n"), language).not.toContain(language);
    }
    // Request examples are valid requests, not empty strings.
    expect(text).toContain('"name": "dashboard"');
    expect(text).not.toMatch(/"(service_)?name": ""/);
    expect(failed).toEqual([]);
    await page.close();
  },
  60_000,
);
