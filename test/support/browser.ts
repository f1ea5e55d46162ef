/**
 * Debian's Chromium for the browser tests, driven by playwright-core (no browser download).
 * Where it is missing the suite skips with one printed line, or, under INTAKE_REQUIRE_SERVICES=1,
 * fails: a browser suite that must run never passes silently.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM = process.env.INTAKE_CHROMIUM ?? "/usr/bin/chromium";
const required = process.env.INTAKE_REQUIRE_SERVICES === "1";

/** Whether Chromium is there; prints the SKIP line for `suite` when it is not (and not required). */
export function chromiumPresent(suite: string): boolean {
  const present = existsSync(CHROMIUM);
  if (!present && !required) console.log(`SKIP: ${suite}: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  return present;
}

/** Throws when Chromium is required (CI) but missing. */
export function requireChromium(): void {
  if (required && !existsSync(CHROMIUM)) {
    throw new Error(`INTAKE_REQUIRE_SERVICES=1 but there is no Chromium at ${CHROMIUM}`);
  }
}

/**
 * Headless, sandbox off (root), and none of Chromium's background traffic: this machine reaches
 * no host but itself, and the tests assert the pages ask for none.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}
