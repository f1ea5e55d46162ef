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
 */
import {
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
  StorageType,
} from "@nats-io/jetstream";
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node";
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

export function createNatsPublisher(options: NatsPublisherOptions): ExportPublisher {
  const { logger } = options;
  let connecting: Promise<{ nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager }> | null = null;
  let closed = false;

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
      });
      return { nc, js: jetstream(nc, { timeout: options.publishTimeoutMs }), jsm: await jetstreamManager(nc) };
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

    async publish(message: ExportMessage, after: string | null): Promise<PublishAck> {
      const { js } = await connection();
      const ack = await js.publish(message.subject, message.body, {
        msgID: message.id,
        timeout: options.publishTimeoutMs,
        // A retry would land the message behind others already sent: the exporter resumes instead.
        retries: 0,
        ...(after === null ? {} : { expect: { lastMsgID: after } }),
      });
      return ack.duplicate ? "duplicate" : "stored";
    },

    async close() {
      if (closed) return;
      closed = true;
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
