/**
 * The senders chart's outcomes (src/console/outcomes.ts) against what the server counts
 * (src/domain/stats-types.ts): every counted outcome has its own label and its own colour in
 * explorer.css, so no refusal reason is drawn unnamed or in another's colour.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { OUTCOMES, ordered, outcomeClass, outcomeLabel } from "../../src/console/outcomes.ts";
import { STATS_OUTCOMES } from "../../src/domain/stats-types.ts";

describe("the senders chart's outcomes", () => {
  test("the chart names every outcome the server counts, and no other", () => {
    expect(OUTCOMES.map((o) => o.key).sort()).toEqual([...STATS_OUTCOMES].sort());
    expect(new Set(OUTCOMES.map((o) => o.label)).size).toBe(OUTCOMES.length);
  });

  test("every outcome has a colour of its own in explorer.css", async () => {
    const css = await Bun.file(join(import.meta.dir, "../../src/console/explorer.css")).text();
    const colours = new Map<string, string>();
    for (const { key } of OUTCOMES) {
      const rule = new RegExp(`\\.${outcomeClass(key)} \\{\\s*--swatch: ([^;]+);`).exec(css);
      expect(rule, key).not.toBeNull();
      colours.set(key, rule?.[1] ?? "");
    }
    expect(new Set(colours.values()).size).toBe(OUTCOMES.length);
  });

  test("bars stack in the chart's order; an outcome from a newer server comes last, by its own name", () => {
    expect(ordered({ no_matching_signature: 2, accepted: 5, future_reason: 1, duplicate: 0 })).toEqual([
      "accepted",
      "no_matching_signature",
      "future_reason",
    ]);
    expect(outcomeLabel("future_reason")).toBe("future_reason");
    expect(outcomeClass("future_reason")).toBe("o-other");
  });
});
