/**
 * The explorer's address and its rows' text (src/console/event-query.ts, docs/console.md
 * "Events explorer and senders"): a view's filters survive the round trip through the address,
 * the time filters show and send the same instant, and a row carries only the payload's first
 * line, cut to 200 characters without splitting one.
 */
import { describe, expect, test } from "bun:test";
import {
  explorerPath,
  FIRST_LINE_MAX,
  filtersOf,
  firstLine,
  isoOfLocal,
  localOfIso,
  typeLabel,
} from "../../src/console/event-query.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("the explorer's address", () => {
  test("a view's filters and cursor round-trip through the address, words and e-mails included", () => {
    const view = {
      q: "Ada@Example.com invoice.pa",
      service_id: `svc_${"a".repeat(32)}`,
      type: "invoice.paid",
      incident_id: `inc_${"b".repeat(32)}`,
      received_after: "2026-11-26T10:00:00.000Z",
      received_before: "2026-11-27T10:00:00.000Z",
      cursor: "czF8dGVzdA",
    };
    const path = explorerPath(view);
    expect(path).toStartWith("/events?");
    expect(filtersOf(path.slice("/events".length))).toEqual(view);
  });

  test("no filter is the bare explorer; empty values and unknown keys are left out", () => {
    expect(explorerPath({})).toBe("/events");
    expect(explorerPath({ q: "", type: undefined })).toBe("/events");
    expect(filtersOf("?q=&type=tick&limit=5&utm_source=x")).toEqual({ type: "tick" });
  });
});

describe("the time filters", () => {
  test("a datetime-local value is sent as the instant it names, and shown back as the same value", () => {
    const iso = isoOfLocal("2026-11-26T09:30");
    expect(iso).toBe(new Date("2026-11-26T09:30").toISOString());
    expect(localOfIso(iso)).toBe("2026-11-26T09:30");
  });

  test("an empty or unreadable value is no bound", () => {
    expect(isoOfLocal("")).toBeUndefined();
    expect(isoOfLocal("not a time")).toBeUndefined();
    expect(localOfIso(undefined)).toBe("");
    expect(localOfIso("garbage")).toBe("");
  });
});

describe("a row's payload text", () => {
  test("a one-line JSON body is the whole of it, exactly as received", () => {
    const body = '{"type":"invoice.paid","amount":4200}';
    expect(firstLine(bytes(body))).toBe(body);
  });

  test("a multi-line body shows its first line only (LF or CRLF)", () => {
    expect(firstLine(bytes('{\n  "type": "invoice.paid"\n}'))).toBe("{");
    expect(firstLine(bytes('{"a":1,\r\n"b":2}'))).toBe('{"a":1,');
  });

  test("a long line is cut at 200 characters with an ellipsis, never inside a character", () => {
    const long = `{"note":"${"é".repeat(150)}${"🙂".repeat(150)}"}`;
    const shown = firstLine(bytes(long));
    expect(shown.endsWith("…")).toBe(true);
    const chars = Array.from(shown.slice(0, -1));
    expect(chars).toHaveLength(FIRST_LINE_MAX);
    expect(chars.join("")).toBe(Array.from(long).slice(0, FIRST_LINE_MAX).join(""));
  });

  test("a line of exactly 200 characters is shown whole", () => {
    const line = "x".repeat(FIRST_LINE_MAX);
    expect(firstLine(bytes(line))).toBe(line);
  });
});

describe("a row's type", () => {
  const event = (body: string, type?: string) => ({ type, payload: bytes(body) });

  test("an event with a type shows it as the API gives it", () => {
    expect(typeLabel(event('{"type":"invoice.paid"}', "invoice.paid"))).toBe("invoice.paid");
  });

  test("an alert event (top-level event_action, no type) reads 'alert · <action>' for each action", () => {
    for (const action of ["trigger", "acknowledge", "resolve"]) {
      expect(typeLabel(event(` {"event_action":"${action}","dedup_key":"db-disk"}`))).toBe(`alert · ${action}`);
    }
  });

  test("a plain event with no type, an event_action that is not top-level, and a body that is not JSON have none", () => {
    expect(typeLabel(event('{"message":"hi"}'))).toBeNull();
    expect(typeLabel(event('{"data":{"event_action":"trigger"}}'))).toBeNull();
    expect(typeLabel(event('"event_action" as text'))).toBeNull();
    expect(typeLabel(event('{"event_action":"trigger"'))).toBeNull();
  });
});
