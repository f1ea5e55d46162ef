/**
 * intake.v1.EventFeedService (docs/feed.md). ListFeed is a unary call (a long poll with
 * wait_seconds); StreamFeed is server streaming, written as an async generator so that
 * connect-es pulls the next event only once the previous one was written (back-pressure).
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  FeedStart,
  type ListFeedRequest,
  ListFeedResponseSchema,
  type StreamFeedRequest,
  type StreamFeedResponse,
  StreamFeedResponseSchema,
} from "../../gen/intake/v1/feed_pb.ts";
import type { Feed, FeedPage, LiveItem, StreamItem, StreamOptions } from "../domain/feed.ts";
import type { Logger } from "../logger.ts";
import { eventMessage } from "../shapes/events.ts";
import { bearerCredential } from "./admission.ts";
import { type CallContext, heldMsKey, principalOf, streamEndKey } from "./context.ts";
import { connectErrorFor, toConnectError } from "./errors.ts";
import { rpcMethod } from "./method.ts";

/** What a streaming call reads from its context: the values, the caller's token, its end. */
export type StreamContext = Pick<HandlerContext, "values" | "signal" | "requestHeader">;

function startOf(start: FeedStart): string | undefined {
  if (start === FeedStart.LATEST) return "latest";
  if (start === FeedStart.EARLIEST) return "earliest";
  return undefined;
}

type EventItem = Exclude<StreamItem, { kind: "keep_alive" }>;

/**
 * A server-streaming call over a live stream of the domain (the feed's, the incident
 * changes'): opened with the caller's token (re-verified while it lasts) and the call's end;
 * whatever ends it, before or after the first message, leaves as a ConnectError with the REST code.
 */
export async function openLiveCall<I>(
  ctx: StreamContext,
  logger: Logger,
  open: (options: StreamOptions) => Promise<AsyncGenerator<LiveItem<I>, void, undefined>>,
): Promise<AsyncIterable<LiveItem<I>>> {
  try {
    const credential = bearerCredential(ctx.requestHeader.get("authorization"));
    if (credential === null) throw connectErrorFor("missing_credentials", "This call needs a bearer token.");
    // A reader that stopped reading cannot take the ending error: its listener tears the call down.
    const stream = await open({ credential, signal: ctx.signal, onEnd: ctx.values.get(streamEndKey) });
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* stream;
        } catch (error) {
          throw toConnectError(error, logger);
        } finally {
          await stream.return(undefined);
        }
      },
    };
  } catch (error) {
    throw toConnectError(error, logger);
  }
}

export function createFeedImpl(deps: { feed: Feed; logger: Logger }) {
  const { feed, logger } = deps;

  /** Validates and opens; the iterator throws a ConnectError when the stream must end. */
  function openStream(req: StreamFeedRequest, ctx: StreamContext): Promise<AsyncIterable<LiveItem<EventItem>>> {
    return openLiveCall(ctx, logger, (options) =>
      feed.openStream(
        principalOf(ctx),
        { after: req.after, serviceId: req.serviceId, start: startOf(req.start) },
        options,
      ),
    );
  }

  /**
   * One page of the feed for a ListFeed request (a long poll with wait_seconds). The
   * call's token goes along: a long poll re-checks it while it waits and before it answers.
   */
  function pageOf(
    req: ListFeedRequest,
    ctx: CallContext & Partial<Pick<HandlerContext, "requestHeader">>,
    signal: AbortSignal | undefined,
  ): Promise<FeedPage> {
    const credential = bearerCredential(ctx.requestHeader?.get("authorization") ?? null) ?? undefined;
    return feed.listFeed(
      principalOf(ctx),
      {
        after: req.after,
        limit: req.limit,
        serviceId: req.serviceId,
        start: startOf(req.start),
        waitSeconds: req.waitSeconds,
      },
      { signal, credential },
    );
  }

  return {
    listFeed: rpcMethod(logger, async (req: ListFeedRequest, ctx) => {
      const page = await pageOf(req, ctx, (ctx as Partial<StreamContext>).signal);
      if (page.heldMs > 0) ctx.values.set(heldMsKey, page.heldMs);
      return create(ListFeedResponseSchema, {
        data: page.events.map(eventMessage),
        nextCursor: page.nextCursor,
      });
    }),

    // Keep-alives are an SSE matter: HTTP/2 and Connect streams have their own pings.
    async *streamFeed(req: StreamFeedRequest, ctx: HandlerContext): AsyncGenerator<StreamFeedResponse> {
      for await (const item of await openStream(req, ctx)) {
        if (item.kind === "event") {
          yield create(StreamFeedResponseSchema, { event: eventMessage(item.item.event), cursor: item.item.cursor });
        }
      }
    },
  };
}

export type FeedImpl = ReturnType<typeof createFeedImpl>;
