/**
 * The feed over REST (docs/feed.md): GET /v1/feed (pages, start, filter, long poll),
 * GET /v1/events/{id}, and GET /v1/feed/stream (SSE) with every end condition.
 */
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { parseConfig } from "../../src/config.ts";
import { signPayload } from "../../src/domain/signing.ts";
import { nextFeedRead } from "../support/feed-marker.ts";
import { createWorld, type World } from "../support/harness.ts";

let world: World;
afterEach(() => world?.close());

async function ingest(w: World, service: { id: string; secret: string }, body: string, key?: string) {
  const headers: Record<string, string> = {
    "x-service-signature": signPayload(body, service.secret, Math.floor(w.clock.now() / 1000)),
  };
  if (key !== undefined) headers["idempotency-key"] = key;
  const res = await w.request("POST", `/v1/ingest/${service.id}`, { token: null, body, headers });
  expect([200, 202]).toContain(res.status);
  return res.body.id as string;
}

function feed(w: World, query = "", token?: string) {
  return w.request("GET", `/v1/feed${query}`, token === undefined ? {} : { token });
}

/** An SSE reader over the in-process gateway: messages as they arrive, and the end. */
async function openStream(w: World, query = "", headers: Record<string, string> = {}, token?: string) {
  const abort = new AbortController();
  const res = await w.app.fetch(
    new Request(`http://intake.test/v1/feed/stream${query}`, {
      headers: { authorization: `Bearer ${token ?? w.ownerToken}`, ...headers },
      signal: abort.signal,
    }),
  );
  const messages: Array<{ id?: string; event?: string; data?: string; comment?: string }> = [];
  let ended = false;
  let buffer = "";
  const reading = (async () => {
    if (!res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const message: (typeof messages)[number] = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) message.comment = line.slice(1).trim();
            else {
              const at = line.indexOf(": ");
              const field = line.slice(0, at) as "id" | "event" | "data";
              message[field] = line.slice(at + 2);
            }
          }
          messages.push(message);
        }
      }
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  const events = () => messages.filter((m) => m.event === "event");
  /** The stream's own first message (`: stream open`) has arrived. */
  const opened = () => messages.some((m) => m.comment === "stream open");
  async function until(condition: () => boolean, ms = 5_000) {
    const deadline = Date.now() + ms;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out; messages so far: ${JSON.stringify(messages)}`);
      await Bun.sleep(10);
    }
  }
  return {
    res,
    messages,
    events,
    opened,
    ended: () => ended,
    until,
    async close() {
      abort.abort();
      await reading;
    },
  };
}

describe("GET /v1/feed", () => {
  test("200 oldest first with cursors that resume without gaps or repeats", async () => {
    world = await createWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await ingest(world, i % 2 ? b : a, `{"n":${i}}`));

    const first = await feed(world, "?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data[0]).toEqual({
      id: ids[0],
      service_id: a.id,
      received_at: new Date(world.clock.now()).toISOString(),
      idempotency_key: null,
      type: null,
      incident_id: null,
      payload: { n: 0 },
    });
    const second = await feed(world, `?limit=2&after=${first.body.next_cursor}`);
    const third = await feed(world, `?limit=2&after=${second.body.next_cursor}`);
    expect([...second.body.data, ...third.body.data].map((e: { id: string }) => e.id)).toEqual(ids.slice(2));

    // Nothing new: an empty page whose cursor is the request's own position.
    const empty = await feed(world, `?after=${third.body.next_cursor}`);
    expect(empty.body).toEqual({ data: [], next_cursor: third.body.next_cursor });
    const later = await ingest(world, a, '{"n":5}');
    expect((await feed(world, `?after=${empty.body.next_cursor}`)).body.data.map((e: { id: string }) => e.id)).toEqual([
      later,
    ]);
  });

  test("start=latest gives an empty page whose cursor sees only later events; a duplicate gets no new place", async () => {
    world = await createWorld();
    const s = await world.createService();
    await ingest(world, s, '{"old":true}', "k1");
    const now = await feed(world, "?start=latest");
    expect(now.status).toBe(200);
    expect(now.body.data).toEqual([]);
    await ingest(world, s, '{"repeat":true}', "k1");
    const fresh = await ingest(world, s, '{"new":true}');
    const page = await feed(world, `?after=${now.body.next_cursor}`);
    expect(page.body.data.map((e: { id: string }) => e.id)).toEqual([fresh]);
    expect((await feed(world, "?start=earliest")).body.data).toHaveLength(2);
  });

  test("service_id keeps one service's events, and its cursor works without the filter", async () => {
    world = await createWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const a1 = await ingest(world, a, '{"a":1}');
    await ingest(world, b, '{"b":1}');
    const a2 = await ingest(world, a, '{"a":2}');
    const b2 = await ingest(world, b, '{"b":2}');
    const filtered = await feed(world, `?service_id=${a.id}&limit=1`);
    expect(filtered.body.data.map((e: { id: string }) => e.id)).toEqual([a1]);
    const rest = await feed(world, `?service_id=${a.id}&after=${filtered.body.next_cursor}`);
    expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual([a2]);
    const unfiltered = await feed(world, `?after=${rest.body.next_cursor}`);
    expect(unfiltered.body.data.map((e: { id: string }) => e.id)).toEqual([b2]);
    expect((await feed(world, "?service_id=svc_00000000000000000000000000000000")).status).toBe(404);
  });

  test("400 invalid_request for another tenant's cursor, an undecodable cursor, and limit or wait out of range", async () => {
    world = await createWorld();
    const s = await world.createService();
    await ingest(world, s, "{}");
    const mine = (await feed(world)).body.next_cursor as string;
    const other = await world.otherTenant();
    const foreign = await feed(world, `?after=${mine}`, other.token);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe("invalid_request");
    for (const query of ["?after=nope", "?after=", "?limit=0", "?limit=1001", "?wait=31", "?start=middle"]) {
      const res = await feed(world, query);
      expect({ query, status: res.status, code: res.body.error.code }).toEqual({
        query,
        status: 400,
        code: "invalid_request",
      });
    }
    expect((await feed(world, "?limit=1000")).status).toBe(200);
  });

  test("wait answers as soon as an event arrives, and with an empty page after `wait` seconds", async () => {
    world = await createWorld();
    const s = await world.createService();
    const head = (await feed(world, "?start=latest")).body.next_cursor as string;

    const started = Date.now();
    const firstRead = nextFeedRead(world.app);
    const held = feed(world, `?after=${head}&wait=10`);
    // The poll's first read found nothing: from here it waits for a wake-up.
    expect(await firstRead).toEqual([]);
    const id = await ingest(world, s, '{"live":1}');
    const answer = await held;
    expect(answer.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    expect(Date.now() - started).toBeLessThan(5_000);

    const emptyStarted = Date.now();
    const empty = await feed(world, `?after=${answer.body.next_cursor}&wait=1`);
    expect(empty.body).toEqual({ data: [], next_cursor: answer.body.next_cursor });
    expect(Date.now() - emptyStarted).toBeGreaterThanOrEqual(950);
  });
});

describe("GET /v1/events/{id}", () => {
  test("200 the event with its payload verbatim; 404 for another tenant's or a malformed id", async () => {
    world = await createWorld();
    const s = await world.createService();
    const body = '{"b":  [1, 2.50, "x"]}';
    const id = await ingest(world, s, body, "key-1");
    const res = await world.request("GET", `/v1/events/${id}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain(`"payload":${body}`);
    expect(res.body).toMatchObject({ id, service_id: s.id, idempotency_key: "key-1" });
    const other = await world.otherTenant();
    const foreign = await world.request("GET", `/v1/events/${id}`, { token: other.token });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");
    expect((await world.request("GET", "/v1/events/evt_nothex")).status).toBe(404);
  });
});

describe("GET /v1/feed/stream", () => {
  test("200 text/event-stream: events live with their cursor as id, resumable with Last-Event-ID", async () => {
    world = await createWorld();
    const s = await world.createService();
    const before = await ingest(world, s, '{"n":0}');
    const stream = await openStream(world);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get("content-type")).toStartWith("text/event-stream");
    const live = [await ingest(world, s, '{"n":1}'), await ingest(world, s, '{"n":2}')];
    await stream.until(() => stream.events().length === 3);
    const got = stream.events().map((m) => JSON.parse(m.data as string).id);
    expect(got).toEqual([before, ...live]);
    await stream.close();

    // Reconnect from the second event: Last-Event-ID wins over `after`.
    const second = stream.events()[1]?.id as string;
    const resumed = await openStream(world, "?start=latest", { "last-event-id": second });
    await resumed.until(() => resumed.events().length === 1);
    expect(JSON.parse(resumed.events()[0]?.data as string).id).toBe(live[1]);
    await resumed.close();
  });

  test("data: stays one line for a payload with line breaks between its tokens; the page keeps the exact bytes", async () => {
    world = await createWorld();
    const s = await world.createService();
    const body = '{"a": 1,\r\n  "b":\n"x\\ny",\r"c": "é"\n}\n';
    const id = await ingest(world, s, body);
    const stream = await openStream(world);
    await stream.until(() => stream.events().length === 1);
    const event = JSON.parse(stream.events()[0]?.data as string);
    expect(event).toMatchObject({ id, payload: { a: 1, b: "x\ny", c: "é" } });
    await stream.close();
    expect((await feed(world)).text).toContain(`"payload":${body}}`);
  });

  test("intake_feed_streams counts open streams and drops when one ends", async () => {
    world = await createWorld();
    const gauge = async () => {
      const text = (await world.request("GET", "/metrics", { token: null })).text;
      return Number(/^intake_feed_streams (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
    };
    const stream = await openStream(world);
    const deadline = Date.now() + 3_000;
    while ((await gauge()) !== 1 && Date.now() < deadline) await Bun.sleep(20);
    expect(await gauge()).toBe(1);
    await stream.close();
    while ((await gauge()) !== 0 && Date.now() < deadline + 3_000) await Bun.sleep(20);
    expect(await gauge()).toBe(0);
  });

  test("400 before the stream opens for another tenant's Last-Event-ID", async () => {
    world = await createWorld();
    const s = await world.createService();
    await ingest(world, s, "{}");
    const cursor = (await feed(world)).body.next_cursor as string;
    const other = await world.otherTenant();
    const stream = await openStream(world, "", { "last-event-id": cursor }, other.token);
    expect(stream.res.status).toBe(400);
    await stream.close();
  });

  test("ends within 1 s when its token is revoked", async () => {
    world = await createWorld();
    const reader = await world.mint({ name: "reader", scope: "read_only" });
    const stream = await openStream(world, "", {}, reader.token);
    expect(stream.res.status).toBe(200);
    await stream.until(() => stream.opened());
    expect((await world.request("DELETE", `/v1/api_tokens/${reader.id}`)).status).toBe(200);
    const revokedAt = Date.now();
    await stream.until(() => stream.ended(), 3_000);
    expect(Date.now() - revokedAt).toBeLessThan(1_500);
    expect(JSON.parse(stream.messages.at(-1)?.data as string).error.code).toBe("invalid_credentials");
  });

  test("ends at the token's expires_at", async () => {
    world = await createWorld();
    const expiresAt = new Date(world.clock.now() + 60_000).toISOString();
    const reader = await world.mint({ name: "short", expires_at: expiresAt });
    const checks = spyOn(world.app.domain.tokens, "verifyToken");
    const stream = await openStream(world, "", {}, reader.token);
    await stream.until(() => stream.opened());
    // The stream re-checks its token on a timer: one check after it opened finds it valid.
    const opened = checks.mock.calls.length;
    await stream.until(() => checks.mock.calls.length > opened);
    expect(stream.ended()).toBe(false);
    world.clock.advance(60_000);
    await stream.until(() => stream.ended(), 3_000);
  });

  test("ends when the filtered service is deleted", async () => {
    world = await createWorld();
    const s = await world.createService();
    const stream = await openStream(world, `?service_id=${s.id}`);
    await ingest(world, s, "{}");
    await stream.until(() => stream.events().length === 1);
    expect((await world.request("DELETE", `/v1/services/${s.id}`)).status).toBe(204);
    await stream.until(() => stream.ended(), 3_000);
    expect(JSON.parse(stream.messages.at(-1)?.data as string).error.code).toBe("not_found");
  });

  test("on drain, sends every committed event and then ends", async () => {
    world = await createWorld();
    const s = await world.createService();
    const stream = await openStream(world);
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push(await ingest(world, s, `{"n":${i}}`));
    world.app.drainStreams();
    await stream.until(() => stream.ended(), 5_000);
    expect(stream.events().map((m) => JSON.parse(m.data as string).id)).toEqual(ids);
    expect(JSON.parse(stream.messages.at(-1)?.data as string).error.code).toBe("unavailable");
  });
});

describe("retention", () => {
  test("INTAKE_EVENT_RETENTION_DAYS: a sweep deletes older events with their idempotency keys; an old cursor resumes at the oldest retained event", async () => {
    world = await createWorld({ env: { INTAKE_EVENT_RETENTION_DAYS: "1" } });
    const s = await world.createService();
    await ingest(world, s, '{"old":1}', "k-old");
    const oldCursor = (await feed(world)).body.next_cursor as string;
    world.clock.advance(2 * 86_400_000);
    const kept = await ingest(world, s, '{"new":1}');
    // The background sweep may have run already; a sweep now leaves the same state.
    await world.app.domain.retention.sweep();
    expect((await feed(world)).body.data.map((e: { id: string }) => e.id)).toEqual([kept]);
    const fromStart = await feed(world, "?start=earliest");
    expect(fromStart.body.data.map((e: { id: string }) => e.id)).toEqual([kept]);
    expect((await feed(world, `?after=${oldCursor}`)).body.data.map((e: { id: string }) => e.id)).toEqual([kept]);
    // The key went with its event: the same key now stores a new event (202, not a duplicate).
    const headers = { "x-service-signature": signPayload("{}", s.secret, Math.floor(world.clock.now() / 1000)) };
    const again = await world.request("POST", `/v1/ingest/${s.id}`, {
      token: null,
      body: "{}",
      headers: { ...headers, "idempotency-key": "k-old" },
    });
    expect(again.status).toBe(202);
  });

  test("INTAKE_EVENT_RETENTION_DAYS outside 1..3650 is a configuration error naming the variable", () => {
    for (const value of ["0", "3651", "x"]) {
      expect(() => parseConfig({ INTAKE_EVENT_RETENTION_DAYS: value, DATABASE_URL: "sqlite::memory:" })).toThrow(
        /INTAKE_EVENT_RETENTION_DAYS/,
      );
    }
  });
});
