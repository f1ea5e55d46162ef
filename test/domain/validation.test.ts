import { describe, expect, test } from "bun:test";
import { DomainError, type FieldIssue } from "../../src/domain/errors.ts";
import { checkName, throwIfIssues } from "../../src/domain/validation.ts";

function check(value: string): { stored: string; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const stored = checkName("name", value, issues);
  return { stored, issues };
}

describe("name validation", () => {
  test("names are stored trimmed", () => {
    expect(check("  Acme Corp \t\n")).toEqual({ stored: "Acme Corp", issues: [] });
    expect(check("\u00a0Acme\u3000")).toEqual({ stored: "Acme", issues: [] });
  });

  test("empty or whitespace-only names are invalid", () => {
    for (const value of ["", " ", "\t\n ", "\u00a0"]) {
      expect(check(value).issues).toEqual([{ field: "name", message: "must not be empty after trimming" }]);
    }
  });

  test("80 code points after trimming are fine, 81 are not", () => {
    expect(check("a".repeat(80)).issues).toEqual([]);
    expect(check(`  ${"a".repeat(80)}  `).issues).toEqual([]);
    expect(check("a".repeat(81)).issues).toHaveLength(1);
    expect(check("a".repeat(81)).issues[0]?.field).toBe("name");
  });

  test("astral characters count as one code point each (80 emoji = 160 UTF-16 units is fine)", () => {
    const eighty = "😀".repeat(80);
    expect(eighty.length).toBe(160);
    expect(check(eighty).issues).toEqual([]);
    expect(check(`${eighty}😀`).issues).toHaveLength(1);
    expect(check(`${"𝒜".repeat(79)}a`).issues).toEqual([]);
  });

  test("C0 control characters (U+0000..U+001F) inside a name are invalid; DEL and C1 are allowed", () => {
    for (const c of ["\u0000", "\u0001", "\u0007", "\t", "\n", "\r", "\u001b", "\u001f"]) {
      const { issues } = check(`a${c}b`);
      expect(issues).toEqual([{ field: "name", message: "must not contain control characters" }]);
    }
    expect(check("a\u007fb").issues).toEqual([]);
    expect(check("a\u0085b").issues).toEqual([]);
  });

  test("every broken rule is reported at once", () => {
    const issues: FieldIssue[] = [];
    checkName("name", `\u0000${"x".repeat(90)}`, issues);
    expect(issues.map((i) => i.message)).toEqual([
      "must be at most 80 characters after trimming",
      "must not contain control characters",
    ]);
  });

  test("throwIfIssues throws invalid_request carrying the details, and nothing for none", () => {
    expect(() => throwIfIssues([])).not.toThrow();
    try {
      throwIfIssues([{ field: "name", message: "x" }]);
      throw new Error("expected a throw");
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe("invalid_request");
      expect((error as DomainError).details).toEqual([{ field: "name", message: "x" }]);
    }
  });
});
