/**
 * The feed operations (docs/feed.md): `GET /v1/feed` (pages and long polls), `GET /v1/feed/stream`
 * (Server-Sent Events) and `GET /v1/events/{id}`. Events are written by the one event writer
 * (shapes/events.ts), each stored payload embedded verbatim.
 */
import { t } from "elysia";
import type { DomainError } from "../domain/errors.ts";
import type { LiveItem, StreamItem, StreamOptions } from "../domain/feed.ts";
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FEED_MAX_WAIT_SECONDS } from "../domain/feed.ts";
import type { EventRecord } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import { bearerCredential } from "../rpc/admission.ts";
import { restErrorOf, toConnectError } from "../rpc/errors.ts";
import { eventPageJson, eventsJson } from "../shapes/events.ts";
import { JSON_TYPE } from "./http.ts";
import { EventRecordSchema } from "./ingest.ts";
import { caller, type Operation, type OperationDeps, operation } from "./operation.ts";
import { component, IdParams, ServiceId } from "./schemas.ts";
import { stallGuard } from "./stall-guard.ts";

const utf8 = new TextEncoder();

const Cursor = t.String({ minLength: 1, description: "a cursor this tenant was given (next_cursor, or an SSE id)" });
const Start = t.Union([t.Literal("earliest"), t.Literal("latest")], {
  description: "where to begin without `after`: the oldest retained event (default) or the current end",
});

const FeedQuery = t.Object(
  {
    after: t.Optional(Cursor),
    limit: t.Optional(t.Integer({ minimum: 1, maximum: FEED_MAX_LIMIT, default: FEED_DEFAULT_LIMIT, title: "limit" })),
    service_id: t.Optional(ServiceId),
    start: t.Optional(Start),
    wait: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: FEED_MAX_WAIT_SECONDS,
        default: 0,
        title: "wait",
        description: "long poll: seconds to hold an empty answer until an event arrives",
      }),
    ),
  },
  { additionalProperties: true },
);

export const StreamQuery = t.Object(
  { after: t.Optional(Cursor), service_id: t.Optional(ServiceId), start: t.Optional(Start) },
  { additionalProperties: true },
);

const FeedPageSchema = t.Object(
  {
    data: t.Array(EventRecordSchema, { description: "oldest first", maxItems: FEED_MAX_LIMIT }),
    next_cursor: t.String({ description: "never null: where to resume" }),
  },
  component("FeedPage"),
);

/** An SSE message or comment. */
export function sse(text: string): Uint8Array {
  return utf8.encode(text);
}

function isKeepAlive<I>(item: LiveItem<I>): item is { kind: "keep_alive" } {
  return (item as { kind?: unknown }).kind === "keep_alive";
}

/** The headers of every SSE answer. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  // Reverse proxies (nginx) would otherwise buffer the stream.
  "x-accel-buffering": "no",
};

/**
 * One event as an SSE message. `data:` is one line (docs/feed.md), and SSE ends a line at any
 * CR or LF, so a payload's line breaks are sent as spaces: JSON allows them only as whitespace
 * between tokens (inside a string they are escaped), so the JSON means the same. Pages,
 * GET /v1/events/{id} and the RPC stream carry the exact bytes.
 */
function sseEvent(cursor: string, event: EventRecord): Uint8Array {
  const head = `id: ${cursor}\nevent: event\ndata: `;
  const message = eventsJson(head, [event], "\n\n");
  const end = message.length - 2;
  for (const lineBreak of [0x0a, 0x0d]) {
    for (
      let at = message.indexOf(lineBreak, head.length);
      at >= 0 && at < end;
      at = message.indexOf(lineBreak, at + 1)
    ) {
      message[at] = 0x20;
    }
  }
  return message;
}

/**
 * The OpenAPI `responses` and `parameters` of a live SSE route: `messages` describes what it
 * sends, `lastId` what its `Last-Event-ID` header holds.
 */
export function sseDoc(messages: string, lastId: string) {
  return {
    responses: {
      200: {
        description: "The stream, open until the caller or the server ends it",
        content: { "text/event-stream": { schema: { type: "string", description: messages } } },
      },
    },
    parameters: [
      {
        name: "Last-Event-ID",
        in: "header",
        required: false,
        description: `${lastId} (a cursor); wins over \`after\``,
        schema: { type: "string" },
      },
    ],
  };
}

/**
 * A live stream's SSE answer, the feed's and the incidents' alike: `Last-Event-ID` (EventSource
 * clients resend it on reconnect) wins over `after`, and the stream re-verifies the caller's
 * token while it lasts (docs/feed.md); when it must end, a reader that does not take its end
 * within the grace has its connection reset. A quiet stream outlasts the listener's idle timeout
 * (`keepOpen`): its keep-alives and end conditions, not a quiet spell, decide when it ends.
 */
export async function sseAnswer<I>(
  request: Request,
  query: { after?: string | undefined; service_id?: string | undefined; start?: string | undefined },
  { logger, keepOpen }: Pick<OperationDeps, "logger" | "keepOpen">,
  message: (item: I) => Uint8Array,
  open: (
    position: { after?: string | undefined; serviceId?: string | undefined; start?: string | undefined },
    options: StreamOptions,
  ) => Promise<AsyncGenerator<LiveItem<I>, void, undefined>>,
): Promise<Response> {
  const lastEventId = request.headers.get("last-event-id");
  const credential = bearerCredential(request.headers.get("authorization")) ?? "";
  const body = sseBody(logger, message);
  // A reader that stopped reading never takes `event: end`: its connection is reset (stall-guard.ts).
  const guard = stallGuard();
  const onEnd = (reason: DomainError) => {
    body.onEnd(reason);
    guard.endSoon();
  };
  const stream = await open(
    { after: lastEventId ? lastEventId : query.after, serviceId: query.service_id, start: query.start },
    { credential, signal: request.signal, onEnd },
  );
  keepOpen?.(request);
  return new Response(guard.body(body.body(stream)), { status: 200, headers: SSE_HEADERS });
}

/**
 * The SSE body of a stream: its items as they are pulled, then `event: end` with the reason.
 * `onEnd` goes to openStream: a stream that must end while nothing pulls (a reader that stopped
 * reading) is ended here at once, or its connection would stay until the reader reads again.
 */
export function sseBody<I>(logger: Logger, message: (item: I) => Uint8Array) {
  let sink: ReadableStreamDefaultController<Uint8Array> | undefined;
  let stream: AsyncGenerator<LiveItem<I>, void, undefined> | undefined;
  let pulling = false;
  let closed = false;
  /** Why the stream ended, for readers that look; then the connection closes. */
  const finish = (error: unknown) => {
    if (closed || !sink) return;
    closed = true;
    const rest = restErrorOf(toConnectError(error, logger));
    const reason = rest ?? { code: "internal_error", message: "The stream ended." };
    sink.enqueue(
      sse(`event: end\ndata: ${JSON.stringify({ error: { code: reason.code, message: reason.message } })}\n\n`),
    );
    sink.close();
  };
  return {
    onEnd(reason: DomainError): void {
      if (pulling) return; // the pull in progress ends it
      finish(reason);
      void stream?.return(undefined);
    },
    body(opened: AsyncGenerator<LiveItem<I>, void, undefined>): ReadableStream<Uint8Array> {
      stream = opened;
      // highWaterMark 0: the next event is read only once the socket took the previous one,
      // so a slow reader holds at most one batch (docs/feed.md).
      return new ReadableStream<Uint8Array>(
        {
          start(controller) {
            sink = controller;
            controller.enqueue(sse(": stream open\n\n"));
          },
          async pull(controller) {
            if (closed) return;
            pulling = true;
            try {
              const next = await opened.next();
              if (closed) return;
              if (next.done) {
                closed = true;
                controller.close();
                return;
              }
              const item = next.value;
              if (isKeepAlive(item)) {
                controller.enqueue(sse(": keep-alive\n\n"));
                return;
              }
              controller.enqueue(message(item));
            } catch (error) {
              finish(error);
              await opened.return(undefined);
            } finally {
              pulling = false;
            }
          },
          async cancel() {
            closed = true;
            await opened.return(undefined);
          },
        },
        { highWaterMark: 0 },
      );
    },
  };
}

export function feedOperations({ domain, logger, keepOpen }: OperationDeps): Operation[] {
  const { feed } = domain;
  const tag = "Feed";
  return [
    operation({
      method: "GET",
      path: "/v1/feed",
      rpc: "intake.v1.EventFeedService/ListFeed",
      errors: { 400: ["invalid_request"], 404: ["not_found"] },
      schemas: { query: FeedQuery, response: { 200: FeedPageSchema } },
      doc: {
        summary: "Read the tenant's feed, oldest first, from a cursor (a long poll with `wait`)",
        description:
          "Every event of the tenant has one position; a reader resuming from the last next_cursor never misses " +
          "an event and never sees one twice (docs/feed.md). A cursor of another tenant is 400. A page holds at most " +
          "`limit` events and 3 MiB of payloads (one larger event is a page of its own): resume from next_cursor " +
          "until a page is empty. A long poll counts against the live reads a token (10) and a tenant (100) may hold by default (429).",
        tag,
      },
      handle: async (call) => {
        const { query } = call;
        const page = await feed.listFeed(
          caller(call),
          {
            after: query.after,
            limit: query.limit,
            serviceId: query.service_id,
            start: query.start,
            waitSeconds: query.wait,
          },
          // A long poll re-checks the caller's token while it waits and before it answers.
          {
            signal: call.request.signal,
            credential: bearerCredential(call.request.headers.get("authorization")) ?? undefined,
          },
        );
        call.x.heldMs = page.heldMs;
        return new Response(eventPageJson(page.events, page.nextCursor), { headers: { "content-type": JSON_TYPE } });
      },
    }),
    operation({
      method: "GET",
      path: "/v1/feed/stream",
      rpc: "intake.v1.EventFeedService/StreamFeed",
      errors: { 400: ["invalid_request"], 404: ["not_found"] },
      schemas: {
        query: StreamQuery,
        // Documented in `doc.responses`: the generator would call a string answer text/plain.
        response: {},
      },
      doc: {
        summary: "Follow the tenant's feed live (Server-Sent Events; resume with Last-Event-ID)",
        description:
          "Server-Sent Events: each event as `id: <cursor>`, `event: event`, `data: <event JSON on one line>`; " +
          "`: keep-alive` comments while idle; a last `event: end` (`data` an error object) says why the stream ended " +
          "(a token revoked or expired, a filtered service deleted). Reconnect with `Last-Event-ID` to resume.",
        tag,
        ...sseDoc(
          "SSE messages `id: <cursor>`, `event: event`, `data: <event JSON>`, and comments",
          "the last event's id",
        ),
      },
      handle: (call) =>
        sseAnswer(
          call.request,
          call.query,
          { logger, keepOpen },
          (item: Exclude<StreamItem, { kind: "keep_alive" }>) => sseEvent(item.item.cursor, item.item.event),
          (position, options) => feed.openStream(caller(call), position, options),
        ),
    }),
    operation({
      method: "GET",
      path: "/v1/events/:id",
      rpc: "intake.v1.IngestService/GetEvent",
      errors: { 404: ["not_found"] },
      schemas: { params: IdParams, response: { 200: EventRecordSchema } },
      doc: {
        summary: "Get one stored event",
        description:
          "An event of the caller's tenant by its evt_ id, its payload embedded verbatim; any other id, or another tenant's event, is 404.",
        tag,
      },
      handle: async (call) => {
        const event = await feed.getEvent(caller(call), call.params.id);
        return new Response(eventsJson("", [event], ""), { headers: { "content-type": JSON_TYPE } });
      },
    }),
  ];
}
