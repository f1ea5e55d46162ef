/**
 * `isoOfMs` formats the time of day by hand (src/shapes/time.ts): every instant Intake can
 * show must read exactly as `Date.prototype.toISOString` writes it.
 */
import { describe, expect, test } from "bun:test";
import { MAX_TIME_MS, MIN_TIME_MS } from "../../src/domain/time.ts";
import { isoOfMs, isoOrNull } from "../../src/shapes/time.ts";

const DAY = 86_400_000;

function expectIsoOf(ms: number): void {
  expect(isoOfMs(ms)).toBe(new Date(ms).toISOString());
}

describe("isoOfMs", () => {
  test("is toISOString at the ends of the range, around the epoch and around midnights", () => {
    const edges = [MIN_TIME_MS, MIN_TIME_MS + 1, MAX_TIME_MS, MAX_TIME_MS - 1, 0, -1, 1, 999, 1_000, 59_999, 60_000];
    for (const ms of edges) expectIsoOf(ms);
    for (const day of [-719_162, -1, 0, 1, 20_415, 2_932_896]) {
      for (const offset of [-1, 0, 1, 9, 10, 99, 100, 3_599_999, 3_600_000, DAY - 1]) expectIsoOf(day * DAY + offset);
    }
  });

  test("is toISOString for random instants over thousands of days (the day cache refills)", () => {
    for (let i = 0; i < 20_000; i++) {
      expectIsoOf(MIN_TIME_MS + Math.floor(Math.random() * (MAX_TIME_MS - MIN_TIME_MS)));
    }
  });

  test("is toISOString for runs of instants within one second, before and after the epoch (the last second's text is reused)", () => {
    for (const second of [-62_135_596_800, -1, 0, 1_795_860_000]) {
      for (const ms of [0, 1, 9, 10, 99, 100, 998, 999, 500, 0]) expectIsoOf(second * 1000 + ms);
      expectIsoOf((second + 1) * 1000); // the next second
      expectIsoOf(second * 1000 + 999); // and back
    }
  });

  test("an unset timestamp is null", () => {
    expect(isoOrNull(null)).toBeNull();
  });
});
