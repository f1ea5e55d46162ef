/**
 * Stripe's v1 signature, written out here independently of src/domain/signing.ts, so that a
 * test signing with it checks the server against the scheme rather than against itself.
 */
import { createHmac } from "node:crypto";

/** X-Service-Signature for `payload` at `nowMs` (Stripe's v1 scheme, docs/ingest.md). */
export function sign(secret: string, payload: Uint8Array | string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const mac = createHmac("sha256", secret).update(`${t}.`).update(payload).digest("hex");
  return `t=${t},v1=${mac}`;
}
