/**
 * Scenario 2: the authenticated GET /v1/tenant (warm token cache) against the bare GET and the
 * hand-written floor, and the costs of metrics and of rate limits configured but unspent.
 */
import type { Harness } from "../lib/harness.ts";
import { fmtMs, fmtRatio, fmtRps, pairedRatio, type Series, summarize } from "../lib/report.ts";
import type { ReadProcesses } from "./read-processes.ts";
import { tracingRows } from "./tracing-rows.ts";

export async function run(h: Harness, read: ReadProcesses): Promise<void> {
  const {
    rows,

    unpinned,
    readScenario,
    bearerGet,
    readPlan,
    pairPlan,
    interleave,
    sideBySide,

    beside,
    againstFloor,
    besideRow,
    expectStatus,
  } = h;
  const { baseline, floorBeside, intake, metricsOff, limited, floorInIntake, readPids, boot } = read;
  await readScenario(2, "Authenticated GET /v1/tenant (warm cache) vs bare GET", readPids, async () => {
    if (!baseline || !floorBeside) throw new Error("no baseline");
    await expectStatus(
      `${intake.url}/v1/tenant`,
      { headers: { authorization: `Bearer ${boot.token}` } },
      200,
      "tenant",
    );
    if (!metricsOff) throw new Error("no INTAKE_METRICS=false process");
    if (!limited) throw new Error("no INTAKE_RATE_LIMIT_API process");
    const FLOOR = "floor: bare GET + bearer HMAC + lookup + X-Request-Id";
    const TENANT = "Intake GET /v1/tenant";
    const floorUrl = `${baseline.url}/floor/v1/tenant`;
    const tenantUrl = `${intake.url}/v1/tenant`;
    // One after the other: each against the bare GET, and Intake's p99 under the load alone,
    // unpinned (see `unpinned`); the side-by-side goals below run pinned.
    const series = await unpinned(readPids, () =>
      interleave(
        2,
        [
          // The same request bytes (the baseline ignores the header).
          bearerGet("baseline GET", `${baseline.url}/v1/tenant`, boot.token),
          // The least work the contract requires, hand-written (bench/baseline.ts).
          bearerGet(FLOOR, floorUrl, boot.token),
          ...(floorInIntake
            ? [
                bearerGet(
                  "the same floor, served from a process running Intake's app",
                  `${floorInIntake.url}/floor/v1/tenant`,
                  boot.token,
                ),
              ]
            : []),
          bearerGet(TENANT, tenantUrl, boot.token),
        ],
        readPlan,
      ),
    );
    const [base, floor] = series as [Series, Series];
    const inIntake = floorInIntake ? series[2] : undefined;
    const tenant = series.at(-1) as Series;
    // Side by side: the goals that compare Intake with its floor or with a variant of itself,
    // and the limits goal's own floor (the floor answering the two RateLimit fields).
    const [[besideFloor, floorBesideIntake], [besideOff, offBeside], [limitedBeside, besideLimited], [fields, plain]] =
      (await sideBySide(
        2,
        [
          [
            bearerGet(`${TENANT}, beside the floor`, tenantUrl, boot.token),
            bearerGet(`${FLOOR}, beside Intake`, floorUrl, boot.token),
          ],
          [
            bearerGet(`${TENANT}, beside metrics off`, tenantUrl, boot.token),
            bearerGet(`${TENANT}, INTAKE_METRICS=false, beside Intake`, `${metricsOff.url}/v1/tenant`, boot.token),
          ],
          [
            bearerGet(
              `${TENANT}, API rate limit configured (unspent), beside Intake`,
              `${limited.url}/v1/tenant`,
              boot.token,
            ),
            bearerGet(`${TENANT}, beside limits configured`, tenantUrl, boot.token),
          ],
          [
            bearerGet(
              "floor + RateLimit-Policy and RateLimit fields, beside the floor",
              `${floorBeside.url}/floor-limited/v1/tenant`,
              boot.token,
            ),
            bearerGet(`${FLOOR}, beside the floor with the fields`, floorUrl, boot.token),
          ],
        ],
        pairPlan,
      )) as [[Series, Series], [Series, Series], [Series, Series], [Series, Series]];
    const t = summarize(tenant);
    const r = pairedRatio(tenant, base);
    const f = summarize(floor);
    const floorBare = pairedRatio(floor, base);
    rows.push({
      scenario: 2,
      title: "GET /v1/tenant, bearer, warm cache vs bare GET (32 conns)",
      // The performance issue made the floor the reference: "Intake within 0.9× of the floor
      // on every hot path, and the bare ratio reported beside it" (the row below). The
      // benchmark issue's p99 stays a goal; its 0.75× is reported (bench/README.md).
      goal: "p99 ≤ 2 ms; the ratio reported (was ≥ 0.75×)",
      measured: `${fmtRatio(r)} (${fmtRps(t.rps)} vs ${fmtRps(summarize(base).rps)} req/s), p99 ${fmtMs(t.p99Us)} ms; the floor ${fmtRatio(floorBare)} (${fmtRps(f.rps)} req/s), p99 ${fmtMs(f.p99Us)} ms`,
      status: againstFloor([t.p99Us <= 2000, f.p99Us <= 2000]),
    });
    rows.push(
      besideRow(
        2,
        "… Intake vs the hand-written floor (bearer HMAC + lookup + X-Request-Id, bench/baseline.ts)",
        0.9,
        besideFloor,
        floorBesideIntake,
      ),
    );
    rows.push(
      besideRow(
        2,
        "… metrics on (default) vs INTAKE_METRICS=false, same data, GET /v1/tenant",
        0.95,
        besideOff,
        offBeside,
      ),
    );
    const limitsCost = pairedRatio(limitedBeside, besideLimited);
    const fieldsCost = pairedRatio(fields, plain);
    rows.push({
      scenario: 2,
      title: "… INTAKE_RATE_LIMIT_API configured but unspent vs limits off, same data, GET /v1/tenant",
      goal: "≥ 0.95×",
      measured: beside(limitedBeside, besideLimited),
      status: againstFloor([limitsCost >= 0.95, fieldsCost >= 0.95]),
    });
    rows.push({
      scenario: 2,
      title: "… the limits goal's floor: the floor answering the two RateLimit fields vs the floor (bench/baseline.ts)",
      goal: "(reported)",
      measured: beside(fields, plain),
      status: "reported",
    });
    if (inIntake) {
      rows.push({
        scenario: 2,
        title: "… the same floor served from a process running Intake's app (--floor-in-intake) vs the floor",
        goal: "(reported)",
        measured: `${fmtRatio(pairedRatio(inIntake, floor as Series))} (${fmtRps(summarize(inIntake).rps)} req/s); Intake vs it ${fmtRatio(pairedRatio(tenant as Series, inIntake))}`,
        status: "reported",
      });
    }
    await tracingRows(h, 2);
  });
}
