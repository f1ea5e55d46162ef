/**
 * EventFeedService (ListFeed, StreamFeed) and IngestService/GetEvent on real listeners, over
 * Connect JSON, Connect binary, gRPC-Web (main port) and gRPC (h2c port).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient } from "@connectrpc/connect";
import { EventFeedService, FeedStart } from "../../gen/intake/v1/feed_pb.ts";
import { IngestService } from "../../gen/intake/v1/ingest_pb.ts";
import { nextFeedRead } from "../support/feed-marker.ts";
import { sign } from "../support/signing.ts";
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
