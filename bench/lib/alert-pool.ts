/**
 * Pre-signed alert events (SPEC §17) for wrk, in pool.ts's file format, each exactly
 * `EVENT_BYTES` like the plain pool's: scenario 15 compares the two through the same path.
 *
 * The pool walks `keys` dedup keys (a tenth of the pool, at most 100) pass after pass: nine
 * passes of triggers, their severity rising every few passes, then one pass of resolves. Cycled
 * by wrk, every kind of change happens all the time: a trigger opens an incident (the first after
 * a resolve), joins it, or raises its severity; a resolve closes it.
 */
import { writeFileSync } from "node:fs";
import { EVENT_BYTES, signatureHeader } from "./pool.ts";

const SEVERITIES = ["info", "warning", "error", "critical"] as const;

/** The `i`-th alert event of a pool of `count`, padded to exactly `EVENT_BYTES`. */
export function alertBody(i: number, count: number): string {
  const keys = Math.max(1, Math.min(100, Math.floor(count / 10)));
  const pass = Math.floor(i / keys);
  const dedupKey = `bench/key-${i % keys}`;
  const head =
    pass % 10 === 9
      ? `{"event_action":"resolve","dedup_key":"${dedupKey}","payload":{"custom_details":{"seq":${i},"pad":"`
      : `{"event_action":"trigger","dedup_key":"${dedupKey}","payload":{"summary":"Bench alert on ${dedupKey}","source":"bench-host-${i % 7}","severity":"${SEVERITIES[Math.floor((pass % 10) / 3)]}","custom_details":{"seq":${i},"pad":"`;
  const tail = `"}}}`;
  const body = head + "x".repeat(EVENT_BYTES - head.length - tail.length) + tail;
  if (Buffer.byteLength(body) !== EVENT_BYTES) throw new Error("alert body is not 1 KiB");
  return body;
}

/** Writes `count` signed alert events for `path`, as `writePool` does plain ones. */
export function writeAlertPool(file: string, path: string, secret: string, count: number): void {
  const now = Math.floor(Date.now() / 1000);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = alertBody(i, count);
    lines.push(`${path}\t${signatureHeader(secret, body, now)}\t${body}`);
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}
