/**
 * The feed at the domain level (docs/feed.md): pages and cursors, the long poll, and a live
 * stream with its end conditions — through domain.feed over a real in-memory SQLite store and
 * the in-process notifier, events written by domain.ingest; no HTTP, no Connect.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { DomainError } from "../../src/domain/errors.ts";
import { createFeed, type StreamItem } from "../../src/domain/feed.ts";
import { formatId } from "../../src/domain/ids.ts";
import { noopObserver } from "../../src/domain/ports/observer.ts";
import { createLogger } from "../../src/logger.ts";
import { createLocalNotifier } from "../../src/notify/local.ts";
import { createDomainWorld, type DomainWorld } from "../support/domain.ts";
import { nextFeedRead } from "../support/feed-marker.ts";

let world: DomainWorld;
afterEach(() => world?.close());

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error("expected a refusal, got a result");
}

/** Ingests `n` events on `service`; their raw ids in order. */
async function ingestN(w: DomainWorld, service: { id: string; secret: string }, n: number, tag = "e") {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await w.ingest(service, `{"${tag}":${i}}`)).id);
  return ids;
}

/** The next `n` events a stream yields (keep-alives skipped); throws when the stream ends first. */
async function take(stream: AsyncGenerator<StreamItem>, n: number): Promise<Array<{ id: string; cursor: string }>> {
  const got: Array<{ id: string; cursor: string }> = [];
  while (got.length < n) {
    const next = await stream.next();
    if (next.done) throw new Error(`stream ended after ${got.length} of ${n} events`);
    if (next.value.kind === "event") got.push({ id: next.value.item.event.id, cursor: next.value.item.cursor });
  }
  return got;
}

describe("pages", () => {
  test("oldest first across services; next_cursor resumes without a gap or a repeat; an empty page keeps the position", async () => {
    world = await createDomainWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const ids = [
      ...(await ingestN(world, a, 2, "a")),
      ...(await ingestN(world, b, 2, "b")),
      ...(await ingestN(world, a, 1, "c")),
    ];
    const { feed } = world.domain;
    const seen: string[] = [];
    let after: string | undefined;
    for (let round = 0; round < 3; round++) {
      const page = await feed.listFeed(world.owner, { limit: 2, after });
      seen.push(...page.events.map((e) => e.id));
      after = page.nextCursor;
    }
    expect(seen).toEqual(ids);
    const empty = await feed.listFeed(world.owner, { after });
    expect(empty).toEqual({ events: [], nextCursor: after as string, heldMs: 0 });
  });

  test("a duplicate gets no place of its own: the feed holds the first event once", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    const first = await world.ingest(s, '{"try":1}', { idempotencyKey: "k" });
    await world.ingest(s, '{"try":2}', { idempotencyKey: "k" });
    const page = await world.domain.feed.listFeed(world.owner, {});
    expect(page.events.map((e) => e.id)).toEqual([first.id]);
  });

  test("start=latest sees only what comes after; service_id keeps one service's events", async () => {
    world = await createDomainWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    await ingestN(world, a, 2);
    const now = await world.domain.feed.listFeed(world.owner, { start: "latest" });
    expect(now.events).toEqual([]);
    const onB = (await world.ingest(b, "{}")).id;
    const onA = (await world.ingest(a, "{}")).id;
    const later = await world.domain.feed.listFeed(world.owner, { after: now.nextCursor });
    expect(later.events.map((e) => e.id)).toEqual([onB, onA]);
    const onlyA = await world.domain.feed.listFeed(world.owner, { after: now.nextCursor, serviceId: a.id });
    expect(onlyA.events.map((e) => e.id)).toEqual([onA]);
  });

  test("a tenant never sees another's events, and another tenant's cursor or service is refused", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    await ingestN(world, s, 2);
    const mine = await world.domain.feed.listFeed(world.owner, {});
    const other = await world.otherTenant();
    expect((await world.domain.feed.listFeed(other, {})).events).toEqual([]);
    expect((await refusal(world.domain.feed.listFeed(other, { after: mine.nextCursor }))).code).toBe("invalid_request");
    expect((await refusal(world.domain.feed.listFeed(other, { serviceId: s.id }))).code).toBe("not_found");
    const event = mine.events[0]?.id as string;
    expect((await refusal(world.domain.feed.getEvent(other, formatId("evt", event)))).code).toBe("not_found");
    expect((await world.domain.feed.getEvent(world.owner, formatId("evt", event))).id).toBe(event);
  });

  test("invalid_request for limit or wait out of range and for an unknown start", async () => {
    world = await createDomainWorld();
    const { feed } = world.domain;
    for (const request of [
      { limit: 0 },
      { limit: 1001 },
      { waitSeconds: 31 },
      { waitSeconds: -1 },
      { start: "middle" },
    ]) {
      expect({ request, code: (await refusal(feed.listFeed(world.owner, request))).code }).toEqual({
        request,
        code: "invalid_request",
      });
    }
  });
});

describe("the long poll", () => {
  test("a waiting poll answers with the event committed while it waited", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    const head = await world.domain.feed.listFeed(world.owner, { start: "latest" });
    const firstRead = nextFeedRead(world);
    const held = world.domain.feed.listFeed(world.owner, { after: head.nextCursor, waitSeconds: 30 });
    expect(await firstRead).toEqual([]);
    const { id } = await world.ingest(s, "{}");
    expect((await held).events.map((e) => e.id)).toEqual([id]);
  });

  test("a drain answers a waiting poll at once with an empty page", async () => {
    world = await createDomainWorld();
    const head = await world.domain.feed.listFeed(world.owner, { start: "latest" });
    const firstRead = nextFeedRead(world);
    const held = world.domain.feed.listFeed(world.owner, { after: head.nextCursor, waitSeconds: 30 });
    await firstRead;
    world.domain.feed.drain();
    expect(await held).toMatchObject({ events: [], nextCursor: head.nextCursor });
  });
});

describe("the stream", () => {
  test("yields what is stored, then events as they are committed, each with a cursor that resumes right after it", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    const [before] = await ingestN(world, s, 1, "before");
    const stream = await world.domain.feed.openStream(world.owner, {}, { credential: world.ownerToken });
    const [first] = await take(stream, 1);
    expect(first?.id).toBe(before);
    const live = await ingestN(world, s, 2, "live");
    const got = await take(stream, 2);
    expect(got.map((e) => e.id)).toEqual(live);
    await stream.return(undefined);
    const resumed = await world.domain.feed.listFeed(world.owner, { after: got[0]?.cursor });
    expect(resumed.events.map((e) => e.id)).toEqual(live.slice(1));
  });

  test("a stream filtered to a service yields only that service's events", async () => {
    world = await createDomainWorld();
    const a = await world.createService("a");
    const b = await world.createService("b");
    const stream = await world.domain.feed.openStream(
      world.owner,
      { serviceId: a.id },
      { credential: world.ownerToken },
    );
    await ingestN(world, b, 2, "b");
    const [onA] = await ingestN(world, a, 1, "a");
    expect((await take(stream, 1)).map((e) => e.id)).toEqual([onA as string]);
    await stream.return(undefined);
  });

  test("ends with invalid_credentials when its token is revoked, after what it had already sent", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    const reader = await world.domain.tokens.issueToken(world.owner, { name: "reader", scope: "read_only" }, null);
    const stream = await world.domain.feed.openStream(world.owner, {}, { credential: reader.token });
    const [id] = await ingestN(world, s, 1);
    expect((await take(stream, 1)).map((e) => e.id)).toEqual([id as string]);
    await world.domain.tokens.revokeToken(world.owner, formatId("tok", reader.record.id), null);
    expect((await refusal(take(stream, 1))).code).toBe("invalid_credentials");
  });

  test("ends with not_found when its filtered service is deleted", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    const stream = await world.domain.feed.openStream(
      world.owner,
      { serviceId: s.id },
      { credential: world.ownerToken },
    );
    const firstRead = nextFeedRead(world);
    const pulling = refusal(take(stream, 1));
    await firstRead;
    await world.domain.services.deleteService(world.owner, s.id, null);
    expect((await pulling).code).toBe("not_found");
  });

  test("on drain sends every committed event, then ends with unavailable", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    const stream = await world.domain.feed.openStream(world.owner, {}, { credential: world.ownerToken });
    const ids = await ingestN(world, s, 120);
    world.domain.feed.drain();
    expect((await take(stream, 120)).map((e) => e.id)).toEqual(ids);
    expect((await refusal(take(stream, 1))).code).toBe("unavailable");
  });

  test("on drain, a stream nobody pulls is ended through onEnd (unavailable) once the drain's grace passed; one that finished is told too", async () => {
    world = await createDomainWorld();
    const s = await world.createService("s");
    // The app's feed, but with a short drain grace; the same store and token check.
    const feed = createFeed({
      store: world.store,
      notifier: createLocalNotifier(),
      verifyToken: (credential) => world.domain.tokens.verifyToken(credential),
      observer: noopObserver,
      logger: createLogger(() => {}),
      drainGraceMs: 200,
    });
    const ended: string[] = [];
    const onEnd = (who: string) => (reason: DomainError) => ended.push(`${who}:${reason.code}`);
    const stalled = await feed.openStream(world.owner, {}, { credential: world.ownerToken, onEnd: onEnd("stalled") });
    const reading = await feed.openStream(world.owner, {}, { credential: world.ownerToken, onEnd: onEnd("reading") });
    const ids = await ingestN(world, s, 3);
    // The stalled reader takes one event, then stops pulling, as a transport parked on a full socket.
    expect((await take(stalled, 1)).map((e) => e.id)).toEqual(ids.slice(0, 1));
    feed.drain();
    expect((await take(reading, 3)).map((e) => e.id)).toEqual(ids);
    expect((await refusal(take(reading, 1))).code).toBe("unavailable");
    await Bun.sleep(100);
    expect(ended).toEqual([]);
    await Bun.sleep(250);
    // Both through the end path: the reading one's ending may still sit behind a full socket.
    expect(ended.sort()).toEqual(["reading:unavailable", "stalled:unavailable"]);
    await stalled.return(undefined);
  });

  test("a token revoked before the stream is opened ends it at its first pull", async () => {
    world = await createDomainWorld();
    const reader = await world.domain.tokens.issueToken(world.owner, { name: "reader", scope: "read_only" }, null);
    await world.domain.tokens.revokeToken(world.owner, formatId("tok", reader.record.id), null);
    const stream = await world.domain.feed.openStream(world.owner, {}, { credential: reader.token });
    expect((await refusal(take(stream, 1))).code).toBe("invalid_credentials");
  });
});
