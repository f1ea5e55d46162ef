import { describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import { createIdGenerator } from "../../src/domain/ids.ts";
import { encodeCursor, pageQuery, toPage } from "../../src/domain/pagination.ts";

function issueOf(run: () => unknown): { code: string; field: string | undefined } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { code: error.code, field: error.details?.[0]?.field };
  }
  throw new Error("expected a DomainError");
}

describe("pagination", () => {
  test("limit defaults to 20 and accepts 1..100", () => {
    expect(pageQuery({})).toEqual({ limit: 20 });
    expect(pageQuery({ limit: 1 })).toEqual({ limit: 1 });
    expect(pageQuery({ limit: 100 })).toEqual({ limit: 100 });
  });

  test("limit 0, 101, negative, fractional or NaN is invalid_request on field limit", () => {
    for (const limit of [0, 101, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(issueOf(() => pageQuery({ limit }))).toEqual({ code: "invalid_request", field: "limit" });
    }
  });

  test("a cursor this API returned decodes to the row id", () => {
    const raw = createIdGenerator()();
    expect(pageQuery({ cursor: encodeCursor(raw) })).toEqual({ limit: 20, before: raw });
  });

  test("an empty, garbage or tampered cursor is invalid_request on field cursor", () => {
    const raw = createIdGenerator()();
    const good = encodeCursor(raw);
    const bad = [
      "",
      "!!!",
      "abc",
      "%00",
      " ",
      `${good}=`,
      `${good}A`,
      good.slice(1),
      encodeCursor(raw.toUpperCase()),
      encodeCursor(`${raw}0`),
      Buffer.from("x".repeat(32)).toString("base64url"),
      "A".repeat(10_000),
    ];
    for (const cursor of bad) {
      expect(issueOf(() => pageQuery({ cursor }))).toEqual({ code: "invalid_request", field: "cursor" });
    }
  });

  test("toPage keeps limit rows and points the cursor at the last one only when more exist", () => {
    const rows = ["c", "b", "a"].map((id) => ({ id: id.repeat(32) }));
    expect(toPage(rows.slice(0, 2), 2)).toEqual({ items: rows.slice(0, 2), nextCursor: null });
    const page = toPage(rows, 2);
    expect(page.items).toEqual(rows.slice(0, 2));
    expect(page.nextCursor).toBe(encodeCursor("b".repeat(32)));
  });
});
