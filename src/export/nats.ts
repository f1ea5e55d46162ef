/**
 * The export's publisher on NATS JetStream (SPEC §21, docs/export.md), loaded only when
 * INTAKE_EXPORT_NATS_URL is set (app.ts imports this module on demand).
 *
 * One connection, reconnecting without end: while NATS is away, publishes time out and the
 * exporter resumes from the last acknowledged position. Every publish carries `Nats-Msg-Id`
 * and, but for the first after a resume, the id the stream's last message must have
 * (`Nats-Expected-Last-Msg-Id`): JetStream checks the id for a duplicate first, so a re-publish
 * of what it holds is acknowledged as a duplicate, and a message whose predecessor was lost is
 * refused rather than stored after it.
 *
 * The stream is managed through the JetStream client; the messages themselves go out as core
 * publishes whose reply subject is one inbox subscription of this publisher, and JetStream's
 * acknowledgement (`{"stream", "seq", "duplicate"?}` or `{"error"}`, or a 503 status when no
 * stream listens) arrives there. That is JetStream's publish protocol as the client's
 * `js.publish` speaks it, without its per-message request, timer and header objects: it took
 * half the client's CPU per message, which ingest shares (bench scenario 14). Overdue
 * acknowledgements are failed by one sweep, not a timer each.
 */
import { JetStreamApiError, type JetStreamManager, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect, createInbox, headers, type Msg, type NatsConnection, nanos } from "@nats-io/transport-node";
import type { ExportMessage, ExportPublisher, PublishAck } from "../domain/ports/publisher.ts";
import type { Logger } from "../logger.ts";
import { EXPORT_SUBJECTS } from "./messages.ts";

/** JetStream API error codes (nats-server's JSStreamNotFoundErr, JSStreamNameExistErr). */
const STREAM_NOT_FOUND = 10059;
const STREAM_NAME_EXISTS = 10058;

export interface NatsPublisherOptions {
  url: string;
  stream: string;
  /** The duplicate window of a stream Intake creates (longer than the longest re-publish delay). */
  duplicateWindowMs: number;
  /** How long a publish waits for its acknowledgement. */
  publishTimeoutMs: number;
  logger: Logger;
}

interface Waiting {
  resolve(ack: PublishAck): void;
  reject(error: Error): void;
  deadline: number;
}

export function createNatsPublisher(options: NatsPublisherOptions): ExportPublisher {
  const { logger } = options;
  let connecting: Promise<{ nc: NatsConnection; jsm: JetStreamManager }> | null = null;
  let closed = false;
  const inbox = createInbox();
  // In publish order, so the overdue ones are at the front.
  const waiting = new Map<string, Waiting>();
  let nextToken = 0;
  const decoder = new TextDecoder();

  function acknowledged(message: Msg): void {
    const token = message.subject.slice(inbox.length + 1);
    const entry = waiting.get(token);
    if (!entry) return;
    waiting.delete(token);
    if (message.headers?.hasError) {
      entry.reject(new Error(`JetStream answered ${message.headers.code} ${message.headers.description}`));
      return;
    }
    let ack: { error?: { description?: string }; duplicate?: boolean; seq?: number };
    try {
      ack = JSON.parse(decoder.decode(message.data)) as typeof ack;
    } catch {
      entry.reject(new Error("JetStream answered with something that is not an acknowledgement"));
      return;
    }
    if (ack.error || typeof ack.seq !== "number")
      entry.reject(new Error(`JetStream refused the message: ${ack.error?.description ?? "no sequence"}`));
    else entry.resolve(ack.duplicate ? "duplicate" : "stored");
  }

  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [token, entry] of waiting) {
      if (entry.deadline > now) break;
      waiting.delete(token);
      entry.reject(new Error("no acknowledgement from JetStream in time"));
    }
  }, 250);
  sweep.unref?.();

  /** The connection once it is made and until it closes. */
  let live: NatsConnection | null = null;

  function send(nc: NatsConnection, message: ExportMessage, after: string | null): Promise<PublishAck> {
    const header = headers();
    header.set("Nats-Msg-Id", message.id);
    if (after !== null) header.set("Nats-Expected-Last-Msg-Id", after);
    const token = String(++nextToken);
    const acked = new Promise<PublishAck>((resolve, reject) => {
      waiting.set(token, { resolve, reject, deadline: performance.now() + options.publishTimeoutMs });
    });
    // Never retried here: a retry would land the message behind others already sent; the
    // exporter resumes from the acknowledged position instead.
    nc.publish(message.subject, message.body, { reply: `${inbox}.${token}`, headers: header });
    return acked;
  }

  function connection() {
    connecting ??= (async () => {
      const nc = await connect({
        servers: options.url,
        name: "intake-export",
        // Reconnect for ever: the exporter decides what to re-publish, never the client.
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        timeout: options.publishTimeoutMs,
      });
      void (async () => {
        for await (const status of nc.status()) {
          if (status.type === "disconnect") logger.warn("export: NATS connection lost; reconnecting");
          else if (status.type === "reconnect") logger.info("export: NATS connection back");
        }
      })().catch(() => {});
      nc.closed().then(() => {
        connecting = null;
        live = null;
      });
      nc.subscribe(`${inbox}.*`, { callback: (_error, message) => acknowledged(message) });
      const jsm = await jetstreamManager(nc);
      live = nc;
      return { nc, jsm };
    })().catch((error: unknown) => {
      connecting = null;
      throw error;
    });
    return connecting;
  }

  return {
    async ensureStream() {
      const { jsm } = await connection();
      try {
        await jsm.streams.info(options.stream);
        return;
      } catch (error) {
        if (!(error instanceof JetStreamApiError && error.code === STREAM_NOT_FOUND)) throw error;
      }
      try {
        await jsm.streams.add({
          name: options.stream,
          subjects: [EXPORT_SUBJECTS],
          storage: StorageType.File,
          duplicate_window: nanos(options.duplicateWindowMs),
        });
        logger.info("export: stream created", { stream: options.stream });
      } catch (error) {
        // Another instance created it meanwhile.
        if (!(error instanceof JetStreamApiError && error.code === STREAM_NAME_EXISTS)) throw error;
      }
    },

    publish(message: ExportMessage, after: string | null): Promise<PublishAck> {
      // Connected: sent within this call, so a burst of publishes leaves in one socket write.
      if (live !== null) return send(live, message, after);
      return connection().then(({ nc }) => send(nc, message, after));
    },

    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      for (const entry of waiting.values()) entry.reject(new Error("the publisher is closed"));
      waiting.clear();
      const current = connecting;
      if (!current) return;
      try {
        const { nc } = await current;
        await nc.drain();
      } catch {
        // Never connected, or already gone.
      }
    },
  };
}
