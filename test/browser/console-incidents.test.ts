/**
 * The console's incident pages in a real browser (Debian's Chromium through playwright-core),
 * SPEC §22 and docs/console.md "Incidents": acknowledge then resolve an incident after
 * confirming, a cancelled confirmation that changes nothing, a new trigger appearing in the list
 * live, the incident's timeline (its alert events and the changes made by hand), the overview's
 * open incidents by severity, and a service's open incidents and auto-resolve setting. Each page
 * is checked for browser console errors, foreign requests and serious or critical axe
 * violations, with screenshots at 1280×800 and 390×844 in test-results/console/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { chromiumPresent, requireChromium } from "../support/browser.ts";
import { check, openTab, type Served, serveConsole, signIn, type Tab } from "../support/console.ts";
import type { World } from "../support/harness.ts";
import { type Sender, sendAlert, trigger } from "../support/incidents.ts";

const present = chromiumPresent("console incidents journey");

let served: Served;
let world: World;

beforeAll(async () => {
  requireChromium();
  if (!present) return;
  served = await serveConsole();
  world = served.world;
}, 60_000);

afterAll(async () => {
  await served?.close();
});

/** A tab of its own browser context, signed in with `token`, on the overview. */
async function signedInTab(token: string): Promise<Tab> {
  const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: served.base });
  const tab = await openTab(context, served.base);
  await signIn(tab.page, served.base, token);
  await tab.page.getByRole("heading", { name: "Acme" }).waitFor();
  return tab;
}

/** The page is no wider than the window at 1280 and 390 px: nothing pushes it sideways. */
async function expectNoOverflow(page: Page): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    const wide = await page.evaluate<number>(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect({ width, overflow: wide }).toEqual({ width, overflow: 0 });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function incident(id: string) {
  const res = await world.request("GET", `/v1/incidents/${id}`);
  expect(res.status).toBe(200);
  return res.body as { status: string; acknowledged_by: unknown; resolved_by: unknown };
}

async function goTo(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole("navigation").getByRole("link", { name: link, exact: true }).click();
  await page.getByRole("heading", { name: heading, exact: true }).waitFor();
}

describe.if(present)("the console's incident pages", () => {
  test("with nothing open, the overview's incidents part holds its place: nothing below it moves when the counts arrive, at 1280 and 390 px", async () => {
    const tab = await signedInTab(world.ownerToken);
    const { page } = tab;
    const moved: string[] = [];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      // The open incidents are read once the change stream is open: hold that read, look, let it go.
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route("**/intake.v1.IncidentService/ListIncidents", async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(`${served.base}/console`);
      const below = page.getByRole("heading", { name: "Latest events" });
      await below.waitFor();
      await page.getByRole("heading", { name: "Acme" }).waitFor();
      const before = (await below.boundingBox())?.y;
      release();
      await page.getByText("Nothing open: no alert needs anyone now.").waitFor();
      await page.getByText(/^Live: incident changes/).waitFor();
      const after = (await below.boundingBox())?.y;
      if (before !== after) moved.push(`at ${width}px from ${before} to ${after}`);
      await page.unroute("**/intake.v1.IncidentService/ListIncidents");
    }
    expect(moved).toEqual([]);
    await tab.page.context().close();
  }, 60_000);

  test("acknowledge then resolve after confirming, a cancel changes nothing, a new trigger appears live; the timeline, the overview's counts and the service's auto-resolve", async () => {
    const billing: Sender = await world.createService("billing");
    const disk = await trigger(world, billing, {
      dedup_key: "db-1/disk",
      summary: "Disk full on db-1",
      source: "db-1",
      severity: "critical",
    });
    await trigger(world, billing, { dedup_key: "db-1/disk", summary: "Disk full on db-1", severity: "critical" });
    const queue = await trigger(world, billing, { dedup_key: "queue", summary: "Queue backlog", severity: "warning" });

    const tab = await signedInTab(world.ownerToken);
    const { page } = tab;
    // The overview: open incidents by severity, each count a link to that filtered list.
    await page.getByRole("link", { name: "1 critical" }).waitFor();
    await page.getByRole("link", { name: "1 warning" }).waitFor();
    await check(tab, "overview-incidents");

    await goTo(page, "Incidents", "Incidents");
    const open = page.getByRole("table", { name: "Open incidents" });
    const diskRow = open.getByRole("row").filter({ hasText: "Disk full on db-1" });
    await diskRow.waitFor();
    await expect(diskRow.getByRole("cell", { name: "2", exact: true }).count()).resolves.toBe(1);
    await page
      .getByRole("status")
      .getByText(/^Live:/)
      .waitFor();
    await check(tab, "incidents");

    // Cancel once: the dialog closes and nothing changes, in the page or on the server.
    await diskRow.getByRole("button", { name: "Acknowledge" }).click();
    const ackDialog = page.getByRole("dialog", { name: "Acknowledge “Disk full on db-1”?" });
    await ackDialog.waitFor();
    await check(tab, "incidents-confirm");
    await ackDialog.getByRole("button", { name: "Cancel" }).click();
    await ackDialog.waitFor({ state: "hidden" });
    expect((await incident(disk.incidentId)).status).toBe("triggered");
    expect(await diskRow.getByText("triggered").count()).toBe(1);
    const audited = await world.request("GET", `/v1/audit_events?target_id=${disk.incidentId}`);
    expect(audited.body.data).toEqual([]);

    // Acknowledge after confirming (a minute later, so the timeline's moments differ).
    world.clock.advance(60_000);
    await diskRow.getByRole("button", { name: "Acknowledge" }).click();
    await ackDialog.getByRole("button", { name: "Acknowledge" }).click();
    await diskRow.getByText("acknowledged").waitFor();
    expect(await incident(disk.incidentId)).toMatchObject({
      status: "acknowledged",
      acknowledged_by: { type: "api_token", id: world.ownerTokenId },
    });

    // Resolve after confirming: it leaves the open list for the resolved one.
    world.clock.advance(60_000);
    await diskRow.getByRole("button", { name: "Resolve" }).click();
    const resolveDialog = page.getByRole("dialog", { name: "Resolve “Disk full on db-1”?" });
    await resolveDialog.getByRole("button", { name: "Resolve incident" }).click();
    const resolved = page.getByRole("table", { name: "Resolved incidents" });
    await resolved.getByRole("row").filter({ hasText: "Disk full on db-1" }).waitFor();
    expect(await open.getByText("Disk full on db-1").count()).toBe(0);
    expect(await incident(disk.incidentId)).toMatchObject({
      status: "resolved",
      resolved_by: { type: "api_token", id: world.ownerTokenId },
    });

    // A new trigger appears live, without a reload.
    await trigger(world, billing, { dedup_key: "tls", summary: "Certificate expires in 3 days", severity: "error" });
    await open.getByRole("row").filter({ hasText: "Certificate expires in 3 days" }).waitFor({ timeout: 10_000 });
    // So does a change made elsewhere: the queue incident acknowledged by its sender.
    await sendAlert(world, billing, { event_action: "acknowledge", dedup_key: "queue" });
    await open.getByRole("row").filter({ hasText: "Queue backlog" }).getByText("acknowledged").waitFor();
    await check(tab, "incidents-live");
    await expectNoOverflow(page);
    // The badges and actions stay readable in the dark theme (axe checks their contrast).
    await page.emulateMedia({ colorScheme: "dark" });
    await check(tab, "incidents-dark");
    await page.emulateMedia({ colorScheme: "light" });

    // The filters narrow the list and stay in the URL.
    await page.getByLabel("Severity").selectOption("warning");
    await open.getByRole("row").filter({ hasText: "Queue backlog" }).waitFor();
    expect(await open.getByRole("row").filter({ hasText: "Certificate expires" }).count()).toBe(0);
    expect(await page.getByRole("table", { name: "Resolved incidents" }).count()).toBe(0);
    expect(new URL(page.url()).searchParams.get("severity")).toBe("warning");
    await page.getByLabel("Severity").selectOption("");

    // The incident page: its timeline holds both triggers and the two changes made by hand.
    await resolved.getByRole("link", { name: "Disk full on db-1" }).click();
    await page.getByRole("heading", { name: "Disk full on db-1" }).waitFor();
    expect(page.url()).toEndWith(`/console/incidents/${disk.incidentId}`);
    const timeline = page.locator("ol.timeline > li");
    await timeline.nth(3).waitFor();
    expect(await timeline.allInnerTexts()).toEqual([
      expect.stringMatching(/Trigger — opened the incident[\s\S]*Disk full on db-1/),
      expect.stringMatching(/Trigger[\s\S]*alert event evt_/),
      expect.stringMatching(/Acknowledged by hand[\s\S]*by token/),
      expect.stringMatching(/Resolved by hand[\s\S]*by token/),
    ]);
    await check(tab, "incident");
    await expectNoOverflow(page);
    await page.emulateMedia({ colorScheme: "dark" });
    await check(tab, "incident-dark");
    await page.emulateMedia({ colorScheme: "light" });

    // An id that is not an incident of this tenant: the not-found page, with the way back.
    await page.goto(`${served.base}/console/incidents/inc_${"0".repeat(32)}`);
    await page.getByRole("heading", { name: "Incident not found" }).waitFor();
    await page.getByRole("link", { name: "See every incident" }).click();
    await page.getByRole("heading", { name: "Incidents", exact: true }).waitFor();

    // An open incident's page takes a trigger that joins it live: a new timeline entry, a new count.
    await open.getByRole("link", { name: "Queue backlog" }).click();
    await page.getByRole("heading", { name: "Queue backlog" }).waitFor();
    await timeline.nth(1).waitFor();
    expect(await timeline.count()).toBe(2);
    await page
      .getByRole("status")
      .getByText(/^Live:/)
      .first()
      .waitFor();
    await trigger(world, billing, { dedup_key: "queue", summary: "Queue backlog", severity: "critical" });
    await timeline.nth(2).waitFor({ timeout: 10_000 });
    expect(await timeline.nth(2).textContent()).toMatch(/Trigger[\s\S]*critical/);
    await page.locator("dd").filter({ hasText: /^3$/ }).waitFor();
    await page.locator(".incident-badges").getByText("critical").waitFor();
    await goTo(page, "Incidents", "Incidents");

    // The overview's counts followed: one critical resolved, the queue raised to critical, an error opened.
    await goTo(page, "Overview", "Acme");
    await page.getByRole("link", { name: "1 critical" }).waitFor();
    await page.getByRole("link", { name: "0 warning" }).waitFor();
    await page.getByRole("link", { name: "1 error" }).waitFor();

    // The service page: its open incidents and its auto-resolve.
    await goTo(page, "Services", "Services");
    await page.getByRole("link", { name: "billing" }).click();
    await page.getByRole("heading", { name: "billing" }).waitFor();
    const serviceOpen = page.getByRole("table", { name: "Open incidents of billing" });
    await serviceOpen.getByRole("row").filter({ hasText: "Queue backlog" }).waitFor();
    await page.getByText("Never", { exact: true }).waitFor();
    await page.getByLabel("Resolve after").fill("30");
    await page.getByLabel("Unit").selectOption("minutes");
    await page.getByRole("button", { name: "Set auto-resolve" }).click();
    await page.getByText("30 minutes", { exact: true }).waitFor();
    const svc = await world.request("GET", `/v1/services/${billing.id}`);
    expect(svc.body.incident_auto_resolve_seconds).toBe(1800);
    await check(tab, "service-incidents");
    await expectNoOverflow(page);
    await page.getByRole("button", { name: "Never auto-resolve" }).click();
    await page.getByText("Never", { exact: true }).waitFor();
    expect((await world.request("GET", `/v1/services/${billing.id}`)).body.incident_auto_resolve_seconds).toBeNull();
    expect(queue.incidentId).toMatch(/^inc_/);

    await page.context().close();
  }, 120_000);

  test("a change stream cut by the network reconnects, and a trigger sent while it was down appears, once", async () => {
    const sender: Sender = await world.createService("pager");
    const tab = await signedInTab(world.ownerToken);
    const { page } = tab;
    const streams: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname === "/v1/incidents/stream") streams.push(url.search);
    });
    await page.route(`${served.base}/v1/incidents/stream?*`, (route) => route.abort("connectionreset"), { times: 1 });
    await goTo(page, "Incidents", "Incidents");
    await page
      .getByRole("status")
      .getByText(/^Reconnecting/)
      .waitFor();
    await trigger(world, sender, { dedup_key: "paging", summary: "Pager gateway unreachable", severity: "critical" });
    const rows = page
      .getByRole("table", { name: "Open incidents" })
      .getByRole("row")
      .filter({ hasText: "Pager gateway" });
    await rows.first().waitFor({ timeout: 10_000 });
    await page
      .getByRole("status")
      .getByText(/^Live:/)
      .waitFor();
    expect(await rows.count()).toBe(1);
    expect(streams).toEqual(["?start=latest", "?start=latest"]);
    // The cut itself is the one browser error this step expects.
    tab.errors = tab.errors.filter((e) => !e.includes("net::ERR_CONNECTION_RESET"));
    await check(tab, "incidents-reconnected");
    await page.context().close();
  }, 60_000);

  test("a read_only token sees the actions disabled with the reason; revoked, its tab on the incidents page is signed out by the change stream", async () => {
    const sender: Sender = await world.createService("relay");
    await trigger(world, sender, { dedup_key: "cpu", summary: "CPU at 100% on web-2", severity: "error" });
    const viewer = await world.mint({ name: "wallboard", scope: "read_only", role: "member" });
    const tab = await signedInTab(viewer.token);
    const { page } = tab;
    await goTo(page, "Incidents", "Incidents");
    const row = page.getByRole("table", { name: "Open incidents" }).getByRole("row").filter({ hasText: "CPU at 100%" });
    await row.waitFor();
    expect(await row.getByRole("button", { name: "Acknowledge" }).isDisabled()).toBe(true);
    expect(await row.getByRole("button", { name: "Resolve" }).isDisabled()).toBe(true);
    await page.getByText("This token is read_only: it can look, not change.").first().waitFor();
    await page
      .getByRole("status")
      .getByText(/^Live:/)
      .waitFor();
    await check(tab, "incidents-read-only");

    // Acknowledged by another token: the row follows. A member may not read the audit log, so
    // the incident's timeline takes that change from the incident's own record, and says so.
    const cpu = (await world.request("GET", "/v1/incidents?status=open")).body.data.find(
      (i: { title: string }) => i.title === "CPU at 100% on web-2",
    );
    world.clock.advance(60_000);
    expect((await world.request("POST", `/v1/incidents/${cpu.id}/acknowledge`)).status).toBe(200);
    await row.getByText("acknowledged").waitFor();
    await row.getByRole("link", { name: "CPU at 100% on web-2" }).click();
    await page.getByText("this token may not read the audit log").waitFor();
    const timeline = page.locator("ol.timeline > li");
    await timeline.nth(1).waitFor();
    expect(await timeline.nth(1).textContent()).toMatch(/Acknowledged by hand[\s\S]*by token bootstrap/);
    await check(tab, "incident-member");
    await goTo(page, "Incidents", "Incidents");
    await row.waitFor();

    // Its only open call is the change stream: the server ends it, and the tab signs out saying why.
    expect((await world.request("DELETE", `/v1/api_tokens/${viewer.id}`)).status).toBe(200);
    await page.getByRole("heading", { name: "Sign in to Intake" }).waitFor({ timeout: 10_000 });
    await page.getByText("Signed out").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.context().close();
  }, 60_000);
});
