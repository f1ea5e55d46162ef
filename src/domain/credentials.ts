/**
 * Token and signing-secret formats (docs/api.md).
 *
 * A token is `service_live_` + 37 random base62 chars + the CRC32 (IEEE, as zlib's) of those
 * 37 chars in base62, left-padded to 6: GitHub's token checksum. A mistyped or made-up token
 * is rejected by `isWellFormedToken` without any store or cache lookup, and secret scanners
 * can verify a find offline.
 */
import { randomBytes, randomFillSync } from "node:crypto";
import type { SignatureScheme } from "./types.ts";

export const TOKEN_PREFIX = "service_live_";
export const SECRET_PREFIX = "whsec_";
/** One-time setup codes (docs/console.md): the token's shape and checksum under another prefix. */
export const SETUP_CODE_PREFIX = "setup_";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS = 37;
const CHECKSUM_CHARS = 6;
const BODY_CHARS = RANDOM_CHARS + CHECKSUM_CHARS;
const TOKEN_SHAPE = /^service_live_[0-9A-Za-z]{43}$/;
/** Every token's length: anything longer or shorter is malformed without a look at its chars. */
export const TOKEN_LENGTH = TOKEN_PREFIX.length + BODY_CHARS;
const SETUP_CODE_SHAPE = /^setup_[0-9A-Za-z]{43}$/;

/** `n` base62 chars from a CSPRNG. Bytes ≥ 248 are rejected so every char is equally likely (248 = 4 × 62). */
export function randomBase62(n: number): string {
  let out = "";
  const pool = new Uint8Array(Math.max(64, n * 2));
  while (out.length < n) {
    randomFillSync(pool);
    for (const b of pool) {
      if (b >= 248) continue;
      out += BASE62[b % 62];
      if (out.length === n) break;
    }
  }
  return out;
}

export function toBase62(value: number, width: number): string {
  let out = "";
  let v = value;
  do {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  } while (v > 0);
  return out.padStart(width, "0");
}

export function crc32(text: string): number {
  return Bun.hash.crc32(text);
}

export function tokenChecksum(randomPart: string): string {
  return toBase62(crc32(randomPart), CHECKSUM_CHARS);
}

function generateChecksummed(prefix: string): string {
  const random = randomBase62(RANDOM_CHARS);
  return prefix + random + tokenChecksum(random);
}

/** The number `text[start..end)` spells in base62; the caller has checked every char is base62. */
function base62Value(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    value = value * 62 + (c <= 57 ? c - 48 : c <= 90 ? c - 55 : c - 61);
  }
  return value;
}

/**
 * Compares numbers, not the checksum's text: on every authenticated request, building the
 * six chars (a loop of string concatenations and a pad) cost more than the CRC itself.
 */
function checksumHolds(prefix: string, value: string): boolean {
  const start = prefix.length;
  const written = base62Value(value, start + RANDOM_CHARS, start + BODY_CHARS);
  return written === crc32(value.slice(start, start + RANDOM_CHARS));
}

export function generateToken(): string {
  return generateChecksummed(TOKEN_PREFIX);
}

/** Shape and checksum only: no I/O. */
export function isWellFormedToken(token: string): boolean {
  return TOKEN_SHAPE.test(token) && checksumHolds(TOKEN_PREFIX, token);
}

export function generateSetupCode(): string {
  return generateChecksummed(SETUP_CODE_PREFIX);
}

/** Shape and checksum only: a mistyped code is refused without a store lookup. */
export function isWellFormedSetupCode(code: string): boolean {
  return SETUP_CODE_SHAPE.test(code) && checksumHolds(SETUP_CODE_PREFIX, code);
}

/** The public `prefix`: `service_live_` + the first 8 body chars. */
export function tokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 8);
}

/** Keyed digest for storage: HMAC-SHA256(pepper, token) in lowercase hex. Only this is stored. */
export function createTokenHasher(pepper: string): (token: string) => string {
  // The keyed state is built once and copied per call: every authenticated request pays this,
  // and a copy is cheaper than a fresh node:crypto Hmac (bench scenario 2).
  const keyed = new Bun.CryptoHasher("sha256", Buffer.from(pepper, "utf8"));
  return (token) => keyed.copy().update(token).digest("hex");
}

/**
 * A new signing secret in the form its scheme's senders expect (§19): Stripe's `whsec_` + 43
 * base62; Standard Webhooks' `whsec_` + the base64 of 32 random bytes, the form the
 * `standardwebhooks` and `svix` libraries generate and decode into their key.
 */
export function generateSigningSecret(scheme: SignatureScheme = "stripe"): string {
  if (scheme === "standard_webhooks") return SECRET_PREFIX + randomBytes(32).toString("base64");
  return SECRET_PREFIX + randomBase62(43);
}

/** `signing_secret_prefix`: the first 10 chars (`whsec_` + 4). */
export function secretPrefix(secret: string): string {
  return secret.slice(0, 10);
}
