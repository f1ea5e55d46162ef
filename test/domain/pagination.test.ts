import { describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import { createIdGenerator } from "../../src/domain/ids.ts";
import { encodeCursor, pageQuery, positionPageQuery, toPage, toPositionPage } from "../../src/domain/pagination.ts";

function issueOf(run: () => unknown): { code: string; field: string | undefined } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { code: error.code, field: error.details?.[0]?.field };
  }
  throw new Error("expected a DomainError");
}

const SCOPE = { list: "services", tenantId: "0193a1b2-c3d4-7e5f-8071-8293a4b5c6d7" };

describe("pagination", () => {
  test("limit defaults to 20 and accepts 1..100", () => {
    expect(pageQuery({}, SCOPE)).toEqual({ limit: 20 });
    expect(pageQuery({ limit: 1 }, SCOPE)).toEqual({ limit: 1 });
    expect(pageQuery({ limit: 100 }, SCOPE)).toEqual({ limit: 100 });
  });

  test("limit 0, 101, negative, fractional or NaN is invalid_request on field limit", () => {
    for (const limit of [0, 101, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(issueOf(() => pageQuery({ limit }, SCOPE))).toEqual({ code: "invalid_request", field: "limit" });
    }
  });

  test("a cursor this API returned decodes to the row id", () => {
    const raw = createIdGenerator()();
    expect(pageQuery({ cursor: encodeCursor(raw, SCOPE) }, SCOPE)).toEqual({ limit: 20, before: raw });
  });

  test("an empty, garbage or tampered cursor is invalid_request on field cursor", () => {
    const raw = createIdGenerator()();
    const good = encodeCursor(raw, SCOPE);
    const bad = [
      "",
      "!!!",
      "abc",
      "%00",
      " ",
      `${good}=`,
      `${good}AA`,
      good.slice(1),
      encodeCursor(raw.toUpperCase(), SCOPE),
      encodeCursor(`${raw}0`, SCOPE),
      // The encoding of cursors before they named their list: the bare row id.
      Buffer.from(raw, "latin1").toString("base64url"),
      Buffer.from(`c1|services|${SCOPE.tenantId}|${raw}|x`, "latin1").toString("base64url"),
      Buffer.from(`c0|services|${SCOPE.tenantId}|${raw}`, "latin1").toString("base64url"),
      Buffer.from("x".repeat(32)).toString("base64url"),
      "A".repeat(10_000),
    ];
    for (const cursor of bad) {
      expect([cursor, issueOf(() => pageQuery({ cursor }, SCOPE))]).toEqual([
        cursor,
        { code: "invalid_request", field: "cursor" },
      ]);
    }
  });

  test("a cursor of another list or another tenant is invalid_request on field cursor", () => {
    const raw = createIdGenerator()();
    for (const other of [
      { ...SCOPE, list: "api_tokens" },
      { ...SCOPE, list: `events:${raw}` },
      { ...SCOPE, tenantId: "0193a1b2-c3d4-7e5f-8071-8293a4b5c6d8" },
    ]) {
      expect(issueOf(() => pageQuery({ cursor: encodeCursor(raw, other) }, SCOPE))).toEqual({
        code: "invalid_request",
        field: "cursor",
      });
    }
  });

  test("a list name is a lowercase word, optionally with a raw parent id", () => {
    const raw = createIdGenerator()();
    for (const list of ["feed", "audit_log", `events:${raw}`]) {
      const scope = { ...SCOPE, list };
      expect(pageQuery({ cursor: encodeCursor(raw, scope) }, scope).before).toBe(raw);
    }
    expect(() => encodeCursor(raw, { ...SCOPE, list: "a|b" })).toThrow();
  });

  test("toPage keeps limit rows and points the cursor at the last one only when more exist", () => {
    const rows = ["c", "b", "a"].map((id) => ({ id: id.repeat(32) }));
    expect(toPage(rows.slice(0, 2), 2, SCOPE)).toEqual({ items: rows.slice(0, 2), nextCursor: null });
    const page = toPage(rows, 2, SCOPE);
    expect(page.items).toEqual(rows.slice(0, 2));
    expect(page.nextCursor).toBe(encodeCursor("b".repeat(32), SCOPE));
  });

  test("a service's events page by position: its cursor resumes below the last row's; an id cursor of that list is 400 on cursor", () => {
    const events = { list: `events:${"a".repeat(32)}`, tenantId: SCOPE.tenantId };
    const rows = [{ position: 9 }, { position: 7 }, { position: 4 }];
    const page = toPositionPage(rows, 2, events);
    expect(page.items).toEqual([{ position: 9 }, { position: 7 }]);
    expect(positionPageQuery({ cursor: page.nextCursor ?? "" }, events)).toEqual({ limit: 20, before: 7 });
    expect(issueOf(() => positionPageQuery({ cursor: page.nextCursor ?? "" }, { ...events, tenantId: "x" }))).toEqual({
      code: "invalid_request",
      field: "cursor",
    });
    const idCursor = encodeCursor(createIdGenerator()(), events);
    expect(issueOf(() => positionPageQuery({ cursor: idCursor }, events))).toEqual({
      code: "invalid_request",
      field: "cursor",
    });
  });
});
