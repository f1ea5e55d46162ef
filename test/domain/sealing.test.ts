import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { generateSigningSecret } from "../../src/domain/credentials.ts";
import { createSealer } from "../../src/domain/sealing.ts";

const key = new Uint8Array(randomBytes(32));
const serviceA = "0193a1b2c3d4e5f60718293a4b5c6d7e";
const serviceB = "0193a1b2c3d4e5f60718293a4b5c6d7f";

describe("sealing (AES-256-GCM bound to the service id)", () => {
  test("seal then open with the same service id returns the secret", () => {
    const sealer = createSealer(key);
    const secret = generateSigningSecret();
    expect(sealer.open(sealer.seal(secret, serviceA), serviceA)).toBe(secret);
  });

  test("the sealed form does not contain the secret, and two seals of one secret differ (fresh IV)", () => {
    const sealer = createSealer(key);
    const secret = generateSigningSecret();
    const a = sealer.seal(secret, serviceA);
    const b = sealer.seal(secret, serviceA);
    expect(a).not.toBe(b);
    expect(a).not.toContain(secret);
    expect(Buffer.from(a, "base64").toString("latin1")).not.toContain(secret.slice(6));
    // iv(12) + plaintext + tag(16)
    expect(Buffer.from(a, "base64").length).toBe(12 + secret.length + 16);
  });

  test("a ciphertext moved to another service id fails to open (AAD binding)", () => {
    const sealer = createSealer(key);
    const sealed = sealer.seal(generateSigningSecret(), serviceA);
    expect(() => sealer.open(sealed, serviceB)).toThrow();
  });

  test("a ciphertext opened under another key fails", () => {
    const sealed = createSealer(key).seal(generateSigningSecret(), serviceA);
    expect(() => createSealer(new Uint8Array(randomBytes(32))).open(sealed, serviceA)).toThrow();
  });

  test("a flipped bit anywhere in the sealed bytes fails to open", () => {
    const sealer = createSealer(key);
    const raw = Buffer.from(sealer.seal(generateSigningSecret(), serviceA), "base64");
    for (const index of [0, 11, 12, 30, raw.length - 16, raw.length - 1]) {
      const tampered = Buffer.from(raw);
      tampered[index] = (tampered[index] as number) ^ 0x01;
      expect(() => sealer.open(tampered.toString("base64"), serviceA)).toThrow();
    }
  });

  test("a key that is not exactly 32 bytes is refused", () => {
    expect(() => createSealer(new Uint8Array(31))).toThrow();
    expect(() => createSealer(new Uint8Array(33))).toThrow();
  });
});
