/**
 * The event JSON writer every REST event surface uses (src/gateway/event-json.ts): the stored
 * payload bytes verbatim, each event's own fields, exact byte lengths whatever the characters.
 */
import { expect, test } from "bun:test";
import type { EventRecord } from "../../src/domain/types.ts";
import { eventsJson } from "../../src/gateway/event-json.ts";

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
    `{"id":"evt_${"0".repeat(31)}1","service_id":"svc_${"f".repeat(32)}","received_at":"2026-11-23T17:00:00.005Z","idempotency_key":"k-1","payload":${payloads[0]}},` +
    `{"id":"evt_${"0".repeat(31)}2","service_id":"svc_${"f".repeat(32)}","received_at":"2026-11-23T17:00:00.005Z","idempotency_key":null,"payload":${payloads[1]}},` +
    `{"id":"evt_${"0".repeat(31)}3","service_id":"svc_${"f".repeat(32)}","received_at":"2026-11-23T17:00:00.006Z","idempotency_key":"q\\"uote\\\\ ünï","payload":{}}` +
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
