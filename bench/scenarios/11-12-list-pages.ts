/**
 * Scenarios 11 and 12: the services page and the events page against GET /v1/tenant on the same
 * process, in one interleave (they share their reference, measured once).
 */
import type { Harness } from "../lib/harness.ts";
import { bootstrap, createService } from "../lib/intake.ts";
import { eventBody, signatureHeader } from "../lib/pool.ts";
import { fmtMs, fmtRatio, fmtRps, pairedRatio, type Series, summarize } from "../lib/report.ts";

export async function run(h: Harness): Promise<void> {
  const {
    wanted,
    rows,
    readScenario,
    bearerGet,
    readPlan,
    interleave,
    ratioRow,
    expectStatus,
    spec,
    start,
    stopIntake,
  } = h;
  if ([11, 12].some(wanted)) {
    const listSpec = spec("lists");
    const boot = await bootstrap(listSpec);
    const intake = await start(listSpec);
    const get = (label: string, path: string) => bearerGet(label, `${intake.url}${path}`, boot.token);
    try {
      // A tenant as a new user would have it: 40 services, one of them with 100 events of 1 KiB.
      const created = [];
      for (let i = 0; i < 40; i++) created.push(await createService(intake.url, boot.token, `list-service-${i}`));
      const target = created[0];
      if (!target) throw new Error("no service created");
      const now = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 100; i++) {
        const body = eventBody(i);
        const signature = signatureHeader(target.secret, body, now);
        const init = {
          method: "POST",
          headers: { "content-type": "application/json", "x-service-signature": signature },
          body,
        };
        await expectStatus(`${intake.url}/v1/ingest/${target.id}`, init, 202, "seeding an event");
      }
      const authInit = { headers: { authorization: `Bearer ${boot.token}` } };
      const servicesPath = "/v1/services?limit=20";
      const eventsPath = `/v1/services/${target.id}/events?limit=100`;
      await expectStatus(`${intake.url}${servicesPath}`, authInit, 200, "services page");
      await expectStatus(`${intake.url}${eventsPath}`, authInit, 200, "events page");

      // One interleave for both pages: they share their reference (GET /v1/tenant on the same
      // process), measured once instead of once per page (the whole table must stay under 15 minutes).
      const n = wanted(11) ? 11 : 12;
      const title = wanted(11) && wanted(12) ? "List pages: 20 services (11), 100 events of 1 KiB (12)" : "A list page";
      await readScenario(n, `${title} vs authenticated GET /v1/tenant`, [intake.pid], async () => {
        const targets = [get("Intake GET /v1/tenant", "/v1/tenant")];
        if (wanted(11)) targets.push(get("Intake GET /v1/services?limit=20", servicesPath));
        if (wanted(12)) targets.push(get("Intake GET /v1/services/{id}/events?limit=100", eventsPath));
        const [tenant, ...pages] = (await interleave(n, targets, readPlan)) as Series[];
        if (!tenant) throw new Error("no GET /v1/tenant series");
        if (wanted(11)) {
          const page = pages.shift() as Series;
          const title = "GET /v1/services?limit=20 (40 services) vs GET /v1/tenant, bearer (32 conns)";
          rows.push(ratioRow(11, title, 0.5, page, tenant));
        }
        if (wanted(12)) {
          const page = pages.shift() as Series;
          page.scenario = 12;
          const p = summarize(page);
          rows.push({
            scenario: 12,
            title: "GET /v1/services/{id}/events?limit=100 (1 KiB payloads) vs GET /v1/tenant (32 conns)",
            goal: "(reported)",
            measured: `${fmtRps(p.rps)} req/s, ${fmtRps(p.rps * 100)} events/s, p99 ${fmtMs(p.p99Us)} ms; ${fmtRatio(pairedRatio(page, tenant))} of GET /v1/tenant`,
            status: "reported",
          });
        }
      });
    } finally {
      await stopIntake(intake);
    }
  }
}
