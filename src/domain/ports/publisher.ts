/**
 * Where the export (SPEC §21, docs/export.md) puts messages: a stream engine that stores each
 * message once by its id and acknowledges it. The NATS JetStream adapter is src/export/nats.ts;
 * the domain (domain/export.ts) knows nothing of NATS.
 */

/** One message: its subject, its body, and the id the stream de-duplicates by. */
export interface ExportMessage {
  subject: string;
  body: Uint8Array;
  id: string;
}

/** How the stream acknowledged a message: newly stored, or already held under its id. */
export type PublishAck = "stored" | "duplicate";

export interface ExportPublisher {
  /** Connects if needed and makes sure the stream exists (creating it when it is missing). */
  ensureStream(): Promise<void>;
  /**
   * Resolves once the stream acknowledged the message; rejects when it did not (refused,
   * timed out, disconnected). `after`: the id the stream's last stored message must carry for
   * this one to be stored (so a message never lands after one that followed it: a lost
   * predecessor makes every later message of the window fail instead); null for the first
   * message after a restart. A message whose id the stream already holds is `duplicate`,
   * whatever `after` says.
   */
  publish(message: ExportMessage, after: string | null): Promise<PublishAck>;
  close(): Promise<void>;
}
