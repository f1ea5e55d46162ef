/**
 * The console in a real browser (Debian's Chromium through playwright-core): the whole first-run
 * journey of docs/console.md, from a setup link to a revoked token signing another tab out.
 * Every page of the journey is also checked for browser console errors, requests to any host
 * but the server, and serious or critical axe-core violations; setup and service creation are
 * done with the keyboard alone. Screenshots at 1280×800 and 390×844 go to test-results/console/
 * (not committed). Without Chromium the suite is skipped with one line, or fails under
 * INTAKE_REQUIRE_SERVICES=1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chromiumPresent, requireChromium } from "../support/browser.ts";
import {
  check,
  openTab as openTabOn,
  signedPost as post,
  type Served,
  serveConsole,
  tabTo,
} from "../support/console.ts";
import type { World } from "../support/harness.ts";

const present = chromiumPresent("console browser journey");

let served: Served;
let world: World;
let base: string;

beforeAll(async () => {
  requireChromium();
  if (!present) return;
  served = await serveConsole();
  ({ world, base } = served);
}, 60_000);

afterAll(async () => {
  await served?.close();
});

const openTab = (context: Parameters<typeof openTabOn>[0]) => openTabOn(context, base);
const signedPost = (serviceId: string, secret: string, payload: string) => post(base, serviceId, secret, payload);

describe.if(present)("the console's first-run journey", () => {
  test("setup link → first token shown once → sign in → service → live event → pause → rotate → read_only tab → revoke signs it out", async () => {
    const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    const owner = await openTab(context);
    const { page } = owner;

    // Setup, keyboard only.
    const { code } = await world.app.domain.onboarding.issueSetupCode({ expiresInSeconds: 600 });
    await page.goto(`${base}/console/setup#code=${code}`);
    await page.getByRole("heading", { name: "Set up Intake" }).waitFor();
    await check(owner, "setup");
    const tenantName = page.getByLabel("Tenant name");
    await tabTo(page, tenantName);
    await page.keyboard.type("Globex");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Your tenant is ready" }).waitFor();
    const ownerToken = (await page.getByLabel("Owner token").textContent())?.trim() ?? "";
    expect(ownerToken).toMatch(/^service_live_[0-9A-Za-z]{43}$/);
    expect(page.url()).not.toContain(code);
    await check(owner, "setup-done");
    await page.getByRole("button", { name: "Sign in with this token" }).click();
    await page.getByRole("heading", { name: "Globex" }).waitFor();
    expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0);
    expect(await context.cookies()).toEqual([]);
    await check(owner, "overview");

    // A service, keyboard only: its secret shown once.
    await page.getByRole("link", { name: "Services" }).click();
    const serviceName = page.getByLabel("New service name");
    await serviceName.waitFor();
    await tabTo(page, serviceName);
    await page.keyboard.type("billing");
    await page.keyboard.press("Enter");
    const secret = (await page.getByLabel("Signing secret of billing").textContent())?.trim() ?? "";
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    await check(owner, "services");
    const href = (await page.getByRole("link", { name: "billing" }).getAttribute("href")) ?? "";
    const serviceId = /\/services\/(svc_[0-9a-f]{32})$/.exec(href)?.[1] as string;
    expect(serviceId).toBeDefined();

    // A service for Standard Webhooks senders (§19): its secret in the form the libraries take.
    await page.getByLabel("Senders sign with").selectOption({ label: "Standard Webhooks / Svix (webhook-*)" });
    await serviceName.fill("relay");
    await page.getByRole("button", { name: "Create service" }).click();
    const relaySecret = (await page.getByLabel("Signing secret of relay").textContent())?.trim() ?? "";
    expect(relaySecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    // The overview's latest events: a signed event arrives live, named by its service.
    await page.getByRole("link", { name: "Overview" }).click();
    await page
      .getByRole("status")
      .getByText(/^Live: new events/)
      .waitFor();
    const latest = page.getByRole("row").filter({ hasText: '{"type":"invoice.created","amount":4200}' });
    expect((await signedPost(serviceId, secret, '{"type":"invoice.created","amount":4200}')).status).toBe(202);
    await latest.getByRole("link", { name: "billing" }).waitFor({ timeout: 10_000 });
    await check(owner, "overview-live");

    // The service page's live tail, whose first stream is cut by the network: it reconnects
    // from its cursor, so an event sent while it was down still arrives, once.
    const streams: { after?: string; serviceId?: string }[] = [];
    const streamPath = "/intake.v1.EventFeedService/StreamFeed";
    page.on("request", (request) => {
      // A Connect stream's request is one enveloped message: 5 bytes of flags and length, then JSON.
      const body = request.postDataBuffer();
      if (new URL(request.url()).pathname === streamPath && body) streams.push(JSON.parse(body.subarray(5).toString()));
    });
    await page.route(`${base}${streamPath}`, (route) => route.abort("connectionreset"), { times: 1 });
    await page.getByRole("link", { name: "Services" }).click();
    await page.getByRole("link", { name: "billing" }).click();
    await page.getByRole("heading", { name: "billing" }).waitFor();
    expect(page.url()).toEndWith(`/services/${serviceId}`);
    await page
      .getByRole("status")
      .getByText(/^Reconnecting/)
      .waitFor();

    // A signed event appears in the live tail without a reload, as one compact row.
    expect((await signedPost(serviceId, secret, '{"type":"invoice.paid","amount":4200}')).status).toBe(202);
    const paidRow = page.locator("td.first-line", { hasText: '{"type":"invoice.paid","amount":4200}' });
    await paidRow.waitFor({ timeout: 10_000 });
    expect(await paidRow.count()).toBe(1);
    expect(streams.length).toBe(2);
    expect(streams[1]).toEqual(streams[0] as object);
    expect(streams[1]).toEqual({ after: expect.any(String), serviceId });
    // The cut itself is the one browser error this step expects.
    owner.errors = owner.errors.filter((e) => !e.includes("net::ERR_CONNECTION_RESET"));
    await check(owner, "service");

    // Pause: the next signed event is refused with 409.
    await page.getByRole("button", { name: "Pause ingestion" }).click();
    await page.getByRole("button", { name: "Resume ingestion" }).waitFor();
    expect((await signedPost(serviceId, secret, '{"type":"late"}')).status).toBe(409);

    // The service's own ingest rate limit: 1 per minute, then 429 (it is decided before 409).
    await page.getByLabel("Requests").fill("1");
    await page.getByLabel("per seconds").fill("60");
    await page.getByRole("button", { name: "Set rate limit" }).click();
    await page.getByText("1 per 60 s (this service's own)").waitFor();
    expect((await signedPost(serviceId, secret, '{"type":"late"}')).status).toBe(409);
    expect((await signedPost(serviceId, secret, '{"type":"later"}')).status).toBe(429);
    await page.getByRole("button", { name: "Use the default" }).click();
    await page.getByText("the deployment's default").waitFor();

    // Rotate, once confirmed: the new secret is shown once, with the old one's expiry.
    await page.getByRole("button", { name: "Rotate signing secret" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate secret" }).click();
    const rotated = (await page.getByLabel("New signing secret").textContent())?.trim() ?? "";
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByText("The previous secret keeps verifying until").waitFor();

    // A read_only token, minted here and used in another tab.
    await page.getByRole("link", { name: "API tokens" }).click();
    await page.getByLabel("Name").fill("dashboard");
    await page.getByLabel("Scope").selectOption("read_only");
    await page.getByRole("button", { name: "Create token" }).click();
    const readOnly = (await page.getByLabel("Token dashboard").textContent())?.trim() ?? "";
    expect(readOnly).toMatch(/^service_live_/);
    await check(owner, "tokens");

    const viewer = await openTab(context);
    await viewer.page.goto(`${base}/console`);
    await viewer.page.getByLabel("API token").fill(readOnly);
    await viewer.page.getByRole("button", { name: "Sign in" }).click();
    await viewer.page.getByRole("heading", { name: "Globex" }).waitFor();
    // The overview opens with the newest events already there (its first fill), newest first.
    await viewer.page.locator("td.first-line", { hasText: '"type":"invoice.paid"' }).waitFor();
    const order = await viewer.page.locator("td.first-line").allTextContents();
    expect(order.findIndex((t) => t.includes("invoice.paid"))).toBeLessThan(
      order.findIndex((t) => t.includes("invoice.created")),
    );
    await viewer.page.getByRole("link", { name: "Services" }).click();
    const create = viewer.page.getByRole("button", { name: "Create service" });
    await create.waitFor();
    await viewer.page.getByText("This token is read_only: it can look, not change.").first().waitFor();
    expect(await create.isDisabled()).toBe(true);
    await viewer.page.getByRole("link", { name: "billing" }).click();
    expect(await viewer.page.getByRole("button", { name: "Resume ingestion" }).isDisabled()).toBe(true);
    await check(viewer, "read-only");

    // Revoked from the owner's tab: the other tab, which makes no call of its own now, is signed
    // out when the server ends its live tail's stream with 401, saying why.
    await page.getByRole("button", { name: "Revoke dashboard" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke token" }).click();
    // Gone from the list of active tokens.
    await page.getByRole("button", { name: "Revoke dashboard" }).waitFor({ state: "detached" });
    await viewer.page.getByRole("heading", { name: "Sign in to Intake" }).waitFor({ timeout: 10_000 });
    await viewer.page.getByText("Signed out").waitFor();
    expect(await viewer.page.evaluate(() => sessionStorage.length)).toBe(0);
    await check(viewer, "signed-out");

    // The owner's audit log names every change of the journey, the pause with what it changed.
    await page.getByRole("link", { name: "Audit log" }).click();
    const actionCells = page.locator("td code.action");
    await actionCells.filter({ hasText: "api_token.revoke" }).first().waitFor();
    for (const action of ["tenant.create", "service.create", "service.update", "service.secret_rotate"]) {
      expect(await actionCells.filter({ hasText: action }).count()).toBeGreaterThan(0);
    }
    await page.getByText("is_monitored").first().waitFor();
    await check(owner, "audit");

    await context.close();
  }, 120_000);
});
