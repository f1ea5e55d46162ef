/**
 * Worker side of the SQLite event writer (see event-writer.ts): its own connection to the file
 * database, running `events.insertBatch` and `events.deleteOlderThan` transactions so that
 * their COMMIT (WAL write + fsync) blocks this thread instead of the event loop that reads and
 * verifies requests. Messages are handled one at a time, in arrival order, like calls on one
 * connection.
 */
import type { Database } from "bun:sqlite";
import type { InsertEventResult } from "../../domain/ports/store.ts";
import { openDatabase } from "./connection.ts";
import { createEventExpiry, type ExpireEvents } from "./event-expire.ts";
import { createEventInsert, type InsertEvents } from "./event-insert.ts";
import { unpackBatch, type WriterReply, type WriterRequest } from "./event-writer.ts";

declare const self: Worker;

interface Writer {
  db: Database;
  insertAll: InsertEvents;
  expire: ExpireEvents;
}

let path: string | undefined;
let writer: Writer | undefined;

function open(file: string): Writer {
  const db = openDatabase(file);
  try {
    return { db, insertAll: createEventInsert(db), expire: createEventExpiry(db) };
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * The results to post back: their count when every event was inserted and none carries an
 * alert outcome (see `WriterReply`); else the results themselves, outcomes included.
 */
function inserted(results: InsertEventResult[]): InsertEventResult[] | number {
  return results.every((r) => r.kind === "inserted" && r.incident === undefined) ? results.length : results;
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
    case "expire":
      try {
        if (path === undefined) throw new Error(`event writer: ${request.kind} before open`);
        // Opened on the first request (after migrations), and again after a failed open.
        writer ??= open(path);
        const value =
          request.kind === "batch"
            ? inserted(writer.insertAll(unpackBatch(request.events)))
            : writer.expire(request.cutoff, request.batch);
        return { kind: "done", seq: request.seq, ok: true, value };
      } catch (error) {
        return { kind: "done", seq: request.seq, ok: false, error: serialize(error) };
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
