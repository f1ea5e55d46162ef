/**
 * Many console tabs on one token in a real browser (docs/console.md, "Live views"): a tab hidden
 * past the grace lets go of its live streams, so tabs left in the background do not hold the
 * token's live-reader cap (INTAKE_FEED_READERS_PER_TOKEN, here 2: one overview's feed and
 * incident streams), and shown again it catches up with nothing lost; a quick switch away and
 * back keeps its streams. Headless Chromium shows every page, so a tab is hidden and shown the
 * way the browser tells the page: `document.visibilityState` and a `visibilitychange` event.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserContext, Page } from "playwright-core";
import { chromiumPresent, requireChromium } from "../support/browser.ts";
import { check, openTab, type Served, serveConsole, signedPost, signIn, type Tab } from "../support/console.ts";
import { trigger } from "../support/incidents.ts";

const present = chromiumPresent("console hidden tabs");

const LIVE_EVENTS = "Live: new events appear here as they arrive.";
const LIVE_INCIDENTS = "Live: incident changes appear as they happen.";
const PAUSED = "Paused while the tab is hidden.";
/** How long a hidden tab keeps its streams (docs/console.md, "Only the tabs in view hold streams"). */
const HIDDEN_GRACE_MS = 10_000;

let served: Served;
let context: BrowserContext;
let billing: { id: string; secret: string };
/** The event sent before any tab opened. */
let earlier: string;

beforeAll(async () => {
  requireChromium();
  if (!present) return;
  served = await serveConsole({ env: { INTAKE_FEED_READERS_PER_TOKEN: "2" } });
  // Events get real receive times (the overview's latest events are newest first).
  served.world.clock.now = () => Date.now();
  billing = await served.world.createService("billing");
  const res = await signedPost(served.base, billing.id, billing.secret, '{"type":"invoice.paid"}');
  expect(res.status).toBe(202);
  earlier = ((await res.json()) as { id: string }).id;
  // Tabs of one browser window, as a person keeps them.
  context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
}, 60_000);

afterAll(async () => {
  await served?.close();
});

async function metric(pattern: RegExp): Promise<number> {
  const text = (await served.world.request("GET", "/metrics", { token: null })).text;
  return Number(pattern.exec(text)?.[1] ?? 0);
}
/** Live streams open on the server (feed and incident change streams). */
const streamsOpen = () => metric(/^intake_feed_streams (\S+)$/m);
/** Live reads refused because a cap was full (429). */
const refused = () => metric(/^intake_rate_limited_total\{policy="feed"\} (\S+)$/m);

async function until(what: string, ok: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/**
 * A new tab on the overview, signed in with the owner token, whose live lines' every text is
 * recorded (`window.liveLines`) from the first render, so a test can tell it never reconnected.
 */
async function overviewTab(): Promise<Tab> {
  const tab = await openTab(context, served.base);
  await tab.page.addInitScript(`
    const seen = [];
    window.liveLines = seen;
    new MutationObserver(() => {
      for (const line of document.querySelectorAll(".live[role=status]")) {
        if (!seen.includes(line.textContent)) seen.push(line.textContent);
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  `);
  await signIn(tab.page, served.base, served.world.ownerToken);
  await expectLive(tab.page);
  return tab;
}

async function expectLive(page: Page): Promise<void> {
  await page.getByText(LIVE_EVENTS).waitFor({ timeout: 15_000 });
  await page.getByText(LIVE_INCIDENTS).waitFor({ timeout: 15_000 });
}

/** Hides or shows the tab as the browser does when a person switches tabs. */
async function setHidden(page: Page, hidden: boolean): Promise<void> {
  const state = hidden ? "hidden" : "visible";
  await page.evaluate(`
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "${state}" });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => ${hidden} });
    document.dispatchEvent(new Event("visibilitychange"));
  `);
}

/** The requests that open a live stream (StreamFeed, the incident change stream). */
function countStreams(page: Page): () => number {
  let opened = 0;
  page.on("request", (request) => {
    if (/StreamFeed|\/v1\/incidents\/stream/.test(request.url())) opened++;
  });
  return () => opened;
}

describe.if(present)("console tabs of one token", () => {
  let first: Tab;

  test("a tab hidden for less than the grace keeps its streams: switching away and back opens none", async () => {
    first = await overviewTab();
    const opened = countStreams(first.page);
    await until("the tab's two streams", async () => (await streamsOpen()) === 2);
    await setHidden(first.page, true);
    await Bun.sleep(3_000);
    expect(await streamsOpen()).toBe(2);
    await setHidden(first.page, false);
    await Bun.sleep(500);
    expect(opened()).toBe(0);
    expect(await streamsOpen()).toBe(2);
    await expectLive(first.page);
  }, 30_000);

  test("a tab hidden past the grace lets go of its streams: another tab of the token goes live at once, and the hidden one, shown again, has what arrived meanwhile", async () => {
    // A change the first tab takes live, so its incident stream resumes from a cursor, not afresh.
    await trigger(served.world, billing, { dedup_key: "queue-lag", summary: "Queue lag over 30 s", severity: "error" });
    await first.page.getByRole("link", { name: "1 error" }).waitFor();

    // One overview holds the token's whole cap (2 streams). Hidden, it says so and lets go.
    const hiddenAt = Date.now();
    await setHidden(first.page, true);
    await first.page
      .getByText(PAUSED)
      .nth(1)
      .waitFor({ timeout: HIDDEN_GRACE_MS + 10_000 });
    expect(Date.now() - hiddenAt).toBeGreaterThanOrEqual(HIDDEN_GRACE_MS - 500);
    expect(await first.page.getByText(PAUSED).count()).toBe(2);
    await until("the hidden tab's streams to close", async () => (await streamsOpen()) === 0);
    await check(first, "overview-paused");

    // A second tab of the same token goes live without one refusal.
    const refusedBefore = await refused();
    const second = await overviewTab();
    const lines = await second.page.evaluate<string[]>("window.liveLines");
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => !line.startsWith("Live:") && line !== "Connecting…")).toEqual([]);
    expect(await refused()).toBe(refusedBefore);

    // While the first is hidden: an event and a critical incident, seen live by the second.
    const sent = await signedPost(served.base, billing.id, billing.secret, '{"type":"deploy.finished"}');
    expect(sent.status).toBe(202);
    const meanwhile = ((await sent.json()) as { id: string }).id;
    await trigger(served.world, billing, { dedup_key: "db-disk", summary: "Disk 95% on db-1", severity: "critical" });
    await second.page.getByRole("row").filter({ hasText: meanwhile }).waitFor();
    await second.page.getByRole("link", { name: "1 critical" }).waitFor();
    expect(await first.page.getByRole("row").filter({ hasText: meanwhile }).count()).toBe(0);

    // The second is hidden in turn; the first, shown again, resumes and has both.
    await setHidden(second.page, true);
    await second.page
      .getByText(PAUSED)
      .nth(1)
      .waitFor({ timeout: HIDDEN_GRACE_MS + 10_000 });
    await setHidden(first.page, false);
    await expectLive(first.page);
    await first.page.getByRole("row").filter({ hasText: meanwhile }).waitFor();
    await first.page.getByRole("link", { name: "1 critical" }).waitFor();
    expect(await first.page.getByText("2 open: see them all.").count()).toBe(1);
    // Each event once: the resume merged, it did not fill the list again beside itself.
    expect(await first.page.getByRole("row").filter({ hasText: earlier }).count()).toBe(1);
    expect(await refused()).toBe(refusedBefore);
    await until("the shown tab's two streams", async () => (await streamsOpen()) === 2);
    await check(first, "overview-resumed");
    expect(second.errors).toEqual([]);
  }, 90_000);
});
