/**
 * Scenario 6: GET /v1/services, the page after 10,000 rows against page 1.
 */
import type { Harness } from "../lib/harness.ts";
import { fmtMs, fmtRatio, fmtRps, pairedRatio, type Series, summarize } from "../lib/report.ts";
import { cursorAfter } from "../lib/seed.ts";
import type { ReadProcesses } from "./read-processes.ts";

export async function run(h: Harness, read: ReadProcesses): Promise<void> {
  const { settings, rows, readScenario, bearerGet, readPlan, interleave } = h;
  const { intake, readPids, boot, idsNewestFirst } = read;
  await readScenario(6, `List pagination: page 1 vs page after ${settings.pageDepth} rows`, readPids, async () => {
    const depth = settings.pageDepth;
    const cursor = cursorAfter(idsNewestFirst, depth, boot.tenantId);
    const shallowUrl = `${intake.url}/v1/services?limit=20`;
    const deepUrl = `${intake.url}/v1/services?limit=20&cursor=${cursor}`;
    // The computed cursor must land where walking would: the page starts at row depth+1.
    const res = await fetch(deepUrl, { headers: { authorization: `Bearer ${boot.token}` } });
    const page = (await res.json()) as { data?: Array<{ id: string }> };
    const expectedFirst = `svc_${idsNewestFirst[depth]}`;
    if (res.status !== 200 || page.data?.length !== 20 || page.data[0]?.id !== expectedFirst) {
      throw new Error(`deep page is not rows ${depth + 1}..${depth + 20}: ${res.status} ${page.data?.[0]?.id}`);
    }
    const [shallow, deep] = await interleave(
      6,
      [
        bearerGet("page 1 (limit 20)", shallowUrl, boot.token),
        bearerGet(`page after ${depth} rows (limit 20)`, deepUrl, boot.token),
      ],
      readPlan,
    );
    const s = summarize(shallow as Series);
    const d = summarize(deep as Series);
    const cost = pairedRatio(shallow as Series, deep as Series);
    rows.push({
      scenario: 6,
      title: `GET /v1/services page after ${depth.toLocaleString("en-US")} rows vs page 1`,
      goal: "cost ratio ≤ 1.2",
      measured: `${fmtRatio(cost)} (${fmtRps(d.rps)} vs ${fmtRps(s.rps)} req/s; p50 ${fmtMs(d.p50Us)} vs ${fmtMs(s.p50Us)} ms)`,
      status: cost <= 1.2 ? "met" : "missed",
    });
  });
}
