/**
 * The rule that sorts test files into tiers (docs/testing.md): a test that starts a process,
 * drives a browser or runs the compiled binary lives in test/e2e/ or test/browser/, which
 * `bun run test:fast` leaves out. This file, in the fast tier itself, fails for a test file
 * anywhere else that does one of those, so a new file cannot slow the fast tier unnoticed.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const TEST_DIR = import.meta.dir;

/** What only the slow tier may do, each with the words a file shows when it does it. */
const SLOW: Array<[string, RegExp]> = [
  ["starts a process", /\bBun\.spawn(Sync)?\(|node:child_process|support\/intake-process\.ts/],
  ["drives a browser", /playwright|puppeteer|lighthouse|support\/browser\.ts/],
  ["runs the compiled binary", /scripts\/build\.ts|dist\/intake/],
];

/** The slow tier, and the helpers it alone imports (test/support/intake-process.ts, browser.ts). */
const SKIPPED = ["e2e/", "browser/", "support/"];

test("every test file that starts a process, drives a browser or runs the binary is in test/e2e/ or test/browser/", async () => {
  const misplaced: string[] = [];
  for await (const file of new Bun.Glob("**/*.ts").scan(TEST_DIR)) {
    if (SKIPPED.some((dir) => file.startsWith(dir)) || file === "tiers.test.ts") continue;
    const text = await Bun.file(join(TEST_DIR, file)).text();
    for (const [what, pattern] of SLOW) if (pattern.test(text)) misplaced.push(`test/${file} ${what}`);
  }
  expect(misplaced).toEqual([]);
});

test("each of the guard's patterns matches a file in test/e2e/ or test/browser/: a guard that matches nothing passes anything", async () => {
  const seen = new Set<string>();
  for await (const file of new Bun.Glob("{e2e,browser}/*.test.ts").scan(TEST_DIR)) {
    const text = await Bun.file(join(TEST_DIR, file)).text();
    for (const [what, pattern] of SLOW) if (pattern.test(text)) seen.add(what);
  }
  expect([...seen].sort()).toEqual(SLOW.map(([what]) => what).sort());
});
