/**
 * Signing secrets at rest: AES-256-GCM under the deployment's key, with the service id as
 * additional authenticated data so a ciphertext copied onto another row does not decrypt.
 * Stored form: base64(iv[12] ‖ ciphertext ‖ tag[16]).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export interface Sealer {
  seal(plaintext: string, boundTo: string): string;
  open(sealed: string, boundTo: string): string;
}

export function createSealer(key: Uint8Array): Sealer {
  if (key.length !== 32) throw new Error("the secrets key must be exactly 32 bytes");
  return {
    seal(plaintext, boundTo) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(boundTo, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64");
    },
    open(sealed, boundTo) {
      const raw = Buffer.from(sealed, "base64");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(boundTo, "utf8"));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString("utf8");
    },
  };
}
