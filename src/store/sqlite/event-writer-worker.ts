/**
 * Worker side of the SQLite event writer (see event-writer.ts): its own connection to the file
 * database, running `events.insertBatch` transactions so that their COMMIT (WAL write + fsync)
 * blocks this thread instead of the event loop that reads and verifies requests.
 * Messages are handled one at a time, in arrival order, like calls on one connection.
 */
import type { Database, Statement } from "bun:sqlite";
import type { InsertEventResult, NewEvent } from "../../domain/ports/store.ts";
import { openDatabase } from "./connection.ts";
import type { WriterReply, WriterRequest } from "./event-writer.ts";

declare const self: Worker;

interface Writer {
  db: Database;
  insertAll(batch: ReadonlyArray<NewEvent>): InsertEventResult[];
}

let path: string | undefined;
let writer: Writer | undefined;

/** Same statements and semantics as the in-thread path of store.ts, on raw bun:sqlite. */
function createWriter(db: Database): Writer {
  // The unique index decides duplicates: no row back means the key was already used.
  const insert: Statement<{ id: string }, [string, string, number, string | null, Uint8Array, string, number]> =
    db.prepare(
      "INSERT INTO events (id, service_id, received_at, idempotency_key, payload, tenant_id, position) " +
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (service_id, idempotency_key) DO NOTHING RETURNING id",
    );
  // First write of every batch: reserves its positions under the write lock (docs/feed.md).
  const bump: Statement<{ head: number }, [number]> = db.prepare(
    "INSERT INTO feed_head (id, head) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET head = head + excluded.head RETURNING head",
  );
  const byKey: Statement<{ id: string; received_at: number }, [string, string]> = db.prepare(
    "SELECT id, received_at FROM events WHERE service_id = ?1 AND idempotency_key = ?2",
  );
  const transaction = db.transaction((batch: ReadonlyArray<NewEvent>) => {
    const bumped = bump.get(batch.length);
    if (!bumped) throw new Error("insertBatch: feed_head returned no row");
    const first = bumped.head - batch.length + 1;
    return batch.map((event, i): InsertEventResult => {
      const position = first + i;
      if (
        insert.get(
          event.id,
          event.serviceId,
          event.receivedAt,
          event.idempotencyKey,
          event.payload,
          event.tenantId,
          position,
        )
      ) {
        return { kind: "inserted" };
      }
      const prior = event.idempotencyKey === null ? null : byKey.get(event.serviceId, event.idempotencyKey);
      if (!prior) throw new Error("insertBatch: an event was neither inserted nor a duplicate");
      return { kind: "duplicate", id: prior.id, receivedAt: prior.received_at };
    });
  });
  // IMMEDIATE: take the write lock up front, like every write transaction of the store.
  return { db, insertAll: (batch) => transaction.immediate(batch) };
}

function serialize(error: unknown): Extract<WriterReply, { ok: false }>["error"] {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof errno === "number" ? { errno } : {}),
  };
}

function handle(request: WriterRequest): WriterReply | null {
  switch (request.kind) {
    case "open":
      path = request.path;
      return null;
    case "batch":
      try {
        if (path === undefined) throw new Error("event writer: batch before open");
        // Opened on the first batch (after migrations), and again after a failed open.
        writer ??= createWriter(openDatabase(path));
        return { kind: "batch", seq: request.seq, ok: true, results: writer.insertAll(request.events) };
      } catch (error) {
        return { kind: "batch", seq: request.seq, ok: false, error: serialize(error) };
      }
    case "close":
      writer?.db.close();
      writer = undefined;
      return { kind: "closed" };
  }
}

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const reply = handle(event.data);
  if (reply) self.postMessage(reply);
};
