/**
 * Scenario 1: GET /v1/health against the bare GET, side by side (bench/README.md, "Health as a native route").
 */
import type { Harness } from "../lib/harness.ts";
import type { Series } from "../lib/report.ts";
import type { ReadProcesses } from "./read-processes.ts";

export async function run(h: Harness, read: ReadProcesses): Promise<void> {
  const { rows, readScenario, wrkTarget, readPlan, sideBySide, besideRow, expectStatus } = h;
  const { baseline, intake, readPids } = read;
  await readScenario(1, "GET /v1/health vs bare GET", readPids, async () => {
    if (!baseline) throw new Error("no baseline");
    await expectStatus(`${intake.url}/v1/health`, {}, 200, "health");
    // Side by side (see `sideBySide`), since 2026-11-26: one after the other, this pair's
    // per-round ratios spread 0.63–1.07 within single runs of the same code, and the goal
    // read 0.83–0.94× across that day's four runs.
    const [[health, base]] = (await sideBySide(
      1,
      [
        [
          wrkTarget("Intake GET /v1/health, beside the bare GET", {
            url: `${intake.url}/v1/health`,
            connections: 32,
            script: "get.lua",
          }),
          wrkTarget("baseline GET, beside Intake", {
            url: `${baseline.url}/v1/health`,
            connections: 32,
            script: "get.lua",
          }),
        ],
      ],
      readPlan,
    )) as [[Series, Series]];
    rows.push(besideRow(1, "GET /v1/health vs bare GET (32 conns)", 0.9, health, base));
  });
}
