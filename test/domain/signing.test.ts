import { afterEach, describe, expect, mock, spyOn, test } from "bun:test";
import * as nodeCrypto from "node:crypto";
import { Webhook } from "standardwebhooks";
import { Webhook as Svix } from "svix";
import {
  computeSignature,
  parseSignatureHeader,
  signPayload,
  standardWebhooksKey,
  standardWebhooksSignature,
  verifySignature,
  verifyStandardWebhooks,
} from "../../src/domain/signing.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

// Vectors computed independently with OpenSSL:
//   printf '%s' '1700000000.{"id":"evt_1","object":"event"}' | openssl dgst -sha256 -hmac 'whsec_test_secret'
const V1 = {
  secret: "whsec_test_secret",
  t: 1700000000,
  body: '{"id":"evt_1","object":"event"}',
  hex: "0c8670ed117751cc551a20e35839447075c42800ea3cf3e8a2fbda99cd1e6edd",
};
//   printf '%s' '1795860000.{"a":"héllo"}' | openssl dgst -sha256 -hmac 'whsec_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq'
const V2 = {
  secret: "whsec_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq",
  t: 1795860000,
  body: '{"a":"héllo"}',
  hex: "deab2f6c72ded939a6c88e5be789c262344a4a37460a2e020f65dad0c84ca28a",
};

afterEach(() => {
  mock.restore();
});

describe("Stripe's scheme", () => {
  test("HMAC-SHA256 over `<t>.<body>`, keyed with the whole whsec_ string, lowercase hex (OpenSSL vector)", () => {
    expect(computeSignature(V1.secret, V1.t, V1.body)).toBe(V1.hex);
    expect(signPayload(V1.body, V1.secret, V1.t)).toBe(`t=${V1.t},v1=${V1.hex}`);
  });

  test("the body is signed as its UTF-8 bytes (non-ASCII vector)", () => {
    expect(computeSignature(V2.secret, V2.t, bytes(V2.body))).toBe(V2.hex);
    expect(verifySignature(`t=${V2.t},v1=${V2.hex}`, bytes(V2.body), [V2.secret], V2.t, 300)).toEqual({ ok: true });
  });

  test("a valid header verifies", () => {
    expect(verifySignature(`t=${V1.t},v1=${V1.hex}`, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({ ok: true });
  });

  test("one byte of the body changed → mismatch", () => {
    const altered = bytes(V1.body);
    altered[2] = (altered[2] as number) ^ 1;
    expect(verifySignature(`t=${V1.t},v1=${V1.hex}`, altered, [V1.secret], V1.t, 300)).toEqual({
      ok: false,
      reason: "mismatch",
    });
  });

  test("another secret → mismatch", () => {
    expect(verifySignature(`t=${V1.t},v1=${V1.hex}`, bytes(V1.body), ["whsec_other"], V1.t, 300).ok).toBe(false);
  });

  test("uppercase hex is not the lowercase digest Stripe sends → mismatch", () => {
    const header = `t=${V1.t},v1=${V1.hex.toUpperCase()}`;
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300).ok).toBe(false);
  });
});

describe("several entries and secrets", () => {
  test("several v1 entries: one valid entry suffices, wherever it stands", () => {
    const wrong = "0".repeat(64);
    for (const header of [`t=${V1.t},v1=${wrong},v1=${V1.hex}`, `t=${V1.t},v1=${V1.hex},v1=${wrong}`]) {
      expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({ ok: true });
    }
  });

  test("v0 entries (and unknown schemes) are ignored", () => {
    const header = `t=${V1.t},v0=${"f".repeat(64)},v1=${V1.hex},x9=whatever`;
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({ ok: true });
  });

  test("a header with only a v0 entry is malformed (no v1)", () => {
    const header = `t=${V1.t},v0=${V1.hex}`;
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({ ok: false, reason: "malformed" });
  });

  test("any of the valid secrets verifies (current and previous during the grace window)", () => {
    const header = `t=${V1.t},v1=${V1.hex}`;
    expect(verifySignature(header, bytes(V1.body), ["whsec_new", V1.secret], V1.t, 300)).toEqual({ ok: true });
    expect(verifySignature(header, bytes(V1.body), [], V1.t, 300).ok).toBe(false);
  });

  test("spaces after the commas are tolerated", () => {
    const header = `t=${V1.t}, v1=${V1.hex}`;
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({ ok: true });
  });
});

describe("timestamp tolerance, both directions", () => {
  const header = `t=${V1.t},v1=${V1.hex}`;
  const check = (now: number) => verifySignature(header, bytes(V1.body), [V1.secret], now, 300);

  test("exactly at the tolerance is accepted, past and future", () => {
    expect(check(V1.t + 300)).toEqual({ ok: true });
    expect(check(V1.t - 300)).toEqual({ ok: true });
  });

  test("one second older than the tolerance is stale", () => {
    expect(check(V1.t + 301)).toEqual({ ok: false, reason: "stale" });
  });

  test("one second further in the future than the tolerance is rejected too (unlike stripe-node)", () => {
    expect(check(V1.t - 301)).toEqual({ ok: false, reason: "stale" });
  });

  test("the tolerance is the caller's (INTAKE_SIGNATURE_TOLERANCE_SECONDS)", () => {
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t + 2, 1).ok).toBe(false);
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t + 1, 1).ok).toBe(true);
  });
});

describe("constant-time comparison", () => {
  test("candidates are compared with crypto.timingSafeEqual on equal-length buffers", () => {
    const spy = spyOn(nodeCrypto, "timingSafeEqual");
    const header = `t=${V1.t},v1=${"0".repeat(64)},v1=${V1.hex}`;
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({ ok: true });
    expect(spy).toHaveBeenCalledTimes(2);
    for (const [a, b] of spy.mock.calls) expect((a as Buffer).length).toBe((b as Buffer).length);
  });

  test("a candidate of another length is rejected without comparing (timingSafeEqual would throw)", () => {
    const spy = spyOn(nodeCrypto, "timingSafeEqual");
    const header = `t=${V1.t},v1=${V1.hex.slice(0, 10)}`;
    expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({ ok: false, reason: "mismatch" });
    expect(spy).not.toHaveBeenCalled();
  });
});

describe("malformed headers", () => {
  const cases: Array<[string, string | null | undefined, string]> = [
    ["absent", undefined, "missing"],
    ["null", null, "missing"],
    ["empty", "", "missing"],
    ["no timestamp", `v1=${V1.hex}`, "malformed"],
    ["no v1", `t=${V1.t}`, "malformed"],
    ["empty v1", `t=${V1.t},v1=`, "malformed"],
    ["timestamp not digits", `t=abc,v1=${V1.hex}`, "malformed"],
    ["negative timestamp", `t=-1,v1=${V1.hex}`, "malformed"],
    ["fractional timestamp", `t=${V1.t}.5,v1=${V1.hex}`, "malformed"],
    ["two timestamps", `t=${V1.t},t=${V1.t},v1=${V1.hex}`, "malformed"],
    ["not key=value at all", "garbage", "malformed"],
    ["absurdly long", `t=${V1.t},v1=${"a".repeat(9000)}`, "malformed"],
  ];
  for (const [name, header, reason] of cases) {
    test(`${name} → ${reason}`, () => {
      expect(verifySignature(header, bytes(V1.body), [V1.secret], V1.t, 300)).toEqual({
        ok: false,
        reason: reason as "missing" | "malformed",
      });
    });
  }

  test("parseSignatureHeader keeps the timestamp exactly as sent (it is part of the signed bytes)", () => {
    expect(parseSignatureHeader(`t=0${V1.t},v1=ab,v1=cd,v0=ef`)).toEqual({
      timestamp: `0${V1.t}`,
      signatures: ["ab", "cd"],
    });
  });
});

describe("Standard Webhooks key derivation (§19, docs/ingest.md 'Switching schemes')", () => {
  // A Stripe-form secret: 43 base62 chars, themselves base64 characters, no padding.
  const stripeForm = `whsec_${"Zq3".repeat(14)}x`;
  const swForm = `whsec_${Buffer.alloc(32, 0xa5).toString("base64")}`;
  const at = new Date(1_795_860_000_000);

  test("the key is the base64 decoding after whsec_: 32 bytes for both secret forms", () => {
    expect(standardWebhooksKey(swForm)).toEqual(Buffer.alloc(32, 0xa5));
    expect(standardWebhooksKey(stripeForm).length).toBe(32);
    // Not the UTF-8 bytes of the string, which is the key of the stripe scheme.
    expect(standardWebhooksKey(stripeForm).equals(Buffer.from(stripeForm, "utf8"))).toBe(false);
  });

  for (const [form, secret] of [
    ["Stripe-form", stripeForm],
    ["Standard Webhooks-form", swForm],
  ] as const) {
    test(`a ${form} secret signs byte for byte as the standardwebhooks and svix libraries sign with it`, () => {
      const ours = `v1,${standardWebhooksSignature(secret, "msg_1", 1_795_860_000, '{"a":1}')}`;
      expect(new Webhook(secret).sign("msg_1", at, '{"a":1}')).toBe(ours);
      expect(new Svix(secret).sign("msg_1", at, '{"a":1}')).toBe(ours);
    });
  }

  test("verifyStandardWebhooks: one valid v1 entry among others suffices; v2 entries are ignored", () => {
    const body = new TextEncoder().encode("{}");
    const good = standardWebhooksSignature(swForm, "m", "1795860000", body);
    const headers = { id: "m", timestamp: "1795860000", signature: `v2,${good} v1,AAAA v1,${good}` };
    expect(verifyStandardWebhooks(headers, body, [swForm], 1_795_860_000, 300)).toEqual({ ok: true });
    expect(verifyStandardWebhooks({ ...headers, signature: `v2,${good}` }, body, [swForm], 1_795_860_000, 300)).toEqual(
      {
        ok: false,
        reason: "malformed",
      },
    );
    expect(verifyStandardWebhooks({ ...headers, timestamp: "1e9" }, body, [swForm], 1_795_860_000, 300)).toEqual({
      ok: false,
      reason: "malformed",
    });
  });
});
