/**
 * EventFeedService (ListFeed, StreamFeed) and IngestService/GetEvent on real listeners, over
 * Connect JSON, Connect binary, gRPC-Web (main port) and gRPC (h2c port).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as http2 from "node:http2";
import { connect } from "node:net";
import { ConnectError, createClient } from "@connectrpc/connect";
import { EventFeedService, FeedStart } from "../../gen/intake/v1/feed_pb.ts";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { FEED_PAGE_BYTES } from "../../src/domain/feed.ts";
import { nextFeedRead } from "../support/feed-marker.ts";
import { sign } from "../support/signing.ts";
import { TCP_TABLE_READABLE, tcpState } from "../support/tcp-state.ts";
import { bearer, failure, type Served, serveWorld, TRANSPORTS, transportFor } from "./support.ts";

describe.each(TRANSPORTS)("%s", (name) => {
  let served: Served;
  let owner: ReturnType<typeof bearer>;
  let service: { id: string; secret: string };

  beforeAll(async () => {
    served = await serveWorld();
    owner = bearer(served.world.ownerToken);
    service = await served.world.createService();
  });
  afterAll(() => served.close());

  const clients = () => {
    const transport = transportFor(served, name);
    return { feed: createClient(EventFeedService, transport), ingest: createClient(IngestService, transport) };
  };

  async function ingest(body: string): Promise<string> {
    const payload = new TextEncoder().encode(body);
    const res = await clients().ingest.ingest({
      serviceId: service.id,
      signature: sign(service.secret, payload, served.world.clock.now()),
      payload,
    });
    return res.id;
  }

  test("ListFeed pages oldest first; the next_cursor resumes; GetEvent returns the bytes", async () => {
    const { feed, ingest: ingestClient } = clients();
    const head = await feed.listFeed({ start: FeedStart.LATEST }, owner);
    expect(head.data).toEqual([]);
    const ids = [await ingest('{"n":1}'), await ingest('{"n":2}'), await ingest('{"n":3}')];
    const first = await feed.listFeed({ after: head.nextCursor, limit: 2 }, owner);
    const second = await feed.listFeed({ after: first.nextCursor, limit: 2 }, owner);
    expect([...first.data, ...second.data].map((e) => e.id)).toEqual(ids);
    const got = await ingestClient.getEvent({ id: ids[1] as string }, owner);
    expect(new TextDecoder().decode(got.event?.payload)).toBe('{"n":2}');
  });

  test("ListFeed with wait_seconds answers when an event arrives", async () => {
    const { feed } = clients();
    const head = await feed.listFeed({ start: FeedStart.LATEST }, owner);
    const firstRead = nextFeedRead(served.world.app);
    const held = feed.listFeed({ after: head.nextCursor, waitSeconds: 10 }, owner);
    // The poll's first read found nothing: from here it waits for a wake-up.
    expect(await firstRead).toEqual([]);
    const id = await ingest('{"waited":true}');
    expect((await held).data.map((e) => e.id)).toEqual([id]);
  });

  test("StreamFeed delivers live events with their cursors, in order", async () => {
    const { feed } = clients();
    const head = await feed.listFeed({ start: FeedStart.LATEST }, owner);
    const abort = new AbortController();
    const received: Array<{ id: string; cursor: string }> = [];
    const reading = (async () => {
      try {
        for await (const message of feed.streamFeed({ after: head.nextCursor }, { ...owner, signal: abort.signal })) {
          received.push({ id: message.event?.id ?? "", cursor: message.cursor });
        }
      } catch {
        // cancelled
      }
    })();
    const ids = [await ingest('{"s":1}'), await ingest('{"s":2}')];
    const deadline = Date.now() + 5_000;
    while (received.length < 2 && Date.now() < deadline) await Bun.sleep(10);
    abort.abort();
    await reading;
    expect(received.map((r) => r.id)).toEqual(ids);
    // The cursor of the first resumes right after it.
    const after = await feed.listFeed({ after: received[0]?.cursor }, owner);
    expect(after.data.map((e) => e.id)).toEqual([ids[1] as string]);
  });

  test("StreamFeed ends with unauthenticated (invalid_credentials) when its token is revoked", async () => {
    const { feed } = clients();
    const reader = await served.world.mint({ name: "stream-reader", scope: "read_only" });
    const firstRead = nextFeedRead(served.world.app);
    const call = (async () => {
      for await (const _ of feed.streamFeed({ start: FeedStart.LATEST }, bearer(reader.token))) {
        // no events expected
      }
    })();
    // The stream has read the store once: it is open, idle, and watching its token.
    expect(await firstRead).toEqual([]);
    expect((await served.world.request("DELETE", `/v1/api_tokens/${reader.id}`)).status).toBe(200);
    const failed = await failure(call);
    expect(failed).toMatchObject({ code: "unauthenticated", restCode: "invalid_credentials" });
  });

  test("ListFeed pages of 256 KB events stop at the byte budget and resume exactly from next_cursor", async () => {
    const { feed } = clients();
    const head = await feed.listFeed({ start: FeedStart.LATEST }, owner);
    const ids: string[] = [];
    for (let i = 0; i < 15; i++) ids.push(await ingest(`{"n":${i},"p":"${"x".repeat(262_000 - 20)}"}`));
    const perPage = Math.floor(FEED_PAGE_BYTES / 262_000);
    const seen: string[] = [];
    let cursor = head.nextCursor;
    for (let pages = 0; pages < 5; pages++) {
      const page = await feed.listFeed({ after: cursor, limit: 1000 }, owner);
      if (page.data.length === 0) break;
      expect(page.data.length).toBeLessThanOrEqual(perPage);
      seen.push(...page.data.map((e) => e.id));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(ids);
  });

  test("resource_exhausted (rate_limited) with the RateLimit fields past 10 live reads of one token", async () => {
    const { feed } = clients();
    const reader = await served.world.mint({ name: `capped-${name}`, scope: "read_only" });
    const abort = new AbortController();
    const open = () =>
      (async () => {
        for await (const _ of feed.streamFeed(
          { start: FeedStart.LATEST },
          { ...bearer(reader.token), signal: abort.signal },
        )) {
          // idle
        }
      })().catch((error: unknown) => error);
    const held = Array.from({ length: 10 }, open);
    await Bun.sleep(300);
    // The fields ride on the error: response headers (Connect) or trailers (gRPC, gRPC-Web).
    let metadata: Headers | undefined;
    try {
      await feed.listFeed({ start: FeedStart.LATEST, waitSeconds: 5 }, bearer(reader.token));
    } catch (error) {
      metadata = ConnectError.from(error).metadata;
    }
    expect(metadata?.get("ratelimit-policy")).toBe('"feed";q=10;w=1');
    expect(metadata?.get("retry-after")).toBe("1");
    const refused = await failure(feed.listFeed({ start: FeedStart.LATEST, waitSeconds: 5 }, bearer(reader.token)));
    expect(refused).toMatchObject({ code: "resource_exhausted", restCode: "rate_limited" });
    const streamRefused = await failure(
      (async () => {
        for await (const _ of feed.streamFeed({ start: FeedStart.LATEST }, bearer(reader.token))) {
          // refused before any message
        }
      })(),
    );
    expect(streamRefused).toMatchObject({ code: "resource_exhausted", restCode: "rate_limited" });
    abort.abort();
    await Promise.all(held);
  });

  test("ListFeed with wait_seconds ends unauthenticated when its token is revoked while it waits", async () => {
    const { feed } = clients();
    const reader = await served.world.mint({ name: `poller-${name}`, scope: "read_only" });
    const poll = feed.listFeed({ start: FeedStart.LATEST, waitSeconds: 8 }, bearer(reader.token));
    await Bun.sleep(200);
    expect((await served.world.request("DELETE", `/v1/api_tokens/${reader.id}`)).status).toBe(200);
    const revokedAt = Date.now();
    await ingest('{"after":"revoke"}');
    expect(await failure(poll)).toMatchObject({ code: "unauthenticated", restCode: "invalid_credentials" });
    expect(Date.now() - revokedAt).toBeLessThan(1_500);
  });

  test("invalid_argument for another tenant's cursor; not_found for another tenant's event", async () => {
    const { feed, ingest: ingestClient } = clients();
    const id = await ingest("{}");
    const mine = await feed.listFeed({}, owner);
    const other = await served.world.otherTenant();
    expect(await failure(feed.listFeed({ after: mine.nextCursor }, bearer(other.token)))).toMatchObject({
      code: "invalid_argument",
      restCode: "invalid_request",
    });
    expect(await failure(ingestClient.getEvent({ id }, bearer(other.token)))).toMatchObject({
      code: "not_found",
      restCode: "not_found",
    });
  });
});

describe("a stalled StreamFeed", () => {
  let served: Served;
  beforeAll(async () => {
    served = await serveWorld();
  });
  afterAll(() => served.close());

  async function gauge(): Promise<number> {
    const text = (await served.world.request("GET", "/metrics", { token: null })).text;
    return Number(/^intake_feed_streams (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  }

  for (const how of ["revoked", "expired"] as const) {
    test(`a Connect and a gRPC reader that never read give their slots back within 1.5 s of their token being ${how}; the Connect connection is closed and the gRPC stream reset (CANCEL) within 2 s`, async () => {
      const service = await served.world.createService(`stalled-${how}`);
      const expiresAt = new Date(served.world.clock.now() + 60_000).toISOString();
      const reader = await served.world.mint({ name: `stalled-rpc-${how}`, scope: "read_only", expires_at: expiresAt });
      // Connect streaming on the main port, from a socket that stops reading.
      const url = new URL(served.baseUrl);
      const socket = connect(Number(url.port), url.hostname);
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      const localPort = socket.localPort as number;
      const message = new TextEncoder().encode("{}");
      const frame = new Uint8Array(5 + message.length);
      new DataView(frame.buffer).setUint32(1, message.length);
      frame.set(message, 5);
      socket.write(
        "POST /intake.v1.EventFeedService/StreamFeed HTTP/1.1\r\nHost: intake\r\n" +
          `Authorization: Bearer ${reader.token}\r\nContent-Type: application/connect+json\r\n` +
          `Content-Length: ${frame.length}\r\n\r\n`,
      );
      socket.write(frame);
      socket.pause();
      // gRPC on the h2c port, a call whose reader is paused at once: its flow-control window fills.
      const session = http2.connect(served.grpcUrl);
      session.on("error", () => {});
      const call = session.request({
        ":method": "POST",
        ":path": "/intake.v1.EventFeedService/StreamFeed",
        "content-type": "application/grpc",
        te: "trailers",
        authorization: `Bearer ${reader.token}`,
      });
      call.on("error", () => {});
      call.end(new Uint8Array(5)); // one empty StreamFeedRequest
      call.pause();
      let resetAt: number | null = null;
      call.once("close", () => {
        resetAt = Date.now();
      });
      try {
        const deadline = Date.now() + 5_000;
        while ((await gauge()) !== 2 && Date.now() < deadline) await Bun.sleep(20);
        expect(await gauge()).toBe(2);
        const body = `{"p":"${"x".repeat(262_000)}"}`;
        for (let i = 0; i < 24; i++) {
          const payload = new TextEncoder().encode(body);
          const res = await served.world.request("POST", `/v1/ingest/${service.id}`, {
            token: null,
            body: payload,
            headers: { "x-service-signature": sign(service.secret, payload, served.world.clock.now()) },
          });
          expect(res.status).toBe(202);
        }
        await Bun.sleep(300);
        expect(await gauge()).toBe(2);
        if (how === "revoked") {
          expect((await served.world.request("DELETE", `/v1/api_tokens/${reader.id}`)).status).toBe(200);
        } else served.world.clock.advance(60_001);
        const endedAt = Date.now();
        while ((await gauge()) !== 0 && Date.now() < endedAt + 3_000) await Bun.sleep(20);
        expect(await gauge()).toBe(0);
        expect(Date.now() - endedAt).toBeLessThan(1_500);
        // The gRPC call itself is closed, not only its slot: the server reset its HTTP/2 stream
        // though the reader never read the ending status (SPEC §10, within 1 s of the revoke or expiry).
        while (resetAt === null && Date.now() < endedAt + 3_000) await Bun.sleep(20);
        expect(call.rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
        expect((resetAt ?? Number.POSITIVE_INFINITY) - endedAt).toBeLessThan(2_000);
        // On the main port the connection itself is reset: the kernel forgets it, though the
        // reader never read (its own socket notices when it reads again).
        if (TCP_TABLE_READABLE) {
          const port = Number(url.port);
          while (tcpState(localPort, port) === "ESTABLISHED" && Date.now() < endedAt + 3_000) {
            await Bun.sleep(20);
          }
          expect(tcpState(localPort, port)).not.toBe("ESTABLISHED");
          expect(Date.now() - endedAt).toBeLessThan(2_000);
        }
      } finally {
        call.close();
        session.destroy();
        socket.destroy();
      }
    });
  }
});
