import { describe, expect, test } from "bun:test";
import zlib from "node:zlib";
import { createMemoryCache } from "../../src/cache/memory.ts";
import { createAudit } from "../../src/domain/audit.ts";
import {
  createTokenHasher,
  generateSigningSecret,
  generateToken,
  isWellFormedToken,
  randomBase62,
  secretPrefix,
  TOKEN_PREFIX,
  toBase62,
  tokenChecksum,
  tokenPrefix,
} from "../../src/domain/credentials.ts";
import { createIdGenerator } from "../../src/domain/ids.ts";
import { type CachedToken, createTokens } from "../../src/domain/tokens.ts";
import { silentLogger } from "../../src/logger.ts";
import { manualClock } from "../support/harness.ts";
import { countingStore } from "./fakes.ts";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Reference CRC-32 (IEEE 802.3, reflected, poly 0xEDB88320), table driven: independent of Bun.hash and zlib. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function referenceCrc32(ascii: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(ascii, "latin1")) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Base62 by repeated BigInt division, written independently of src/. */
function referenceBase62(value: number, width: number): string {
  let v = BigInt(value);
  let out = "";
  while (v > 0n) {
    out = ALPHABET[Number(v % 62n)] + out;
    v /= 62n;
  }
  return out.padStart(width, "0");
}

function countingDeps() {
  const fake = countingStore();
  const cache = createMemoryCache();
  const namespace = cache.namespace<CachedToken>("tok", { ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100 });
  let fills = 0;
  const tokenCache = {
    peek: (key: string) => namespace.peek(key),
    getOrLoad: (key: string, load: () => Promise<CachedToken | null>) => {
      fills++;
      return namespace.getOrLoad(key, load);
    },
    invalidate: (key: string) => namespace.invalidate(key),
  };
  let hashes = 0;
  const hasher = createTokenHasher("p".repeat(32));
  const tokens = createTokens({
    store: fake.store,
    audit: createAudit({ store: fake.store, clock: manualClock(), newId: createIdGenerator() }),
    tokenCache,
    clock: manualClock(),
    newId: createIdGenerator(),
    hashToken: (t) => {
      hashes++;
      return hasher(t);
    },
    logger: silentLogger,
  });
  return { fake, tokens, fills: () => fills, hashes: () => hashes };
}

describe("token format", () => {
  test("a token is service_live_ + 43 base62 chars: 37 random + 6-char checksum", () => {
    for (let i = 0; i < 200; i++) {
      const token = generateToken();
      expect(token).toMatch(/^service_live_[0-9A-Za-z]{43}$/);
      expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
      expect(isWellFormedToken(token)).toBe(true);
    }
  });

  test("the checksum is CRC32 (zlib's) of the 37 random chars in base62, left-padded with 0 to 6", () => {
    for (let i = 0; i < 500; i++) {
      const token = generateToken();
      const random = token.slice(13, 50);
      const checksum = token.slice(50);
      expect(random).toHaveLength(37);
      expect(checksum).toBe(referenceBase62(zlib.crc32(random), 6));
      expect(checksum).toBe(referenceBase62(referenceCrc32(random), 6));
    }
  });

  test("tokenChecksum agrees with zlib.crc32 and a table CRC32, including values that need 0-padding", () => {
    // Inputs chosen to cover small CRCs (padding) and the 32-bit top range.
    const inputs = ["", "a", "0".repeat(37), "z".repeat(37), "The quick brown fox jumps over the lazy"];
    for (let i = 0; i < 2000; i++) inputs.push(randomBase62(37));
    let padded = 0;
    for (const input of inputs) {
      expect(zlib.crc32(input)).toBe(referenceCrc32(input));
      const expected = referenceBase62(referenceCrc32(input), 6);
      expect(tokenChecksum(input)).toBe(expected);
      if (expected.startsWith("0")) padded++;
    }
    // 62^5/2^32 ≈ 21% of CRCs have fewer than 6 digits: padding was exercised.
    expect(padded).toBeGreaterThan(100);
  });

  test("toBase62 matches a BigInt base62 at the edges: 0, 61, 62, 62^5, 2^32-1", () => {
    for (const value of [0, 1, 61, 62, 3843, 62 ** 5 - 1, 62 ** 5, 0x7fffffff, 0x80000000, 0xffffffff]) {
      expect(toBase62(value, 6)).toBe(referenceBase62(value, 6));
    }
    expect(toBase62(0xffffffff, 6)).toHaveLength(6);
  });

  test("every one-char typo of a token is rejected by the shape/checksum check", () => {
    const token = generateToken();
    for (let i = TOKEN_PREFIX.length; i < token.length; i++) {
      const original = token[i] as string;
      const replacement = ALPHABET[(ALPHABET.indexOf(original) + 1 + (i % 61)) % 62] as string;
      const typo = token.slice(0, i) + replacement + token.slice(i + 1);
      expect(typo).not.toBe(token);
      expect(isWellFormedToken(typo)).toBe(false);
    }
  });

  test("wrong prefix, wrong length, non-base62 chars and swapped neighbours are rejected", () => {
    const token = generateToken();
    const body = token.slice(TOKEN_PREFIX.length);
    const bad = [
      `service_test_${body}`,
      `Service_live_${body}`,
      body,
      token.slice(0, -1),
      `${token}0`,
      `${token.slice(0, -1)}-`,
      `${token.slice(0, 20)}_${token.slice(21)}`,
      ` ${token}`,
      `${token}\n`,
      "",
    ];
    // A transposition of two different neighbours in the random part.
    const i = [...body.slice(0, 36)].findIndex((c, k) => c !== body[k + 1]);
    const swapped = body.slice(0, i) + body[i + 1] + body[i] + body.slice(i + 2);
    bad.push(TOKEN_PREFIX + swapped);
    for (const candidate of bad) expect(isWellFormedToken(candidate)).toBe(false);
  });

  test("a one-char typo is answered malformed without a store call or a cache fill; a wrong length is not even hashed", async () => {
    const { fake, tokens, fills, hashes } = countingDeps();
    const token = generateToken();
    const last = token.at(-1) as string;
    const typo = token.slice(0, -1) + (last === "a" ? "b" : "a");
    const typo2 = `${token.slice(0, 20)}${token[20] === "Q" ? "R" : "Q"}${token.slice(21)}`;
    for (const credential of [typo, typo2, "service_live_short", "garbage", "", `${token}x`]) {
      const result = await tokens.verifyToken(credential);
      expect(result).toEqual({ ok: false, reason: "malformed" });
    }
    expect(fake.total()).toBe(0);
    expect(fills()).toBe(0);
    // Only the two typos have a token's length: the checksum is judged after the cache is
    // asked (a cached record is a stored token's, well-formed by construction).
    expect(hashes()).toBe(2);
  });

  test("a well-formed unknown token does reach the store (the stub counts calls), once, then a cached miss", async () => {
    const { fake, tokens } = countingDeps();
    const token = generateToken();
    expect(await tokens.verifyToken(token)).toEqual({ ok: false, reason: "unknown" });
    expect(fake.calls.get("tokens.findByDigest")).toBe(1);
    expect(await tokens.verifyToken(token)).toEqual({ ok: false, reason: "unknown" });
    expect(fake.calls.get("tokens.findByDigest")).toBe(1);
  });

  test("a tok_ id sent as a credential is reason token_id, without any store call", async () => {
    const { fake, tokens } = countingDeps();
    expect(await tokens.verifyToken(`tok_${"0".repeat(32)}`)).toEqual({ ok: false, reason: "token_id" });
    expect(fake.total()).toBe(0);
  });

  test("prefix is service_live_ + the first 8 body chars", () => {
    const token = generateToken();
    expect(tokenPrefix(token)).toBe(token.slice(0, 21));
    expect(tokenPrefix(token)).toMatch(/^service_live_[0-9A-Za-z]{8}$/);
  });

  test("the stored digest is HMAC-SHA256(pepper, token) hex, pepper-dependent", () => {
    const token = generateToken();
    const a = createTokenHasher("a".repeat(32));
    const b = createTokenHasher("b".repeat(32));
    const expected = new Bun.CryptoHasher("sha256", "a".repeat(32)).update(token).digest("hex");
    expect(a(token)).toBe(expected);
    expect(a(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(b(token)).not.toBe(a(token));
    expect(a(token)).not.toContain(token.slice(13));
  });
});

describe("signing secrets", () => {
  test("a secret is whsec_ + 43 base62 chars and its prefix is its first 10 chars", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const secret = generateSigningSecret();
      expect(secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
      expect(secretPrefix(secret)).toBe(secret.slice(0, 10));
      seen.add(secret);
    }
    expect(seen.size).toBe(100);
  });
});

describe("base62 randomness", () => {
  test("randomBase62 returns exactly n chars of the alphabet", () => {
    for (const n of [0, 1, 37, 43, 200, 1000]) {
      const s = randomBase62(n);
      expect(s).toHaveLength(n);
      expect(s).toMatch(/^[0-9A-Za-z]*$/);
    }
  });

  test("all 62 chars are equally likely (chi-square; modulo bias would give 0-7 a 25% excess)", () => {
    const counts = new Map<string, number>();
    const samples = 62 * 10_000;
    const text = randomBase62(samples);
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = samples / 62;
    let chi2 = 0;
    for (const c of ALPHABET) chi2 += ((counts.get(c) ?? 0) - expected) ** 2 / expected;
    // 61 degrees of freedom: P(chi2 > 130) < 1e-6. A mod-62 bias over bytes scores in the thousands.
    expect(chi2).toBeLessThan(130);
    const low = [..."01234567"].reduce((sum, c) => sum + (counts.get(c) ?? 0), 0) / 8;
    const high = [..."89ABCDEF"].reduce((sum, c) => sum + (counts.get(c) ?? 0), 0) / 8;
    expect(Math.abs(low / high - 1)).toBeLessThan(0.05);
  });

  test("each position of a token body is uniformly spread (no fixed or skewed column)", () => {
    const columns = Array.from({ length: 37 }, () => new Set<string>());
    for (let i = 0; i < 2000; i++) {
      const random = generateToken().slice(13, 50);
      for (let k = 0; k < 37; k++) columns[k]?.add(random[k] as string);
    }
    // 2000 draws from 62 symbols: every column sees (nearly) all of them.
    for (const column of columns) expect(column.size).toBeGreaterThanOrEqual(60);
  });
});
