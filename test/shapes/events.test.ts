/**
 * The event JSON writer every REST event surface uses (src/shapes/events.ts): the stored
 * payload bytes verbatim, each event's own fields, exact byte lengths whatever the characters.
 */
import { expect, test } from "bun:test";
import type { EventRecord } from "../../src/domain/types.ts";
import { eventsJson } from "../../src/shapes/events.ts";

const utf8 = new TextEncoder();

function event(n: number, receivedAt: number, payload: string, idempotencyKey: string | null = null): EventRecord {
  return {
    id: n.toString(16).padStart(32, "0"),
    tenantId: "t",
    serviceId: "f".repeat(32),
    receivedAt,
    idempotencyKey,
    payload: utf8.encode(payload),
    position: n,
    type: null,
    incidentId: null,
  };
}

test("each payload's bytes verbatim between the event's own fields, in order, around prefix and suffix", () => {
  const t0 = Date.UTC(2026, 10, 23, 17, 0, 0, 5);
  const payloads = ['{ "z" :\t"héllo ☃ 😀 \\u00e9",\r\n "a":[1 , 2.50e1] }', '{"n":1}', "{}"];
  const events = [
    event(1, t0, payloads[0] as string, "k-1"),
    event(2, t0, payloads[1] as string),
    event(3, t0 + 1, payloads[2] as string, 'q"uote\\ ünï'),
  ];
  const bytes = eventsJson("[«", events, "»]");
  const expected =
    "[«" +
    `{"id":"evt_${"0".repeat(31)}1","service_id":"svc_${"f".repeat(32)}","received_at":"2026-11-23T17:00:00.005Z","idempotency_key":"k-1","type":null,"incident_id":null,"payload":${payloads[0]}},` +
    `{"id":"evt_${"0".repeat(31)}2","service_id":"svc_${"f".repeat(32)}","received_at":"2026-11-23T17:00:00.005Z","idempotency_key":null,"type":null,"incident_id":null,"payload":${payloads[1]}},` +
    `{"id":"evt_${"0".repeat(31)}3","service_id":"svc_${"f".repeat(32)}","received_at":"2026-11-23T17:00:00.006Z","idempotency_key":"q\\"uote\\\\ ünï","type":null,"incident_id":null,"payload":{}}` +
    "»]";
  expect(Buffer.from(bytes).equals(Buffer.from(expected, "utf8"))).toBe(true);
  const page = JSON.parse(new TextDecoder().decode(eventsJson("[", events, "]")));
  expect(page.map((e: { idempotency_key: string | null }) => e.idempotency_key)).toEqual(["k-1", null, 'q"uote\\ ünï']);
});

test("no events: the prefix and suffix alone", () => {
  expect(new TextDecoder().decode(eventsJson('{"data":[', [], '],"next_cursor":"x"}'))).toBe(
    '{"data":[],"next_cursor":"x"}',
  );
});

test("received_at is exactly what Date#toISOString writes, across seconds, days, 1970 and year 10000", () => {
  const times = [
    0,
    1,
    999,
    1_000,
    -1,
    -999,
    -1_000,
    -1_001,
    86_399_999,
    86_400_000,
    Date.UTC(2026, 10, 23, 23, 59, 59, 999),
    Date.UTC(2026, 10, 24),
    Date.UTC(2026, 10, 24, 0, 0, 0, 1),
    Date.UTC(10_000, 0, 1, 0, 0, 1, 500),
    Date.UTC(2026, 0, 1) + 0.7,
  ];
  const events = times.map((t, i) => event(i, t, "{}"));
  const page = JSON.parse(new TextDecoder().decode(eventsJson("[", events, "]")));
  expect(page.map((e: { received_at: string }) => e.received_at)).toEqual(times.map((t) => new Date(t).toISOString()));
});

test("a time Date cannot write is an error, not a wrong answer", () => {
  expect(() => eventsJson("[", [event(1, 8.64e15 + 1, "{}")], "]")).toThrow(RangeError);
  expect(() => eventsJson("[", [event(1, Number.NaN, "{}")], "]")).toThrow(RangeError);
});
