/**
 * Pre-signed ingest requests for wrk (its LuaJIT has no HMAC). Each line of the pool file is
 * `<path>\t<X-Service-Signature>\t<body>`; bench/wrk/pool.lua cycles through them.
 *
 * Signature (docs/ingest.md): `t=<unix>,v1=<hex HMAC-SHA256 keyed by the whsec_ string of "<t>.<body>">`.
 * All are stamped at generation time, so the Intake under test runs with
 * INTAKE_SIGNATURE_TOLERANCE_SECONDS raised (see run.ts) to keep them valid for the whole run.
 */
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

export const EVENT_BYTES = 1024;

/** A JSON object of exactly `EVENT_BYTES` bytes, distinct per `seq`. */
export function eventBody(seq: number): string {
  const head = `{"type":"bench.event","seq":${seq},"pad":"`;
  const tail = `"}`;
  const body = head + "x".repeat(EVENT_BYTES - head.length - tail.length) + tail;
  if (Buffer.byteLength(body) !== EVENT_BYTES) throw new Error("event body is not 1 KiB");
  return body;
}

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const digest = createHmac("sha256", Buffer.from(secret, "utf8")).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${digest}`;
}

/** Writes `count` signed requests for `path` (signed with `secret`, or unsigned when null). */
export function writePool(file: string, path: string, secret: string | null, count: number): void {
  const now = Math.floor(Date.now() / 1000);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = eventBody(i);
    lines.push(`${path}\t${secret === null ? "" : signatureHeader(secret, body, now)}\t${body}`);
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}

/** The requests of a pool file written by `writePool`, for a client in TypeScript (bench/paced-ingest.ts). */
export function readPool(file: string): { path: string; signature: string | null; body: string }[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [path = "", signature = "", ...rest] = line.split("\t");
      return { path, signature: signature === "" ? null : signature, body: rest.join("\t") };
    });
}
