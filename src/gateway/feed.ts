/**
 * The feed routes (docs/feed.md): `GET /v1/feed` (pages and long polls), `GET /v1/feed/stream`
 * (Server-Sent Events) and `GET /v1/events/{id}`. Events are written as bytes around each
 * stored payload, which is embedded verbatim, never re-serialized (event-json.ts, as the
 * events listing does).
 */
import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { Elysia, t } from "elysia";
import { FeedStart, ListFeedRequestSchema, StreamFeedRequestSchema } from "../../gen/intake/v1/feed_pb.ts";
import { GetEventRequestSchema } from "../../gen/intake/v1/ingest_pb.ts";
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FEED_MAX_WAIT_SECONDS } from "../domain/feed.ts";
import type { EventRecord } from "../domain/types.ts";
import { restErrorOf } from "../rpc/errors.ts";
import type { RpcImpls } from "../rpc/impls.ts";
import { eventsJson } from "./event-json.ts";
import { ELYSIA_SETTINGS, JSON_TYPE } from "./http.ts";
import { EventRecordSchema } from "./ingest.ts";
import type { Kit } from "./kit.ts";
import { bearerSecurity } from "./responses.ts";
import { component, IdParams, ServiceId } from "./schemas.ts";

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

const StreamQuery = t.Object(
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

function startOf(start: string | undefined): FeedStart {
  if (start === "latest") return FeedStart.LATEST;
  if (start === "earliest") return FeedStart.EARLIEST;
  return FeedStart.UNSPECIFIED;
}

/** An SSE message or comment. */
function sse(text: string): Uint8Array {
  return utf8.encode(text);
}

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

export function feedRoutes(impls: RpcImpls, kit: Kit) {
  const { feed, ingest } = impls;
  return new Elysia({ ...ELYSIA_SETTINGS, name: "feed" })
    .use(kit.plugin)
    .get(
      "/v1/feed",
      async ({ call, request, query }) => {
        const page = await feed.listFeedPage(
          create(ListFeedRequestSchema, {
            after: query.after,
            limit: query.limit,
            serviceId: query.service_id,
            start: startOf(query.start),
            waitSeconds: query.wait,
          }),
          { values: call.values, signal: request.signal, requestHeader: request.headers },
        );
        const body = eventsJson('{"data":[', page.events, `],"next_cursor":${JSON.stringify(page.nextCursor)}}`);
        return new Response(body, { status: 200, headers: { "content-type": JSON_TYPE } });
      },
      {
        bearer: "intake.v1.EventFeedService/ListFeed",
        query: FeedQuery,
        response: { 200: FeedPageSchema },
        detail: {
          summary: "Read the tenant's feed, oldest first, from a cursor (a long poll with `wait`)",
          description:
            "Every event of the tenant has one position; a reader resuming from the last next_cursor never misses " +
            "an event and never sees one twice (docs/feed.md). A cursor of another tenant is 400.",
          tags: ["Feed"],
          security: bearerSecurity,
        },
      },
    )
    .get(
      "/v1/feed/stream",
      async ({ call, request, query }) => {
        // EventSource clients resend the last id on reconnect: it wins over `after`.
        const lastEventId = request.headers.get("last-event-id");
        const stream = await feed.openStream(
          create(StreamFeedRequestSchema, {
            after: lastEventId ? lastEventId : query.after,
            serviceId: query.service_id,
            start: startOf(query.start),
          }),
          { values: call.values, signal: request.signal, requestHeader: request.headers },
        );
        const iterator = stream[Symbol.asyncIterator]();
        // highWaterMark 0: the next event is read from the store only once the socket took
        // the previous one, so a slow reader holds at most one store page (docs/feed.md).
        const body = new ReadableStream<Uint8Array>(
          {
            start(controller) {
              controller.enqueue(sse(": stream open\n\n"));
            },
            async pull(controller) {
              try {
                const next = await iterator.next();
                if (next.done) {
                  controller.close();
                  return;
                }
                const item = next.value;
                if (item.kind === "keep_alive") {
                  controller.enqueue(sse(": keep-alive\n\n"));
                  return;
                }
                controller.enqueue(sseEvent(item.item.cursor, item.item.event));
              } catch (error) {
                // Why the stream ended, for readers that look; then the connection closes.
                const rest = error instanceof ConnectError ? restErrorOf(error) : null;
                const reason = rest ?? { code: "internal_error", message: "The stream ended." };
                controller.enqueue(
                  sse(
                    `event: end\ndata: ${JSON.stringify({ error: { code: reason.code, message: reason.message } })}\n\n`,
                  ),
                );
                controller.close();
              }
            },
            async cancel() {
              await iterator.return?.(undefined);
            },
          },
          { highWaterMark: 0 },
        );
        return new Response(body, {
          status: 200,
          headers: {
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-store",
            // Reverse proxies (nginx) would otherwise buffer the stream.
            "x-accel-buffering": "no",
          },
        });
      },
      {
        bearer: "intake.v1.EventFeedService/StreamFeed",
        query: StreamQuery,
        response: {
          200: t.String({
            description:
              "text/event-stream: per event `id: <cursor>`, `event: event`, `data: <event JSON>`; `: keep-alive` comments; " +
              "a last `event: end` says why the stream ended",
          }),
        },
        detail: {
          summary: "Follow the tenant's feed live (Server-Sent Events; resume with Last-Event-ID)",
          tags: ["Feed"],
          security: bearerSecurity,
          parameters: [
            {
              name: "Last-Event-ID",
              in: "header",
              required: false,
              description: "the last event's id (a cursor); wins over `after`",
              schema: { type: "string" },
            },
          ],
        },
      },
    )
    .get(
      "/v1/events/:id",
      async ({ call, params }) => {
        const res = await ingest.getEvent(create(GetEventRequestSchema, { id: params.id }), call);
        const e = res.event;
        if (!e) throw new Error("GetEvent answered without an event");
        const receivedAt = e.receivedAt
          ? Number(e.receivedAt.seconds) * 1000 + Math.floor(e.receivedAt.nanos / 1e6)
          : 0;
        const body = eventsJson(
          "",
          [
            {
              id: e.id.slice(4),
              tenantId: "",
              serviceId: e.serviceId.slice(4),
              receivedAt,
              idempotencyKey: e.idempotencyKey ?? null,
              payload: e.payload,
              position: 0,
              type: e.type ?? null,
              incidentId: e.incidentId === undefined ? null : e.incidentId.slice(4),
            },
          ],
          "",
        );
        return new Response(body, { status: 200, headers: { "content-type": JSON_TYPE } });
      },
      {
        bearer: "intake.v1.IngestService/GetEvent",
        params: IdParams,
        response: { 200: EventRecordSchema },
        detail: { summary: "Get one stored event", tags: ["Feed"], security: bearerSecurity },
      },
    );
}
