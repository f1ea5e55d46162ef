import { describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import { type EventSearchRequest, encodeSearchCursor, eventSearchQuery } from "../../src/domain/search.ts";

const TENANT = "0b6f2a51-3c1e-4d2a-9f3b-1a2b3c4d5e6f";
const RAW = "0190f4c0a1b27c3d8e9f0a1b2c3d4e5f";

function refusal(request: EventSearchRequest, searchEnabled = true): DomainError {
  try {
    eventSearchQuery(TENANT, request, { searchEnabled });
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

const fields = (error: DomainError) => (error.details ?? []).map((d) => d.field);

describe("§18 query rules", () => {
  test("q is split on whitespace into its terms; the store is asked for one row more than the page", () => {
    expect(eventSearchQuery(TENANT, { q: "  cus_123\tA@Example.com\ninvoice.pa " }, { searchEnabled: true })).toEqual({
      limit: 21,
      terms: ["cus_123", "A@Example.com", "invoice.pa"],
    });
  });

  test("400 invalid_request when a term of q is under 3 characters, counted in code points", () => {
    const error = refusal({ q: "cus_123 ab" });
    expect(error.code).toBe("invalid_request");
    expect(error.details).toEqual([{ field: "q", message: "every term must be at least 3 characters" }]);
    // Three code points, four UTF-16 units: long enough.
    expect(eventSearchQuery(TENANT, { q: "a😀b" }, { searchEnabled: true }).terms).toEqual(["a😀b"]);
    expect(fields(refusal({ q: "é😀" }))).toEqual(["q"]);
  });

  test("400 invalid_request past 8 terms, and for a q with no term at all", () => {
    expect(
      eventSearchQuery(TENANT, { q: "one two six ten abc def ghi jkl" }, { searchEnabled: true }).terms,
    ).toHaveLength(8);
    expect(refusal({ q: "one two six ten abc def ghi jkl mno" }).details).toEqual([
      { field: "q", message: "must hold at most 8 terms" },
    ]);
    expect(refusal({ q: "   " }).details).toEqual([{ field: "q", message: "must hold at least one term" }]);
    expect(refusal({ q: "" }).code).toBe("invalid_request");
  });

  test("400 search_disabled for any q while INTAKE_EVENT_SEARCH=false, even a q that would be a 400 otherwise", () => {
    expect(refusal({ q: "cus_123" }, false).code).toBe("search_disabled");
    expect(refusal({ q: "ab" }, false).code).toBe("search_disabled");
    // The filters still work without search.
    expect(eventSearchQuery(TENANT, { type: "invoice.paid" }, { searchEnabled: false })).toEqual({
      limit: 21,
      type: "invoice.paid",
    });
  });

  test("400 invalid_request with one detail per bad parameter", () => {
    const error = refusal({
      serviceId: "svc_nope",
      incidentId: `svc_${RAW}`,
      type: "",
      receivedAfter: "2026-02-30T00:00:00Z",
      receivedBefore: "yesterday",
      limit: 101,
      cursor: "!!",
    });
    expect(error.code).toBe("invalid_request");
    expect(fields(error).sort()).toEqual(
      ["cursor", "incident_id", "limit", "received_after", "received_before", "service_id", "type"].sort(),
    );
    expect(fields(refusal({ type: "x".repeat(256) }))).toEqual(["type"]);
    expect(fields(refusal({ limit: 0 }))).toEqual(["limit"]);
  });

  test("ids are taken raw and times as epoch ms (after inclusive, before exclusive: the store's reading)", () => {
    expect(
      eventSearchQuery(
        TENANT,
        {
          serviceId: `svc_${RAW}`,
          incidentId: `inc_${RAW}`,
          receivedAfter: "2026-11-26T10:00:00+01:00",
          receivedBefore: "2026-11-26T10:00:00.5Z",
          limit: 5,
        },
        { searchEnabled: true },
      ),
    ).toEqual({
      limit: 6,
      serviceId: RAW,
      incidentId: RAW,
      receivedAfter: Date.parse("2026-11-26T09:00:00Z"),
      receivedBefore: Date.parse("2026-11-26T10:00:00.500Z"),
    });
  });

  test("a cursor resumes below its position; another tenant's, a forged or an old (received_at, id) cursor is a 400", () => {
    const cursor = encodeSearchCursor(TENANT, 1234);
    expect(eventSearchQuery(TENANT, { cursor }, { searchEnabled: true }).before).toBe(1234);
    expect(refusal({ cursor: encodeSearchCursor(crypto.randomUUID(), 1) }).details).toEqual([
      { field: "cursor", message: "belongs to another tenant" },
    ]);
    const old = Buffer.from(`s1|${TENANT}|1800000000000|${RAW}`, "latin1").toString("base64url");
    expect(refusal({ cursor: old }).details).toEqual([
      { field: "cursor", message: "is not a cursor this API returned" },
    ]);
    const forged = Buffer.from(`s2|${TENANT}|1.5`, "latin1").toString("base64url");
    expect(fields(refusal({ cursor: forged }))).toEqual(["cursor"]);
  });
});
