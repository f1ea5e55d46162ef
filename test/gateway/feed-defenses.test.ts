/**
 * The feed against hostile readers (docs/feed.md, "Byte budget" and "Live readers"; issue 32):
 * a page's bytes are bounded whatever the payloads, a tenant's live readers share one store read
 * per wake-up, live readers are capped per token and per tenant (429 with the RateLimit fields),
 * a long poll never outlives its token, and a stream nobody reads still gives its slot back and
 * has its connection closed within a second of a revoke. Run on both stacks (INTAKE_TEST_STACK=postgres-redis).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { FEED_PAGE_BYTES } from "../../src/domain/feed.ts";
import { FEED_BATCH_BYTES } from "../../src/domain/feed-live.ts";
import { signPayload } from "../../src/domain/signing.ts";
import { createWorld, type World } from "../support/harness.ts";
import { TCP_TABLE_READABLE, tcpState } from "../support/tcp-state.ts";

let world: World;
afterEach(() => world?.close());

type Stream = Awaited<ReturnType<typeof openStream>>;

/** A JSON payload of exactly `bytes` bytes. */
function payloadOf(bytes: number, tag: number): string {
  const head = `{"n":${tag},"p":"`;
  return `${head}${"x".repeat(bytes - head.length - 2)}"}`;
}

async function ingest(w: World, service: { id: string; secret: string }, body: string): Promise<string> {
  const headers = { "x-service-signature": signPayload(body, service.secret, Math.floor(w.clock.now() / 1000)) };
  const res = await w.request("POST", `/v1/ingest/${service.id}`, { token: null, body, headers });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

/** An in-process SSE reader that counts the events it was sent. */
async function openStream(w: World, token: string, query = "") {
  const abort = new AbortController();
  const res = await w.app.fetch(
    new Request(`http://intake.test/v1/feed/stream${query}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    }),
  );
  let text = "";
  let ended = false;
  const reading = (async () => {
    if (!res.ok || !res.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) text += decoder.decode(chunk, { stream: true });
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  return {
    res,
    events: () => text.split("\nevent: event\n").length - 1,
    ended: () => ended,
    text: () => text,
    async close() {
      abort.abort();
      await reading;
    },
  };
}

async function gauge(w: World): Promise<number> {
  const text = (await w.request("GET", "/metrics", { token: null })).text;
  return Number(/^intake_feed_streams (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
}

/** Counts the store's feed reads (patched on the app's own store object). */
function countFeedReads(w: World): { reads: () => number } {
  const events = w.app.store.events;
  const original = events.feed.bind(events);
  let reads = 0;
  events.feed = (tenantId, query) => {
    reads++;
    return original(tenantId, query);
  };
  return { reads: () => reads };
}

const EVENT = 262_000;

describe("a page's byte budget", () => {
  test(`GET /v1/feed?limit=1000 over 256 KB events: at most ${FEED_PAGE_BYTES} payload bytes a page, next_cursor resumes exactly`, async () => {
    world = await createWorld();
    const s = await world.createService();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await ingest(world, s, payloadOf(EVENT, i)));
    const perPage = Math.floor(FEED_PAGE_BYTES / EVENT);
    const seen: string[] = [];
    let cursor = "";
    for (let pages = 0; pages < 10; pages++) {
      const page = await world.request("GET", `/v1/feed?limit=1000${cursor && `&after=${cursor}`}`);
      expect(page.status).toBe(200);
      if (page.body.data.length === 0) break;
      // Each page: the budget's worth of events, and a body of their bytes plus their fields.
      expect(page.body.data.length).toBeLessThanOrEqual(perPage);
      expect(page.text.length).toBeLessThan(FEED_PAGE_BYTES + 1000 * 400);
      seen.push(...page.body.data.map((e: { id: string }) => e.id));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(ids);
    const first = await world.request("GET", "/v1/feed?limit=1000");
    expect(first.body.data.length).toBe(perPage);
  });

  test("a single event larger than the budget still makes a page of one, and the reader moves past it", async () => {
    world = await createWorld({ env: { INTAKE_MAX_EVENT_BYTES: String(FEED_PAGE_BYTES + 4096) } });
    const s = await world.createService();
    const huge = await ingest(world, s, payloadOf(FEED_PAGE_BYTES + 1024, 1));
    const small = await ingest(world, s, payloadOf(100, 2));
    const first = await world.request("GET", "/v1/feed?limit=1000");
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual([huge]);
    const second = await world.request("GET", `/v1/feed?limit=1000&after=${first.body.next_cursor}`);
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([small]);
  });

  test("a stream's store reads stay within the batch budget and it delivers every 256 KB event once, in order", async () => {
    world = await createWorld();
    const s = await world.createService();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await ingest(world, s, payloadOf(EVENT, i)));
    const events = world.app.store.events;
    const original = events.feed.bind(events);
    const largest: number[] = [];
    events.feed = async (tenantId, query) => {
      const rows = await original(tenantId, query);
      largest.push(rows.reduce((sum, row) => sum + row.payload.length, 0));
      return rows;
    };
    const stream = await openStream(world, world.ownerToken);
    await until(() => stream.events() === ids.length, 10_000, "every event on the stream");
    const order = [...stream.text().matchAll(/"id":"(evt_[0-9a-f]{32})"/g)].map((m) => m[1]);
    expect(order).toEqual(ids);
    expect(Math.max(...largest)).toBeLessThanOrEqual(FEED_BATCH_BYTES);
    await stream.close();
  });
});

describe("live readers share a tenant's reads", () => {
  test("20 streams (filtered and not) of one tenant cost one store read per commit, not 20", async () => {
    world = await createWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const streams: Stream[] = [];
    for (let i = 0; i < 20; i++) {
      const token = (await world.mint({ name: `r${i}`, scope: "read_only" })).token;
      streams.push(await openStream(world, token, i % 2 ? `?service_id=${a.id}` : ""));
    }
    // Every stream has read its way to the end (its first reads are its own) and is waiting.
    await ingest(world, a, '{"warm":true}');
    await until(() => streams.every((s) => s.events() === 1), 10_000, "the first event on every stream");
    const { reads } = countFeedReads(world);
    const started = Date.now();
    const commits = 6;
    for (let i = 0; i < commits; i++) {
      await ingest(world, i % 2 ? b : a, `{"n":${i}}`);
      const expected = (s: number) => (s % 2 ? 1 + Math.ceil((i + 1) / 2) : 2 + i);
      await until(() => streams.every((s, k) => s.events() === expected(k)), 10_000, `commit ${i} on every stream`);
    }
    // One read per commit, plus the tenant's rescan (one read every 2 s, shared too).
    const rescans = Math.ceil((Date.now() - started) / 2_000) + 1;
    expect(reads()).toBeLessThanOrEqual(commits + rescans);
    expect(reads()).toBeLessThan(streams.length);
    for (const s of streams) await s.close();
  });

  test("10 waiting long polls answered by one commit make one shared read after their own first reads", async () => {
    world = await createWorld();
    const s = await world.createService();
    const head = (await world.request("GET", "/v1/feed?start=latest")).body.next_cursor as string;
    const { reads } = countFeedReads(world);
    const tokens = [];
    for (let i = 0; i < 10; i++) tokens.push((await world.mint({ name: `p${i}`, scope: "read_only" })).token);
    const polls = tokens.map((token) => world.request("GET", `/v1/feed?wait=20&after=${head}`, { token }));
    await until(() => reads() >= 10, 10_000, "every long poll's first read");
    const before = reads();
    const started = Date.now();
    const id = await ingest(world, s, '{"woke":true}');
    const answers = await Promise.all(polls);
    for (const answer of answers) expect(answer.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    expect(reads() - before).toBeLessThanOrEqual(1 + Math.ceil((Date.now() - started) / 2_000) + 1);
  });
});

describe("the live-reader caps", () => {
  test("429 rate_limited with the RateLimit fields past 10 streams and long polls per token; a plain page still answers", async () => {
    world = await createWorld();
    const reader = await world.mint({ name: "greedy", scope: "read_only" });
    const streams: Stream[] = [];
    for (let i = 0; i < 9; i++) streams.push(await openStream(world, reader.token));
    expect(streams.every((s) => s.res.status === 200)).toBe(true);
    const poll = world.request("GET", "/v1/feed?wait=20&start=latest", { token: reader.token });
    await until(async () => (await gauge(world)) === 9, 5_000, "nine streams counted");
    await Bun.sleep(50);
    for (const refused of [
      (await openStream(world, reader.token)).res,
      await world.app.fetch(
        new Request("http://intake.test/v1/feed?wait=5", { headers: { authorization: `Bearer ${reader.token}` } }),
      ),
    ]) {
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
      expect(refused.headers.get("ratelimit-policy")).toBe('"feed";q=10;w=1');
      expect(refused.headers.get("ratelimit")).toBe('"feed";r=0;t=1');
      expect(refused.headers.get("retry-after")).toBe("1");
    }
    expect((await world.request("GET", "/v1/feed", { token: reader.token })).status).toBe(200);
    // Another token of the tenant is not held to this token's cap.
    const other = await openStream(world, world.ownerToken);
    expect(other.res.status).toBe(200);
    // A slot given back is a slot to take.
    await streams.pop()?.close();
    const again = await openStream(world, reader.token);
    expect(again.res.status).toBe(200);
    const metrics = (await world.request("GET", "/metrics", { token: null })).text;
    expect(metrics).toMatch(/^intake_rate_limited_total\{policy="feed"\} 2$/m);
    for (const s of [...streams, other, again]) await s.close();
    await world.app.drainStreams();
    await poll;
  });

  test("429 past INTAKE_FEED_READERS_PER_TENANT across the tenant's tokens; another tenant is not held to it", async () => {
    world = await createWorld({ env: { INTAKE_FEED_READERS_PER_TENANT: "3" } });
    const streams: Stream[] = [];
    for (let i = 0; i < 3; i++) {
      const token = (await world.mint({ name: `t${i}`, scope: "read_only" })).token;
      streams.push(await openStream(world, token));
    }
    const refused = await openStream(world, world.ownerToken);
    expect(refused.res.status).toBe(429);
    expect(refused.res.headers.get("ratelimit-policy")).toBe('"feed";q=3;w=1');
    const other = await world.otherTenant();
    const theirs = await openStream(world, other.token);
    expect(theirs.res.status).toBe(200);
    for (const s of [...streams, theirs]) await s.close();
  });
});

describe("a long poll never outlives its token", () => {
  test("401 invalid_credentials within 1.5 s when its token is revoked while it waits, and no event committed after", async () => {
    world = await createWorld();
    const s = await world.createService();
    const reader = await world.mint({ name: "poller", scope: "read_only" });
    const poll = world.request("GET", "/v1/feed?wait=8&start=latest", { token: reader.token });
    await Bun.sleep(200);
    expect((await world.request("DELETE", `/v1/api_tokens/${reader.id}`)).status).toBe(200);
    const revokedAt = Date.now();
    await ingest(world, s, '{"after":"revoke"}');
    const answer = await poll;
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe("invalid_credentials");
    expect(Date.now() - revokedAt).toBeLessThan(1_500);
  });

  test("401 invalid_credentials when its token reaches expires_at while it waits", async () => {
    world = await createWorld();
    const expiresAt = new Date(world.clock.now() + 60_000).toISOString();
    const reader = await world.mint({ name: "short", scope: "read_only", expires_at: expiresAt });
    const poll = world.request("GET", "/v1/feed?wait=8&start=latest", { token: reader.token });
    await Bun.sleep(200);
    world.clock.advance(60_001);
    const expiredAt = Date.now();
    const answer = await poll;
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe("invalid_credentials");
    expect(Date.now() - expiredAt).toBeLessThan(1_500);
  });

  test("an event that wakes the poll after its token expired is not handed out: 401", async () => {
    world = await createWorld();
    const s = await world.createService();
    const expiresAt = new Date(world.clock.now() + 60_000).toISOString();
    const reader = await world.mint({ name: "short", scope: "read_only", expires_at: expiresAt });
    const poll = world.request("GET", "/v1/feed?wait=8&start=latest", { token: reader.token });
    await Bun.sleep(200);
    world.clock.advance(60_001);
    // At once, before the poll's own check comes round: the answer is re-checked.
    await ingest(world, s, '{"after":"expiry"}');
    const answer = await poll;
    expect(answer.status).toBe(401);
  });
});

describe("a stalled stream", () => {
  for (const how of ["revoked", "expired"] as const) {
    test(`a reader that never reads gives its slot back within 1.5 s of its token being ${how} (intake_feed_streams drops), and its connection is closed within 2 s`, async () => {
      world = await createWorld({ env: { INTAKE_FEED_READERS_PER_TENANT: "4" } });
      const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: world.app.fetch });
      const sockets: ReturnType<typeof connect>[] = [];
      const localPorts: number[] = [];
      try {
        const s = await world.createService();
        const expiresAt = new Date(world.clock.now() + 60_000).toISOString();
        const reader = await world.mint({ name: "stalled", scope: "read_only", expires_at: expiresAt });
        for (let i = 0; i < 4; i++) {
          const socket = connect(server.port as number, "127.0.0.1");
          await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
          socket.write(`GET /v1/feed/stream HTTP/1.1\r\nHost: intake\r\nAuthorization: Bearer ${reader.token}\r\n\r\n`);
          socket.pause(); // never reads again
          sockets.push(socket);
          localPorts.push(socket.localPort as number);
        }
        await until(async () => (await gauge(world)) === 4, 5_000, "four streams counted");
        // Far more than the socket buffers take: every stream is stuck on a write.
        for (let i = 0; i < 24; i++) await ingest(world, s, payloadOf(EVENT, i));
        await Bun.sleep(300);
        expect(await gauge(world)).toBe(4);
        if (how === "revoked") expect((await world.request("DELETE", `/v1/api_tokens/${reader.id}`)).status).toBe(200);
        else world.clock.advance(60_001);
        const endedAt = Date.now();
        await until(async () => (await gauge(world)) === 0, 3_000, "the gauge at 0");
        expect(Date.now() - endedAt).toBeLessThan(1_500);
        // The connections themselves are closed (SPEC §10), though no reader read: the server
        // reset them, so the kernel forgot them (a reader's own socket notices when it reads).
        if (TCP_TABLE_READABLE) {
          const port = server.port as number;
          const open = () => localPorts.filter((local) => tcpState(local, port) === "ESTABLISHED");
          await until(() => open().length === 0, 3_000, "the stalled connections closed");
          expect(Date.now() - endedAt).toBeLessThan(2_000);
        }
        // The tenant's slots are free again for its other readers.
        const fresh = await openStream(world, world.ownerToken);
        expect(fresh.res.status).toBe(200);
        await fresh.close();
      } finally {
        for (const socket of sockets) socket.destroy();
        await server.stop(true);
      }
    });
  }

  test("a reader that goes away, reading or stalled, gives its slot back within 1.5 s (intake_feed_streams drops)", async () => {
    world = await createWorld();
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: world.app.fetch });
    const sockets: ReturnType<typeof connect>[] = [];
    try {
      const s = await world.createService();
      for (const stalled of [false, true]) {
        const socket = connect(server.port as number, "127.0.0.1");
        socket.on("error", () => {});
        await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
        socket.write(
          `GET /v1/feed/stream HTTP/1.1\r\nHost: intake\r\nAuthorization: Bearer ${world.ownerToken}\r\n\r\n`,
        );
        if (stalled) socket.pause();
        else socket.on("data", () => {});
        sockets.push(socket);
      }
      await until(async () => (await gauge(world)) === 2, 5_000, "two streams counted");
      for (let i = 0; i < 24; i++) await ingest(world, s, payloadOf(EVENT, i));
      await Bun.sleep(300);
      for (const socket of sockets) socket.destroy();
      const goneAt = Date.now();
      await until(async () => (await gauge(world)) === 0, 3_000, "the gauge at 0");
      expect(Date.now() - goneAt).toBeLessThan(1_500);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.stop(true);
    }
  });
});
