/**
 * The events explorer, the event page and a service page's senders section in a real browser
 * (docs/console.md; SPEC §18, §22): find an event by a word of its payload and open it, with
 * the keyboard alone; narrow by service and type, and to an incident's events; older pages by
 * cursor; a search refused because the deployment turned search off, explained; a refused
 * ingest counted in the service's chart; a copied signing snippet that, run as it is, gets 202. Each page is checked (axe, console errors, foreign
 * requests) and photographed at 1280×800 and 390×844 into test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserContext, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { chromiumPresent, requireChromium } from "../support/browser.ts";
import { check, openTab, type Served, serveConsole, signedPost, signIn, type Tab, tabTo } from "../support/console.ts";
import { sign } from "../support/signing.ts";

const present = chromiumPresent("console events explorer journeys");

let served: Served;
let billing: { id: string; secret: string };
let relay: { id: string; secret: string };
let bulk: { id: string; secret: string };
const ADA = '{"type":"invoice.paid","customer":"cus_4242","email":"Ada@Example.com","amount":4200}';

async function createService(name: string, scheme: "stripe" | "standard_webhooks" = "stripe") {
  const res = await served.world.request("POST", "/v1/services", {
    body: { service_name: name, signature_scheme: scheme },
  });
  expect(res.status).toBe(201);
  return { id: res.body.id as string, secret: res.body.signing_secret as string };
}

async function post(service: { id: string; secret: string }, body: string): Promise<void> {
  expect((await signedPost(served.base, service.id, service.secret, body)).status).toBe(202);
}

beforeAll(async () => {
  requireChromium();
  if (!present) return;
  served = await serveConsole({ env: { INTAKE_EVENT_SEARCH: "true" } });
  // Events get distinct, real receive times (the explorer is newest first).
  served.world.clock.now = () => Date.now();
  billing = await createService("billing");
  relay = await createService("relay", "standard_webhooks");
  bulk = await createService("bulk");
  await post(billing, '{"type":"invoice.created","customer":"cus_1111","amount":100}');
  await post(billing, '{"type":"invoice.paid","customer":"cus_1111","amount":100}');
  await post(billing, ADA);
  for (const body of [
    '{"type":"invoice.paid","customer":"cus_7777"}',
    '{"type":"charge.failed","customer":"cus_7777"}',
  ]) {
    const id = `msg_${crypto.randomUUID()}`;
    const at = new Date();
    const res = await fetch(`${served.base}/v1/ingest/${relay.id}`, {
      method: "POST",
      headers: {
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(relay.secret).sign(id, at, body),
      },
      body,
    });
    expect(res.status).toBe(202);
  }
  for (let n = 0; n < 55; n++) await post(bulk, `{"type":"tick","n":${n}}`);
}, 60_000);

afterAll(async () => {
  await served?.close();
});

async function signedInTab(path: string): Promise<{ context: BrowserContext; tab: Tab; page: Page }> {
  const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: served.base });
  const tab = await openTab(context, served.base);
  await signIn(tab.page, served.base, served.world.ownerToken, path);
  return { context, tab, page: tab.page };
}

/** The page as `check` saw it, plus: at 390×844 nothing sticks out sideways. */
async function checkPage(tab: Tab, name: string): Promise<void> {
  await check(tab, name);
  const before = tab.page.viewportSize() ?? { width: 1280, height: 800 };
  await tab.page.setViewportSize({ width: 390, height: 844 });
  expect(await tab.page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
  await tab.page.setViewportSize(before);
}

/** What the page copied (the test's context may read the clipboard). */
function clipboard(page: Page): Promise<string> {
  return page.evaluate<string>("navigator.clipboard.readText()");
}

/** The explorer's rows once its page has loaded: the id cells' texts. */
async function rowIds(page: Page): Promise<string[]> {
  await page
    .getByRole("status")
    .filter({ hasText: /newest first\.$/ })
    .or(page.getByText(/^No (event matches|older events|events yet)/))
    .first()
    .waitFor();
  return page.locator("table.event-rows a.event-id").allTextContents();
}

describe.if(present)("the events explorer", () => {
  test("find an event by a word of its payload (an e-mail in another case) and open it: pretty payload, copy id and payload, its service", async () => {
    const { context, tab, page } = await signedInTab("");
    await page.getByRole("link", { name: "Events" }).click();
    await page.getByRole("heading", { name: "Events", level: 1 }).waitFor();
    expect((await rowIds(page)).length).toBe(50);
    await checkPage(tab, "events");

    // Keyboard alone: to the search field, a word, Enter.
    await tabTo(page, page.getByLabel("Search payloads"));
    await page.keyboard.type("ada@EXAMPLE.com");
    await page.keyboard.press("Enter");
    await page.waitForURL(/q=ada%40EXAMPLE.com/);
    const found = await rowIds(page);
    expect(found).toHaveLength(1);
    const row = page.locator("table.event-rows tbody tr");
    await expect(row.locator("td[data-label=Service]").textContent()).resolves.toBe("billing");
    await expect(row.locator("td[data-label=Type]").textContent()).resolves.toBe("invoice.paid");
    await expect(row.locator("td.first-line").textContent()).resolves.toBe(ADA);
    await checkPage(tab, "events-search");

    // Keyboard alone again: to the event's link, Enter opens its page.
    await tabTo(page, page.getByRole("link", { name: found[0] }));
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "invoice.paid", level: 1 }).waitFor();
    expect(page.url()).toEndWith(`/console/events/${found[0]}`);
    const payload = await page.locator("pre.payload").textContent();
    expect(payload).toBe(JSON.stringify(JSON.parse(ADA), null, 2));
    await checkPage(tab, "event");
    await page.emulateMedia({ colorScheme: "dark" });
    await checkPage(tab, "event-dark");
    await page.emulateMedia({ colorScheme: "light" });
    await page.getByRole("button", { name: `Copy event id ${found[0]}` }).click();
    expect(await clipboard(page)).toBe(found[0] as string);
    await page.getByRole("button", { name: "Copy payload" }).click();
    expect(await clipboard(page)).toBe(ADA);

    // Back returns to the same search; the service link opens the service.
    await page.goBack();
    expect(await rowIds(page)).toEqual(found);
    expect(await page.getByLabel("Search payloads").inputValue()).toBe("ada@EXAMPLE.com");
    await page.goForward();
    await page.getByRole("link", { name: "billing" }).click();
    await page.getByRole("heading", { name: "billing", level: 1 }).waitFor();
    expect(page.url()).toEndWith(`/console/services/${billing.id}`);
    await context.close();
  }, 60_000);

  test("narrow by service and type; every word of q must match (AND)", async () => {
    const { context, tab, page } = await signedInTab("/events");
    await rowIds(page);
    await page.getByLabel("Service").selectOption({ label: "relay" });
    await page.getByLabel("Type").fill("invoice.paid");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(new RegExp(`service_id=${relay.id}`));
    expect(await rowIds(page)).toHaveLength(1);
    expect(await page.locator("td[data-label=Service]").allTextContents()).toEqual(["relay"]);
    expect(await page.locator("td[data-label=Type]").allTextContents()).toEqual(["invoice.paid"]);
    await checkPage(tab, "events-filtered");

    await page.getByLabel("Service").selectOption({ label: "All services" });
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => !url.search.includes("service_id"));
    expect(await rowIds(page)).toHaveLength(3);
    expect(new Set(await page.locator("td[data-label=Type]").allTextContents())).toEqual(new Set(["invoice.paid"]));

    await page.getByRole("button", { name: "Clear" }).click();
    await page.getByLabel("Search payloads").fill("invoice.pa cus_1111");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForURL(/q=/);
    await rowIds(page);
    expect(await page.locator("td.first-line").allTextContents()).toEqual([
      '{"type":"invoice.paid","customer":"cus_1111","amount":100}',
    ]);

    // A word under 3 characters: the server's reason, on the field it names.
    await page.getByLabel("Search payloads").fill("cu");
    await page.getByLabel("Search payloads").press("Enter");
    await page.getByRole("alert").getByText("every term must be at least 3 characters").waitFor();
    await context.close();
  }, 60_000);

  test("an alert event's page links to its incident; the explorer narrows to that incident's events", async () => {
    const trigger = (summary: string) =>
      JSON.stringify({
        event_action: "trigger",
        dedup_key: "disk-full",
        payload: { summary, source: "db-1", severity: "critical" },
      });
    const first = await signedPost(served.base, billing.id, billing.secret, trigger("Disk full on db-1"));
    expect(first.status).toBe(202);
    const incidentId = ((await first.json()) as { incident_id: string }).incident_id;
    expect(incidentId).toMatch(/^inc_[0-9a-f]{32}$/);
    await post(billing, trigger("Disk still full on db-1"));

    const { context, page } = await signedInTab("/events");
    await rowIds(page);
    await page.getByLabel("Incident").fill(incidentId);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(new RegExp(`incident_id=${incidentId}`));
    const ids = await rowIds(page);
    expect(ids).toHaveLength(2);
    await page.getByRole("link", { name: ids[1] }).click();
    const link = page.getByRole("link", { name: incidentId });
    await link.waitFor();
    expect(await link.getAttribute("href")).toBe(`/console/incidents/${incidentId}`);
    expect(await page.locator("pre.payload").textContent()).toContain('"summary": "Disk full on db-1"');
    await context.close();
  }, 60_000);

  test("older pages by cursor, newest first, and back to the newest", async () => {
    const { context, page } = await signedInTab(`/events?service_id=${bulk.id}`);
    expect(await rowIds(page)).toHaveLength(50);
    const first = await page.locator("td.first-line").allTextContents();
    expect(first[0]).toBe('{"type":"tick","n":54}');
    expect(first[49]).toBe('{"type":"tick","n":5}');
    await page.getByRole("link", { name: "Older events" }).click();
    await page.waitForURL(/cursor=/);
    await page.getByText(/5 events \(an older page\)/).waitFor();
    expect(await page.locator("td.first-line").allTextContents()).toEqual(
      [4, 3, 2, 1, 0].map((n) => `{"type":"tick","n":${n}}`),
    );
    expect(await page.getByRole("link", { name: "Older events" }).count()).toBe(0);
    await page.getByRole("link", { name: "Newest events" }).click();
    await page.waitForURL((url) => !url.search.includes("cursor"));
    expect(await page.locator("td.first-line").first().textContent()).toBe('{"type":"tick","n":54}');
    await context.close();
  }, 60_000);

  test("a search refused because the deployment turned search off is explained, and the other filters still serve", async () => {
    const off = await serveConsole();
    try {
      const svc = await off.world.createService("quiet");
      expect((await signedPost(off.base, svc.id, svc.secret, '{"type":"hello"}')).status).toBe(202);
      const context = await off.browser.newContext({ viewport: { width: 1280, height: 800 } });
      const tab = await openTab(context, off.base);
      const { page } = tab;
      await signIn(page, off.base, off.world.ownerToken, "/events?q=hello");
      const alert = page.getByRole("alert");
      await alert.getByText("Searching payloads is turned off on this server.").waitFor();
      await alert.getByText("INTAKE_EVENT_SEARCH=false").waitFor();
      await checkPage(tab, "events-search-off");
      await alert.getByRole("button", { name: "Show the events without the search words" }).click();
      await page.waitForURL((url) => !url.search.includes("q="));
      await page.locator("td.first-line", { hasText: '{"type":"hello"}' }).waitFor();
      await context.close();
    } finally {
      await off.close();
    }
  }, 60_000);
});

describe.if(present)("a service page's senders section", () => {
  test("refused ingests (a wrong signature, a stale timestamp) are counted in the chart by reason; the copied curl snippet gets 202", async () => {
    // A service of its own: the explorer's tests post to the others.
    const payments = await createService("payments");
    for (const n of [1, 2, 3]) await post(payments, `{"type":"charge.succeeded","n":${n}}`);
    const { context, tab, page } = await signedInTab(`/services/${payments.id}`);
    await page.getByRole("heading", { name: "Senders" }).waitFor();
    await page.getByText(`${served.base}/v1/ingest/${payments.id}`, { exact: true }).waitFor();

    // Refusals: the sender sees one 401; the service's owner sees why.
    const body = '{"type":"invoice.paid"}';
    const wrong = await fetch(`${served.base}/v1/ingest/${payments.id}`, {
      method: "POST",
      headers: { "x-service-signature": sign(`${payments.secret}x`, body, Date.now()) },
      body,
    });
    expect(wrong.status).toBe(401);
    const stale = await fetch(`${served.base}/v1/ingest/${payments.id}`, {
      method: "POST",
      headers: { "x-service-signature": sign(payments.secret, body, Date.now() - 3_600_000) },
      body,
    });
    expect(stale.status).toBe(401);
    await served.world.app.domain.statsAggregator.flush();
    await page.getByRole("button", { name: "Refresh" }).click();
    const totals = page.getByRole("list", { name: "Ingest, last 24 hours: totals by outcome" });
    const count = (label: string) => totals.getByRole("listitem").filter({ hasText: label }).locator(".num");
    await count("Refused: wrong signature (401)").waitFor();
    expect(await count("Refused: wrong signature (401)").textContent()).toBe("1");
    expect(await count("Refused: timestamp too old or in the future (401)").textContent()).toBe("1");
    expect(await count("Accepted (202)").textContent()).toBe("3");
    const chart = page.getByRole("img", { name: /^Ingest, last 24 hours: / });
    expect(await chart.getAttribute("aria-label")).toContain("1 Refused: wrong signature (401)");
    await checkPage(tab, "service-senders");
    // The chart's colours and the snippets' panels follow the system's dark theme.
    await page.getByText("Show the code").first().click();
    await page.emulateMedia({ colorScheme: "dark" });
    await checkPage(tab, "service-senders-dark");
    await page.emulateMedia({ colorScheme: "light" });

    await page.getByRole("button", { name: "Last 7 days" }).click();
    await page.getByRole("img", { name: /^Ingest, last 7 days: / }).waitFor();
    const week = page.getByRole("list", { name: "Ingest, last 7 days: totals by outcome" });
    await checkPage(tab, "service-senders-7d");
    expect(
      await week
        .getByRole("listitem")
        .filter({ hasText: "Refused: wrong signature (401)" })
        .locator(".num")
        .textContent(),
    ).toBe("1");

    // The curl snippet, copied from the page and run as it is, with only the secret set.
    await page.getByRole("button", { name: "Copy curl + openssl snippet" }).click();
    const snippet = await clipboard(page);
    expect(snippet).toBe((await page.locator(".snippet pre").first().textContent()) ?? "");
    const proc = Bun.spawn(["bash", "-c", snippet], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", INTAKE_SIGNING_SECRET: payments.secret },
      stdout: "pipe",
    });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(out.trim()).toEndWith("HTTP 202");
    // It arrives in the service's live tail as a compact row linking to its page.
    const pinged = page.locator("td.first-line", { hasText: '"type":"test.ping"' });
    await pinged.waitFor({ timeout: 10_000 });
    await served.world.app.domain.statsAggregator.flush();
    await page.getByRole("button", { name: "Refresh" }).click();
    await week.getByRole("listitem").filter({ hasText: "Accepted (202)" }).filter({ hasText: /4$/ }).waitFor();
    await context.close();
  }, 60_000);
});
