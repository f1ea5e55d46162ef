/**
 * The console's pages as a whole, in Debian's Chromium (playwright-core), each with something
 * on it (test/support/console-world.ts): every page in the light and the dark theme with no
 * serious or critical axe violation (contrast included), no browser-console error and no
 * request to another host; every page at 390×844 and 1280×800 with no horizontal page
 * overflow; the whole navigation reachable on a phone, by pointer and by keyboard; the
 * not-found page; inline forms' buttons level with their fields. Screenshots
 * of every page in both themes at 1280×800 and 390×844 go to test-results/console/
 * (`<page>-<theme>-<width>x<height>.png`). Without Chromium the suite is skipped with one line,
 * or fails under INTAKE_REQUIRE_SERVICES=1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { chromiumPresent, launchChromium, requireChromium } from "../support/browser.ts";
import { atRest, openTab, SCREENSHOTS, signIn, type Tab, tabTo } from "../support/console.ts";
import { type ConsoleWorld, consoleWorld } from "../support/console-world.ts";

const present = chromiumPresent("console pages (themes, phone layout, navigation)");

let cw: ConsoleWorld;
let browser: Browser;

beforeAll(async () => {
  requireChromium();
  if (!present) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  cw = await consoleWorld();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await cw?.close();
});

interface ConsolePage {
  name: string;
  /** Under /console. */
  path: string;
  /** The h1 the page shows once it has what it reads. */
  heading: string | RegExp;
}

/** Every page a signed-in person reaches, each with its heading. */
function signedInPages(): ConsolePage[] {
  return [
    { name: "overview", path: "", heading: "Acme" },
    { name: "services", path: "/services", heading: "Services" },
    { name: "service", path: `/services/${cw.billing.id}`, heading: "billing" },
    { name: "events", path: "/events", heading: "Events" },
    { name: "event", path: `/events/${cw.events[0]}`, heading: "invoice.paid" },
    { name: "incidents", path: "/incidents", heading: "Incidents" },
    { name: "incident", path: `/incidents/${cw.incidents[0]}`, heading: "Disk 95% on db-1" },
    { name: "incident-resolved", path: `/incidents/${cw.incidents[2]}`, heading: "Carrier API answering 502" },
    { name: "tokens", path: "/tokens", heading: "API tokens" },
    { name: "settings", path: "/settings", heading: "Tenant settings" },
    { name: "audit", path: "/audit", heading: "Audit log" },
    { name: "not-found", path: "/nope", heading: "Page not found" },
  ];
}

const SIZES = [
  [1280, 800],
  [390, 844],
] as const;

/** Goes to `page` and waits for its heading and for its first reads to end (no loading state left). */
async function visit(tab: Tab, { path, heading }: ConsolePage): Promise<void> {
  await tab.page.goto(`${cw.base}/console${path}`);
  await tab.page.getByRole("heading", { level: 1, name: heading, exact: typeof heading === "string" }).waitFor();
  const loading = tab.page.locator(".loading");
  for (const deadline = Date.now() + 10_000; (await loading.count()) > 0; await Bun.sleep(50)) {
    if (Date.now() > deadline) throw new Error(`${path}: still loading after 10 s`);
  }
}

/**
 * What is wrong with the page now: serious or critical axe violations, and the console errors
 * and foreign requests since the last look (which it clears), each line prefixed with `name`.
 */
async function problems(tab: Tab, name: string): Promise<string[]> {
  await atRest(tab.page);
  const axe = await new AxeBuilder({ page: tab.page }).analyze();
  const found = axe.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${name}: ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
  for (const error of tab.errors.splice(0)) found.push(`${name}: console error ${error}`);
  for (const url of tab.foreign.splice(0)) found.push(`${name}: foreign request ${url}`);
  return found;
}

/** How far the page scrolls sideways (0: it fits the viewport's width). */
function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  ) as Promise<number>;
}

/** The relative luminance (0 black .. 1 white) of the page's background (body's, else the root's). */
function backgroundLuminance(page: Page): Promise<number> {
  return page.evaluate(`(() => {
    const painted = [document.body, document.documentElement]
      .map((e) => getComputedStyle(e).backgroundColor)
      .find((c) => c !== "rgba(0, 0, 0, 0)");
    const [r, g, b] = painted.match(/[\\d.]+/g).map(Number);
    const lin = (c) => ((c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  })()`) as Promise<number>;
}

async function signedInTab(context: BrowserContext): Promise<Tab> {
  const tab = await openTab(context, cw.base);
  await signIn(tab.page, cw.base, cw.world.ownerToken);
  return tab;
}

describe.if(present)("the console's pages as a whole", () => {
  for (const theme of ["light", "dark"] as const) {
    test(`every page in the ${theme} theme: no serious axe violation (contrast included), no console error, no foreign request; screenshots at 1280×800 and 390×844`, async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: theme });
      const found: string[] = [];
      const shoot = async (tab: Tab, name: string) => {
        for (const [width, height] of SIZES) {
          await tab.page.setViewportSize({ width, height });
          found.push(...(await problems(tab, `${name} at ${width}px`)));
          await tab.page.screenshot({
            path: join(SCREENSHOTS, `${name}-${theme}-${width}x${height}.png`),
            fullPage: true,
          });
        }
        await tab.page.setViewportSize({ width: 1280, height: 800 });
      };

      // Signed out: the sign-in page and the setup page.
      const guest = await openTab(context, cw.base);
      await visit(guest, { name: "sign-in", path: "", heading: "Sign in to Intake" });
      const luminance = await backgroundLuminance(guest.page);
      if (theme === "dark") expect(luminance).toBeLessThan(0.05);
      else expect(luminance).toBeGreaterThan(0.8);
      await shoot(guest, "sign-in");
      const { code } = await cw.world.app.domain.onboarding.issueSetupCode({ expiresInSeconds: 600 });
      await visit(guest, { name: "setup", path: `/setup#code=${code}`, heading: "Set up Intake" });
      await shoot(guest, "setup");

      const tab = await signedInTab(context);
      for (const page of signedInPages()) {
        await visit(tab, page);
        await shoot(tab, page.name);
      }
      expect(found).toEqual([]);
      await context.close();
    }, 180_000);
  }

  test("every main page fits the width at 390×844 and at 1280×800: no horizontal page overflow", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const tab = await signedInTab(context);
    const overflowing: string[] = [];
    for (const page of signedInPages()) {
      await visit(tab, page);
      for (const [width, height] of [...SIZES].reverse()) {
        await tab.page.setViewportSize({ width, height });
        const overflow = await horizontalOverflow(tab.page);
        if (overflow > 0) overflowing.push(`${page.name} at ${width}px by ${overflow}px`);
      }
      await tab.page.setViewportSize({ width: 390, height: 844 });
    }
    await tab.page.getByRole("button", { name: "Menu" }).click();
    const opened = await horizontalOverflow(tab.page);
    if (opened > 0) overflowing.push(`the open menu by ${opened}px`);
    expect(overflowing).toEqual([]);
    await context.close();
  }, 120_000);

  test("at 390×844 the whole navigation is reachable: each link behind the Menu button, by pointer and by keyboard", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context);
    const { page } = tab;
    const nav = page.getByRole("navigation", { name: "Console" });
    const links = await nav
      .getByRole("link")
      .evaluateAll((all) =>
        all.map((a) => ({ label: a.textContent?.trim() ?? "", href: a.getAttribute("href") ?? "" })),
      );
    expect(links.length).toBeGreaterThanOrEqual(6);

    await page.setViewportSize({ width: 390, height: 844 });
    const menu = page.getByRole("button", { name: "Menu" });
    for (const { label, href } of links) {
      await menu.click();
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      const link = nav.getByRole("link", { name: label, exact: true });
      const box = await link.boundingBox();
      expect(box).not.toBeNull();
      // Whole and on screen: not clipped at either side of a 390 px viewport.
      expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
      await link.click();
      await page.waitForURL(`${cw.base}${href}`);
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      // Choosing a page closes the menu.
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
    }
    const signOut = page.getByRole("button", { name: "Sign out" });
    await menu.click();
    expect(await signOut.isVisible()).toBe(true);
    await menu.click();

    // By keyboard alone: Tab to Menu, open it with Enter, Tab to the last link, follow it.
    await page.goto(`${cw.base}/console`);
    await page.getByRole("heading", { level: 1, name: "Acme" }).waitFor();
    await tabTo(page, menu);
    await page.keyboard.press("Enter");
    const last = links[links.length - 1] as { label: string; href: string };
    await tabTo(page, nav.getByRole("link", { name: last.label, exact: true }));
    await page.keyboard.press("Enter");
    await page.waitForURL(`${cw.base}${last.href}`);
    expect(tab.errors).toEqual([]);
    await context.close();
  }, 120_000);

  test("at 1280×800 an inline form's button sits level with its fields (bottoms within 1 px)", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context);
    const forms = [
      { path: "/tokens", heading: "API tokens", field: "Name", button: "Create token" },
      { path: "/services", heading: "Services", field: "New service name", button: "Create service" },
      { path: `/services/${cw.billing.id}`, heading: "billing", field: "Requests", button: "Set rate limit" },
      { path: "/events", heading: "Events", field: "Search payloads", button: "Search" },
    ];
    const uneven: string[] = [];
    for (const { path, heading, field, button } of forms) {
      await visit(tab, { name: path, path, heading });
      const f = await tab.page.getByLabel(field, { exact: true }).first().boundingBox();
      const b = await tab.page.getByRole("button", { name: button, exact: true }).first().boundingBox();
      if (!f || !b) throw new Error(`${path}: "${field}" or "${button}" is not shown`);
      const off = Math.round(b.y + b.height - (f.y + f.height));
      if (Math.abs(off) > 1) uneven.push(`${path}: "${button}" ${off}px off "${field}"`);
    }
    expect(uneven).toEqual([]);
    await context.close();
  }, 60_000);

  test("an unknown console path answers the not-found page, titled so, with the way back", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context);
    await visit(tab, { name: "not-found", path: "/nope", heading: "Page not found" });
    expect(await tab.page.title()).toBe("Page not found · Intake console");
    // The overview's heading is not there: the page is not the overview under another address.
    expect(await tab.page.getByRole("heading", { name: "Acme" }).count()).toBe(0);
    await tab.page.getByRole("link", { name: "Go to the overview" }).click();
    await tab.page.getByRole("heading", { level: 1, name: "Acme" }).waitFor();
    expect(tab.page.url()).toBe(`${cw.base}/console`);
    expect(await problems(tab, "not-found")).toEqual([]);
    await context.close();
  }, 60_000);

  test("at 390×844 each event row is a dense card: time and service, then type and id, then the payload's first line; the overview stays short", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const tab = await signedInTab(context);
    await visit(tab, { name: "overview", path: "", heading: "Acme" });
    const rows = tab.page.locator("table.event-rows tbody tr");
    // Every event of the world (18): the overview shows up to 20.
    const count = await rows.count();
    expect(count).toBe(18);
    const top = async (row: ReturnType<typeof rows.nth>, label: string) =>
      (await row.locator(`td[data-label="${label}"]`).boundingBox())?.y ?? Number.NaN;
    const loose: string[] = [];
    for (let i = 0; i < count; i++) {
      const row = rows.nth(i);
      const box = await row.boundingBox();
      const [received, service, type, id, payload] = await Promise.all(
        ["Received", "Service", "Type", "Id", "Payload"].map((label) => top(row, label)),
      );
      const lines =
        received === service &&
        type === id &&
        (type as number) > (received as number) &&
        (payload as number) > (type as number);
      if (!box || box.height > 100 || !lines)
        loose.push(`row ${i}: ${box?.height}px, tops ${[received, service, type, id, payload]}`);
    }
    expect(loose).toEqual([]);
    // The id is abbreviated to fit beside the type; its link still goes to the whole id's page.
    const link = rows.first().locator("a.event-id");
    const whole = (await link.textContent()) ?? "";
    expect(await link.getAttribute("href")).toBe(`/console/events/${whole}`);
    expect(await link.getAttribute("data-short")).toBe(`${whole.slice(0, 10)}…${whole.slice(-4)}`);
    const height = (await tab.page.evaluate("document.documentElement.scrollHeight")) as number;
    expect(height).toBeLessThan(3_000);
    expect(await problems(tab, "overview at 390px")).toEqual([]);
    await context.close();
  }, 60_000);

  test("an alert event's row says what it is ('alert · trigger', from its event_action) while the API's type stays null", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context);
    await visit(tab, { name: "events", path: "/events", heading: "Events" });
    const types = await tab.page.locator('table.event-rows td[data-label="Type"]').allTextContents();
    expect(types.filter((t) => t.startsWith("alert"))).toEqual([
      "alert · resolve",
      "alert · trigger",
      "alert · acknowledge",
      "alert · trigger",
      "alert · trigger",
    ]);
    expect(types).not.toContain("—");
    const row = tab.page.locator("table.event-rows tbody tr", { hasText: "alert · resolve" });
    const id = (await row.locator("a.event-id").textContent()) ?? "";
    const read = await cw.world.request("GET", `/v1/events/${id}`);
    expect((read.body as { type: unknown }).type).toBeNull();
    await row.locator("a.event-id").click();
    await tab.page.getByRole("heading", { level: 1, name: "alert · resolve" }).waitFor();
    await context.close();
  }, 60_000);

  test("the tokens table at 1280×800: each token's status in words, and its Revoke in a column of its own, on one line, named for the token", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context);
    await visit(tab, { name: "tokens", path: "/tokens", heading: "API tokens" });
    const { page } = tab;
    const headers = await page.locator("table thead th").allTextContents();
    expect(headers).toEqual(["Name", "Prefix", "Scope", "Role", "Expires", "Last used", "Status", "Actions"]);
    expect(await page.locator('td[data-label="Status"]').allTextContents()).toEqual(["active", "active"]);
    const revoke = page.getByRole("button", { name: "Revoke dashboard", exact: true });
    expect((await revoke.textContent())?.trim()).toBe("Revoke");
    // One line of text: a button is 40 px tall (2.5rem) with one line, about 62 px with two.
    expect((await revoke.boundingBox())?.height).toBeLessThan(48);
    expect(await problems(tab, "tokens")).toEqual([]);
    await context.close();
  }, 60_000);
});
