/**
 * Event signatures (docs/ingest.md), byte for byte Stripe's webhook scheme, so that senders can
 * reuse Stripe's SDKs and docs: header `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`,
 * HMAC-SHA256 keyed with the UTF-8 bytes of the whole `whsec_...` string over
 * `<t>` + "." + the raw body, lowercase hex.
 *
 * Two deliberate departures from stripe-node's verifier: a timestamp too far in the FUTURE
 * is rejected as well (a sender with a fast clock would otherwise mint signatures that stay
 * valid long after they were made), and the header is parsed strictly (one `t`, digits only).
 */
import { timingSafeEqual } from "node:crypto";
import type { SignatureScheme } from "./types.ts";

export type SignatureVerdict =
  | { ok: true }
  /** Only for the logs and tests: every failure is the same 401 at the edge (no oracle). */
  | { ok: false; reason: "missing" | "malformed" | "stale" | "mismatch" };

export interface ParsedSignatureHeader {
  /** Exactly as sent: it is part of the signed bytes. */
  timestamp: string;
  /** The v1 entries, in order; other schemes are ignored. */
  signatures: string[];
}

// Up to 12 digits (year 33658): enough for any real clock, and Number() stays exact.
const TIMESTAMP = /^[0-9]{1,12}$/;
// Headers beyond this are not something a sender produces; refuse before splitting them.
const MAX_HEADER_LENGTH = 8192;

/** Stripe's header grammar; null when it is not well formed (no `t`, two `t`s, no `v1`). */
export function parseSignatureHeader(header: string): ParsedSignatureHeader | null {
  if (header.length > MAX_HEADER_LENGTH) return null;
  let timestamp: string | null = null;
  const signatures: string[] = [];
  for (const item of header.split(",")) {
    const entry = item.trim();
    const eq = entry.indexOf("=");
    if (eq <= 0) continue;
    const key = entry.slice(0, eq);
    const value = entry.slice(eq + 1);
    if (key === "t") {
      // Two timestamps would let a relay pick which one we check.
      if (timestamp !== null || !TIMESTAMP.test(value)) return null;
      timestamp = value;
    } else if (key === "v1" && value.length > 0) {
      signatures.push(value);
    }
    // v0 and any other scheme: ignored, as Stripe does.
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}

// Bun's native keyed hasher: the same HMAC-SHA256 bytes as node:crypto's createHmac, at a
// fraction of its cost per event (bench scenario 3).
function hmacHex(secret: string, timestamp: string, body: Uint8Array): string {
  const hasher = new Bun.CryptoHasher("sha256", Buffer.from(secret, "utf8"));
  hasher.update(`${timestamp}.`);
  hasher.update(body);
  return hasher.digest("hex");
}

/** The v1 signature of `body` at `timestampSeconds`: what a sender computes. */
export function computeSignature(secret: string, timestampSeconds: number | string, body: Uint8Array | string): string {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return hmacHex(secret, String(timestampSeconds), bytes);
}

/** A complete `X-Service-Signature` value (for tests, docs and senders written in TypeScript). */
export function signPayload(body: Uint8Array | string, secret: string, timestampSeconds: number): string {
  return `t=${timestampSeconds},v1=${computeSignature(secret, timestampSeconds, body)}`;
}

/**
 * Verifies a signature header against every currently valid secret of the service (current
 * first, then the previous one during its grace window). One matching v1 entry suffices.
 * Comparison is constant-time over equal-length buffers; a length mismatch reveals only the
 * length, which is public (64 hex digits).
 */
export function verifySignature(
  header: string | null | undefined,
  body: Uint8Array,
  secrets: ReadonlyArray<string>,
  nowSeconds: number,
  toleranceSeconds: number,
): SignatureVerdict {
  if (!header) return { ok: false, reason: "missing" };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: "malformed" };
  // Both directions: |now - t| > tolerance is stale, whether t is in the past or the future.
  if (Math.abs(nowSeconds - Number(parsed.timestamp)) > toleranceSeconds) return { ok: false, reason: "stale" };
  const candidates = parsed.signatures.map((s) => Buffer.from(s, "latin1"));
  for (const secret of secrets) {
    const expected = Buffer.from(hmacHex(secret, parsed.timestamp, body), "latin1");
    for (const candidate of candidates) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return { ok: true };
    }
  }
  return { ok: false, reason: "mismatch" };
}

/**
 * Standard Webhooks (standard-webhooks spec v1, §19): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64>[ v1,<base64>...]`, HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64 decoding of the secret after
 * `whsec_` (what the `standardwebhooks` and `svix` libraries do with the whole secret string).
 * Svix's `svix-*` spellings are the same headers.
 */
export interface StandardWebhooksHeaders {
  id: string | null | undefined;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
}

// Visible ASCII without "." (the separator of the signed content), 1..255.
const WEBHOOK_ID = /^[\x21-\x2d\x2f-\x7e]{1,255}$/;

/**
 * The HMAC key of a secret under the Standard Webhooks scheme: the base64 decoding of what
 * follows `whsec_`, padding optional and trailing bits dropped, as the libraries decode it.
 * For a Stripe-form secret (43 base62 chars, themselves base64 characters) that is 32 bytes:
 * the key the libraries sign with when given that secret (docs/ingest.md, "Switching schemes").
 */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

/** The base64 v1 signature a Standard Webhooks sender computes. */
export function standardWebhooksSignature(
  secret: string,
  id: string,
  timestamp: number | string,
  body: Uint8Array | string,
): string {
  const hasher = new Bun.CryptoHasher("sha256", standardWebhooksKey(secret));
  hasher.update(`${id}.${timestamp}.`);
  hasher.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  return hasher.digest("base64");
}

/** The v1 entries of a `webhook-signature` value (other versions ignored); null when there is none. */
function parseStandardSignatures(header: string): string[] | null {
  if (header.length > MAX_HEADER_LENGTH) return null;
  const signatures: string[] = [];
  for (const entry of header.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma <= 0) continue;
    if (entry.slice(0, comma) === "v1" && comma + 1 < entry.length) signatures.push(entry.slice(comma + 1));
  }
  return signatures.length > 0 ? signatures : null;
}

export function verifyStandardWebhooks(
  headers: StandardWebhooksHeaders,
  body: Uint8Array,
  secrets: ReadonlyArray<string>,
  nowSeconds: number,
  toleranceSeconds: number,
): SignatureVerdict {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return { ok: false, reason: "missing" };
  if (!WEBHOOK_ID.test(id) || !TIMESTAMP.test(timestamp)) return { ok: false, reason: "malformed" };
  const parsed = parseStandardSignatures(signature);
  if (!parsed) return { ok: false, reason: "malformed" };
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return { ok: false, reason: "stale" };
  const candidates = parsed.map((s) => Buffer.from(s, "latin1"));
  for (const secret of secrets) {
    const expected = Buffer.from(standardWebhooksSignature(secret, id, timestamp, body), "latin1");
    for (const candidate of candidates) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return { ok: true };
    }
  }
  return { ok: false, reason: "mismatch" };
}

/** What a sender's request carries for verification, whichever scheme it signs with. */
export interface SignedRequest {
  /** `X-Service-Signature` (the `stripe` scheme). */
  signature?: string | null | undefined;
  /** `webhook-*`, or `svix-*` when the former is absent (the `standard_webhooks` scheme). */
  webhook?: StandardWebhooksHeaders | undefined;
  /** The exact bytes received. */
  body: Uint8Array;
}

/** A service as verification sees it: its scheme and its currently valid secrets, current first. */
export interface VerifyingService {
  scheme: SignatureScheme;
  secrets: ReadonlyArray<string>;
}

/**
 * The one verification of an ingest, by the service's scheme. Every failure is the same 401 at
 * the edge; a request signed with the other scheme's headers is `missing`.
 */
export function verify(
  service: VerifyingService,
  request: SignedRequest,
  nowSeconds: number,
  toleranceSeconds: number,
): SignatureVerdict {
  if (service.scheme === "standard_webhooks") {
    const webhook = request.webhook ?? { id: null, timestamp: null, signature: null };
    return verifyStandardWebhooks(webhook, request.body, service.secrets, nowSeconds, toleranceSeconds);
  }
  return verifySignature(request.signature, request.body, service.secrets, nowSeconds, toleranceSeconds);
}

/** Reads the Standard Webhooks headers, the `webhook-*` spelling first, then Svix's. */
export function standardWebhooksHeaders(get: (name: string) => string | null | undefined): StandardWebhooksHeaders {
  return {
    id: get("webhook-id") ?? get("svix-id"),
    timestamp: get("webhook-timestamp") ?? get("svix-timestamp"),
    signature: get("webhook-signature") ?? get("svix-signature"),
  };
}
