/**
 * The console's care (SPEC §22, docs/console.md) in Debian's Chromium: revoke and rotate ask
 * first, and a cancelled confirmation changes nothing; an unknown console path and a missing
 * service answer a not-found page; the light and the dark theme follow the system, each
 * readable (axe's contrast checks); on a 390 px phone the navigation folds behind "Menu" and
 * every link is reachable, with no horizontal page overflow. Screenshots go to
 * test-results/console/ like the first-run journey's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import AxeBuilder from "@axe-core/playwright";
import type { BrowserContext, Page } from "playwright-core";
import { chromiumPresent, requireChromium } from "../support/browser.ts";
import { check, expectAccessible, openTab, type Served, serveConsole, signIn } from "../support/console.ts";
import { trigger } from "../support/incidents.ts";

const present = chromiumPresent("console care journeys");
let served: Served;

beforeAll(async () => {
  requireChromium();
  if (!present) return;
  served = await serveConsole();
}, 60_000);

afterAll(async () => {
  await served?.close();
});

async function signedInTab(context: BrowserContext, path = "") {
  const tab = await openTab(context, served.base);
  await signIn(tab.page, served.base, served.world.ownerToken, path);
  return tab;
}

async function tokenRecord(id: string): Promise<{ revoked_at: string | null }> {
  const reply = await served.world.request("GET", `/v1/api_tokens/${id}`);
  expect(reply.status).toBe(200);
  return reply.body as { revoked_at: string | null };
}

async function secretPrefix(id: string): Promise<string> {
  const reply = await served.world.request("GET", `/v1/services/${id}`);
  expect(reply.status).toBe(200);
  return (reply.body as { signing_secret_prefix: string }).signing_secret_prefix;
}

/** The page is no wider than its viewport: nothing sticks out sideways. */
async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
}

describe.if(present)("the console's care", () => {
  test("revoke asks first: cancel and Escape change nothing, confirming revokes", async () => {
    const { world } = served;
    const minted = await world.mint({ name: "ci-deploy", scope: "read_only", role: "member" });
    const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context);
    const { page } = tab;
    await page.getByRole("link", { name: "API tokens" }).click();

    const revoke = page.getByRole("button", { name: "Revoke ci-deploy" });
    const dialog = page.getByRole("dialog", { name: "Revoke ci-deploy?" });
    await revoke.click();
    await dialog.waitFor();
    // The safe choice has the focus: Enter alone does not revoke.
    expect(await dialog.getByRole("button", { name: "Cancel" }).evaluate((el) => el.matches(":focus"))).toBe(true);
    await check(tab, "confirm-revoke");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await tokenRecord(minted.id)).revoked_at).toBeNull();
    // The focus is back on the button that asked.
    expect(await revoke.evaluate((el) => el.matches(":focus"))).toBe(true);

    await revoke.click();
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect((await tokenRecord(minted.id)).revoked_at).toBeNull();
    expect(await revoke.isVisible()).toBe(true);

    await revoke.click();
    await dialog.getByRole("button", { name: "Revoke token" }).click();
    // Gone from the active tokens; listed as revoked with the revoked ones.
    await revoke.waitFor({ state: "detached" });
    await page.getByLabel("Show revoked tokens").check();
    await page
      .getByRole("row", { name: /ci-deploy/ })
      .getByText(/^revoked/)
      .waitFor();
    expect((await tokenRecord(minted.id)).revoked_at).not.toBeNull();
    expect(tab.errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("rotate asks first: cancel keeps the secret, confirming shows the new one once", async () => {
    const { world } = served;
    const service = await world.createService("payments");
    const before = await secretPrefix(service.id);
    const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context, `/services/${service.id}`);
    const { page } = tab;
    await page.getByRole("heading", { name: "payments" }).waitFor();

    const rotate = page.getByRole("button", { name: "Rotate signing secret" });
    const dialog = page.getByRole("dialog", { name: "Rotate the signing secret of payments?" });
    await rotate.click();
    await dialog.waitFor();
    await check(tab, "confirm-rotate");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(await secretPrefix(service.id)).toBe(before);
    expect(await page.getByLabel("New signing secret").count()).toBe(0);

    await rotate.click();
    await dialog.getByRole("button", { name: "Rotate secret" }).click();
    const secret = (await page.getByLabel("New signing secret").textContent())?.trim() ?? "";
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(service.secret);
    expect(await secretPrefix(service.id)).not.toBe(before);
    expect(tab.errors).toEqual([]);
    await context.close();
  }, 60_000);

  test("an unknown console path and a missing service answer a not-found page with a way back", async () => {
    const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context, "/nope");
    const { page } = tab;
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
    expect(await page.title()).toBe("Page not found · Intake console");
    // Not the overview under another name.
    expect(await page.getByRole("heading", { name: "Acme" }).count()).toBe(0);
    await check(tab, "not-found");
    await page.getByRole("link", { name: "Go to the overview" }).click();
    await page.getByRole("heading", { name: "Acme" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console");

    await page.goto(`${served.base}/console/services/svc_${"0".repeat(32)}`);
    await page.getByRole("heading", { name: "Service not found" }).waitFor();
    expect(await page.title()).toBe("Service not found · Intake console");
    // The missing service's 404 is the page's subject, not an error.
    tab.errors = tab.errors.filter((e) => !/status of 404/.test(e));
    await check(tab, "service-not-found");
    await page.getByRole("link", { name: "See all services" }).click();
    await page.getByRole("heading", { name: "Services" }).waitFor();
    await context.close();
  }, 60_000);

  test("the audit log names its ids: token, service (or that it was deleted), incident, tenant", async () => {
    const { world } = served;
    const bot = await world.mint({ name: "ops-bot", scope: "read_write", role: "admin" });
    const ledger = await world.createService("ledger");
    const gone = await world.createService("old-relay");
    expect((await world.request("DELETE", `/v1/services/${gone.id}`)).status).toBe(204);
    const { incidentId } = await trigger(world, ledger, { summary: "Ledger queue backing up" });
    expect((await world.request("POST", `/v1/incidents/${incidentId}/acknowledge`, { token: bot.token })).status).toBe(
      200,
    );
    expect((await world.request("DELETE", `/v1/api_tokens/${bot.id}`)).status).toBe(200);

    const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const tab = await signedInTab(context, "/audit");
    const { page } = tab;
    const row = (action: string) => page.getByRole("row").filter({ has: page.getByText(action, { exact: true }) });
    await row("api_token.revoke").getByText("ops-bot").waitFor();
    // The acknowledging token's name beside its id, the incident's title linking to its page.
    const acknowledged = row("incident.acknowledge");
    await acknowledged.getByText("ops-bot").waitFor();
    await acknowledged.getByRole("link", { name: "Ledger queue backing up" }).waitFor();
    expect(await acknowledged.getByText(`${incidentId.slice(0, 10)}…`).count()).toBe(1);
    await row("service.delete").getByText("deleted service").waitFor();
    await row("service.create").getByRole("link", { name: "ledger", exact: true }).waitFor();
    await row("tenant.create").getByText("Acme").waitFor();
    // Every id is one click from the clipboard, whole.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: served.base });
    await acknowledged.getByRole("button", { name: `Copy incident id ${incidentId}` }).click();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(incidentId);
    // It says "Copied" in a status beside it for a moment, and keeps its name meanwhile: the
    // name still begins with what the button shows (axe's label-content-name-mismatch).
    await acknowledged.getByRole("status").filter({ hasText: "Copied" }).waitFor();
    expect(await acknowledged.getByRole("button", { name: `Copy incident id ${incidentId}` }).count()).toBe(1);
    const named = await new AxeBuilder({ page })
      .options({ rules: { "label-content-name-mismatch": { enabled: true } } })
      .withRules(["label-content-name-mismatch"])
      .analyze();
    expect(named.violations.map((v) => v.nodes.map((n) => n.target.join(" ")))).toEqual([]);
    await check(tab, "audit-names");
    await context.close();
  }, 60_000);

  for (const scheme of ["light", "dark"] as const) {
    test(`the ${scheme} theme follows the system and stays readable`, async () => {
      const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme });
      const tab = await signedInTab(context);
      const { page } = tab;
      await page.getByRole("heading", { name: "Acme" }).waitFor();
      const background = await page.evaluate<string>("getComputedStyle(document.documentElement).backgroundColor");
      const [r = 0, g = 0, b = 0] = (background.match(/\d+/g) ?? []).map(Number);
      const luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
      if (scheme === "dark") expect(luminance).toBeLessThan(0.2);
      else expect(luminance).toBeGreaterThan(0.9);
      await check(tab, `theme-${scheme}-overview`);
      for (const [link, heading] of [
        ["Services", "Services"],
        ["API tokens", "API tokens"],
        ["Audit log", "Audit log"],
      ] as const) {
        await page.getByRole("link", { name: link, exact: true }).click();
        await page.getByRole("heading", { name: heading }).waitFor();
        await page.locator(".loading").waitFor({ state: "detached" });
        await expectAccessible(page);
      }
      await check(tab, `theme-${scheme}-audit`);
      await context.close();
    }, 60_000);
  }

  test("at 390 px the navigation folds behind Menu, every link is reachable, nothing overflows sideways", async () => {
    const context = await served.browser.newContext({ viewport: { width: 390, height: 844 } });
    const tab = await signedInTab(context);
    const { page } = tab;
    const menu = page.getByRole("button", { name: "Menu" });
    await menu.waitFor();
    expect(await horizontalOverflow(page)).toBe(0);
    const nav = page.getByRole("navigation", { name: "Console" });
    expect(await nav.isVisible()).toBe(false);
    expect(await menu.getAttribute("aria-expanded")).toBe("false");

    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    for (const name of ["Overview", "Services", "API tokens", "Settings", "Audit log"]) {
      const link = nav.getByRole("link", { name, exact: true });
      expect(await link.isVisible()).toBe(true);
      const box = await link.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    }
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(true);
    await check(tab, "nav-390-open");

    // Choosing a page closes the menu; the tokens table reads as one card per token.
    await nav.getByRole("link", { name: "API tokens", exact: true }).click();
    await page.getByRole("heading", { name: "API tokens" }).waitFor();
    expect(await nav.isVisible()).toBe(false);
    const revoke = page.getByRole("button", { name: /^Revoke / }).first();
    await revoke.waitFor();
    const box = await revoke.boundingBox();
    expect(box && box.x + box.width <= 390).toBe(true);
    expect(await horizontalOverflow(page)).toBe(0);

    // Every page of the menu, and a service's page, fits the phone's width.
    const service = await served.world.createService("phone-sized");
    for (const name of ["Overview", "Services", "Settings", "Audit log"]) {
      await menu.click();
      await nav.getByRole("link", { name, exact: true }).click();
      await page.locator(".loading").waitFor({ state: "detached" });
      expect([name, await horizontalOverflow(page)]).toEqual([name, 0]);
    }
    await page.goto(`${served.base}/console/services/${service.id}`);
    await page.getByRole("heading", { name: "phone-sized" }).waitFor();
    expect(await horizontalOverflow(page)).toBe(0);
    await context.close();
  }, 60_000);
});
