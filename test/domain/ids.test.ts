import { describe, expect, test } from "bun:test";
import {
  createIdGenerator,
  createRequestIdGenerator,
  formatId,
  newTenantId,
  parseId,
  TENANT_ID,
} from "../../src/domain/ids.ts";

describe("ids", () => {
  test("ids are 32 lowercase hex of a UUIDv7 (version 7, RFC 4122 variant)", () => {
    const next = createIdGenerator(() => Date.parse("2026-11-22T10:00:00.000Z"));
    for (let i = 0; i < 100; i++) {
      const id = next();
      expect(id).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    }
  });

  test("the first 48 bits are the millisecond timestamp", () => {
    const ms = Date.parse("2026-11-22T10:00:00.123Z");
    const id = createIdGenerator(() => ms)();
    expect(Number.parseInt(id.slice(0, 12), 16)).toBe(ms);
  });

  test("ids are strictly increasing within one millisecond, past the 4096-per-ms counter", () => {
    const next = createIdGenerator(() => 1_700_000_000_000);
    let previous = "";
    for (let i = 0; i < 10_000; i++) {
      const id = next();
      expect(id > previous).toBe(true);
      previous = id;
    }
  });

  test("ids stay increasing when the clock steps back", () => {
    let now = 1_700_000_000_000;
    const next = createIdGenerator(() => now);
    const a = next();
    now -= 5_000;
    const b = next();
    now += 10_000;
    const c = next();
    expect(b > a).toBe(true);
    expect(c > b).toBe(true);
  });

  test("ids across milliseconds sort by time", () => {
    let now = 1_700_000_000_000;
    const next = createIdGenerator(() => now);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      ids.push(next(), next());
      now += 1;
    }
    expect([...ids].sort()).toEqual(ids);
  });

  test("request ids are req_ + 32 hex of a UUIDv4 (version 4, RFC 9562 variant), past one batch", () => {
    const next = createRequestIdGenerator();
    for (let i = 0; i < 600; i++) {
      expect(next()).toMatch(/^req_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    }
  });

  test("request ids never repeat, within a batch or across batches and generators", () => {
    const a = createRequestIdGenerator();
    const b = createRequestIdGenerator();
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) seen.add(a()).add(b());
    expect(seen.size).toBe(4_000);
    expect(parseId("req", a())).toMatch(/^[0-9a-f]{32}$/);
  });

  test("formatId then parseId round-trips for every kind", () => {
    const raw = createIdGenerator()();
    for (const kind of ["tok", "svc", "evt", "req"] as const) {
      expect(parseId(kind, formatId(kind, raw))).toBe(raw);
    }
  });

  test("parseId rejects malformed ids with null", () => {
    const raw = "0193a1b2c3d4e5f60718293a4b5c6d7e";
    const bad = [
      "",
      "tok_",
      raw,
      `tok${raw}`,
      `tok-${raw}`,
      `TOK_${raw}`,
      `svc_${raw}`,
      `tok_${raw.toUpperCase()}`,
      `tok_${raw.slice(1)}`,
      `tok_${raw}0`,
      `tok_${raw.slice(0, 31)}g`,
      `tok_${raw.slice(0, 31)} `,
      ` tok_${raw}`,
      `tok_${raw.slice(0, 8)}-${raw.slice(8, 31)}`,
      `tok_${raw.slice(0, 31)}\u0000`,
      `tok_${raw.slice(0, 30)}é`,
      `tok_${"0".repeat(10_000)}`,
    ];
    for (const id of bad) expect(parseId("tok", id)).toBeNull();
  });

  test("tenant ids are raw UUIDs with dashes", () => {
    const id = newTenantId();
    expect(id).toMatch(TENANT_ID);
    expect(TENANT_ID.test(id.replaceAll("-", ""))).toBe(false);
  });
});
