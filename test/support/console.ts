/**
 * What the console's browser journeys share (test/browser/console-*.test.ts): a served world,
 * Debian's Chromium, tabs that record console errors and foreign requests, the page check
 * (axe, errors, foreign requests, screenshots at 1280×800 and 390×844), signing in, and a
 * signed ingest.
 */

import { expect } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { mainPort } from "../../src/serve.ts";
import { launchChromium } from "./browser.ts";
import { createWorld, type World, type WorldOptions } from "./harness.ts";
import { sign } from "./signing.ts";

/** Where the journeys' screenshots are written (ignored by git). */
export const SCREENSHOTS = join(import.meta.dir, "../../test-results/console");

export interface Served {
  world: World;
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

/** A world on a real port, on real time (tokens and signatures use it), and a browser. */
export async function serveConsole(options: WorldOptions = {}): Promise<Served> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const world = await createWorld(options);
  world.clock.advance(Date.now() - world.clock.now());
  // As `serve` listens: its routes, idle timeout, and live streams lifting it.
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", ...mainPort(world.app) });
  world.app.listening(server);
  const browser = await launchChromium();
  return {
    world,
    base: `http://127.0.0.1:${server.port}`,
    browser,
    async close() {
      await browser.close();
      await server.stop(true);
      await world.close();
    },
  };
}

/** A tab that records console errors and any request to a host other than the server. */
export interface Tab {
  page: Page;
  errors: string[];
  foreign: string[];
}

export async function openTab(context: BrowserContext, base: string): Promise<Tab> {
  const page = await context.newPage();
  const tab: Tab = { page, errors: [], foreign: [] };
  page.on("console", (message) => {
    // A refused call is shown in the page; the browser also logs the failed request itself.
    if (message.type() === "error" && !/status of 4\d\d/.test(message.text())) tab.errors.push(message.text());
  });
  page.on("pageerror", (error) => tab.errors.push(error.message));
  await page.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.origin === base || url.protocol === "data:") return route.continue();
    tab.foreign.push(url.href);
    return route.abort("blockedbyclient");
  });
  return tab;
}

/**
 * Resolves once the page's finite animations have ended, for a check of the page at rest: a
 * fade-in (the loading line's) sampled halfway reads to axe as low contrast. A spinner's
 * animation never ends and is not waited for.
 */
export async function atRest(page: Page): Promise<void> {
  await page.evaluate(`Promise.all(document.getAnimations()
    .filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity)
    .map((a) => a.finished.catch(() => undefined)))`);
}

/** No serious or critical axe violation on the page at rest. */
export async function expectAccessible(page: Page): Promise<void> {
  await atRest(page);
  const axe = await new AxeBuilder({ page }).analyze();
  const bad = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)).toEqual([]);
}

/** No console error, no foreign request, no serious or critical axe violation; both screenshots. */
export async function check(tab: Tab, name: string): Promise<void> {
  await expectAccessible(tab.page);
  expect(tab.errors).toEqual([]);
  expect(tab.foreign).toEqual([]);
  const before = tab.page.viewportSize() ?? { width: 1280, height: 800 };
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await tab.page.setViewportSize({ width, height });
    await tab.page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}x${height}.png`), fullPage: true });
  }
  await tab.page.setViewportSize(before);
}

/** Presses Tab until `target` has the focus (bounded): the page must be reachable by keyboard. */
export async function tabTo(page: Page, target: ReturnType<Page["getByLabel"]>): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if (await target.evaluate((el) => el.matches(":focus"))) return;
    await page.keyboard.press("Tab");
  }
  throw new Error("the control was not reached with the Tab key");
}

/** Signs the tab in with `token` through the sign-in page; resolves on the overview. */
export async function signIn(page: Page, base: string, token: string, path = ""): Promise<void> {
  await page.goto(`${base}/console${path}`);
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page
    .getByRole("button", { name: "Sign out" })
    .or(page.getByRole("button", { name: "Menu" }))
    .first()
    .waitFor();
}

/** A Stripe-scheme signed POST to a service's ingest URL. */
export function signedPost(base: string, serviceId: string, secret: string, payload: string): Promise<Response> {
  return fetch(`${base}/v1/ingest/${serviceId}`, {
    method: "POST",
    headers: { "x-service-signature": sign(secret, payload, Date.now()) },
    body: payload,
  });
}
