/**
 * The events' writes for a FILE database — `events.insertBatch` and the retention sweep's
 * `events.deleteOlderThan` — run in a Bun Worker with its own bun:sqlite connection.
 * bun:sqlite is synchronous: in-thread, every group commit (BEGIN IMMEDIATE, the inserts,
 * COMMIT with its fsync) stops the event loop, so no request is read or verified meanwhile,
 * and a sweep's delete would do the same, or sleep in busy_timeout while a commit holds the
 * lock. In the worker, the main thread keeps serving while they commit, one after another;
 * WAL lets the store's own connection keep reading. `:memory:` databases are private to a
 * connection and stay in-thread (store.ts).
 *
 * Failure: a worker that errors, exits or does not answer within `timeoutMs` is terminated,
 * rejects exactly the requests in flight on it, and the next request starts a fresh worker.
 */

import { dirname, join } from "node:path";
import { DomainError } from "../../domain/errors.ts";
import type { Alert } from "../../domain/incident-types.ts";
import type { InsertEventResult, NewEvent } from "../../domain/ports/store.ts";

export type WriterRequest =
  | { kind: "open"; path: string }
  | { kind: "batch"; seq: number; events: PackedBatch }
  | { kind: "expire"; seq: number; cutoff: number; batch: number }
  | { kind: "close" };

/**
 * A batch as it crosses to the worker: in columns, every payload in one buffer that is
 * transferred rather than copied. Posted as an array of events, each object and each payload's
 * buffer was cloned on the way, a cost per event that the independent floor does not pay
 * (bench scenario 3). The ids are hex, so a newline joins them.
 */
export interface PackedBatch {
  ids: string;
  tenantIds: string;
  serviceIds: string;
  idempotencyKeys: Array<string | null>;
  types: Array<string | null>;
  /** §17's validated alerts (plain objects, structured-clone safe); null for a plain event. */
  alerts: Array<Alert | null>;
  receivedAt: Float64Array<ArrayBuffer>;
  /** Where each payload ends in `payloads`. */
  ends: Uint32Array<ArrayBuffer>;
  payloads: ArrayBuffer;
}

export function packBatch(batch: ReadonlyArray<NewEvent>): PackedBatch {
  const ends = new Uint32Array(batch.length);
  let size = 0;
  batch.forEach((event, i) => {
    size += event.payload.byteLength;
    ends[i] = size;
  });
  const payloads = new Uint8Array(size);
  const receivedAt = new Float64Array(batch.length);
  batch.forEach((event, i) => {
    payloads.set(event.payload, i === 0 ? 0 : (ends[i - 1] as number));
    receivedAt[i] = event.receivedAt;
  });
  return {
    ids: batch.map((e) => e.id).join("\n"),
    tenantIds: batch.map((e) => e.tenantId).join("\n"),
    serviceIds: batch.map((e) => e.serviceId).join("\n"),
    idempotencyKeys: batch.map((e) => e.idempotencyKey),
    types: batch.map((e) => e.type ?? null),
    alerts: batch.map((e) => e.alert ?? null),
    receivedAt,
    ends,
    payloads: payloads.buffer,
  };
}

/** The events of a packed batch; each payload a view of the one buffer. */
export function unpackBatch(packed: PackedBatch): NewEvent[] {
  const ids = packed.ids.split("\n");
  const tenantIds = packed.tenantIds.split("\n");
  const serviceIds = packed.serviceIds.split("\n");
  const n = packed.ends.length;
  if (
    ids.length !== n ||
    tenantIds.length !== n ||
    serviceIds.length !== n ||
    packed.types.length !== n ||
    packed.alerts.length !== n
  )
    throw new Error("sqlite event writer: a packed batch's columns disagree in length");
  let start = 0;
  return ids.map((id, i) => {
    const end = packed.ends[i] as number;
    const event: NewEvent = {
      id,
      tenantId: tenantIds[i] as string,
      serviceId: serviceIds[i] as string,
      receivedAt: packed.receivedAt[i] as number,
      idempotencyKey: packed.idempotencyKeys[i] ?? null,
      payload: new Uint8Array(packed.payloads, start, end - start),
      type: packed.types[i] ?? null,
      alert: packed.alerts[i] ?? null,
    };
    start = end;
    return event;
  });
}

const INSERTED: InsertEventResult = Object.freeze({ kind: "inserted" });

/**
 * The answer to a `batch` (its results, with alert outcomes; a count when every event was
 * inserted and none was an alert event, the usual case,
 * rather than as many objects to clone) or an `expire` (the rows deleted), by `seq`.
 */
export type WriterReply =
  | { kind: "done"; seq: number; ok: true; value: InsertEventResult[] | number }
  | {
      kind: "done";
      seq: number;
      ok: false;
      error: { name: string; message: string; code?: string; errno?: number };
    }
  | { kind: "closed" };

export interface EventWriter {
  insertBatch(batch: ReadonlyArray<NewEvent>): Promise<InsertEventResult[]>;
  /** The store's `events.deleteOlderThan`: one batch of the retention sweep. */
  deleteOlderThan(cutoff: number, batch: number): Promise<number>;
  /** Waits for the requests in flight (each bounded by its timeout), then stops the worker. */
  close(): Promise<void>;
}

export interface EventWriterOptions {
  path: string;
  /** Maps a rebuilt SQLite error the way the in-thread store does (unreachable → unavailable). */
  mapError(error: unknown): unknown;
  /**
   * Longest wait for one request's answer. Well above busy_timeout (5 s), which a request may
   * legitimately spend waiting for another process's lock.
   */
  timeoutMs?: number;
  /** Longest wait for the worker to close its connection before it is terminated anyway. */
  closeTimeoutMs?: number;
  /** The worker script; tests substitute one that crashes or stays silent. */
  workerUrl?: string;
}

interface InFlight {
  resolve(value: InsertEventResult[] | number): void;
  reject(error: unknown): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * The one-file build (scripts/build.ts) bundles the worker as its own entry point, embedded at
 * its path under src/ with a .js name; under `bun run` it is this file's sibling.
 */
const WORKER_URL = Bun.isStandaloneExecutable
  ? join(dirname(Bun.main), "store/sqlite/event-writer-worker.js")
  : new URL("./event-writer-worker.ts", import.meta.url).href;

/** Rebuilds the worker's error with the fields `isUnavailable` reads (name, errno) and SQLite's code. */
function rebuild(error: Extract<WriterReply, { ok: false }>["error"]): Error {
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name;
  if (error.code !== undefined) Object.assign(rebuilt, { code: error.code });
  if (error.errno !== undefined) Object.assign(rebuilt, { errno: error.errno });
  return rebuilt;
}

export function createEventWriter(options: EventWriterOptions): EventWriter {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  let worker: Worker | null = null;
  const inFlight = new Map<number, InFlight>();
  let nextSeq = 0;
  let closed = false;
  let onClosed: (() => void) | null = null;

  /** Ends `failed` (if still the current worker) and rejects everything in flight on it. */
  function fail(failed: Worker, error: unknown): void {
    if (worker !== failed) return; // a late event from a worker already replaced or closed
    worker = null;
    failed.terminate();
    const requests = [...inFlight.values()];
    inFlight.clear();
    for (const request of requests) {
      clearTimeout(request.timer);
      request.reject(error);
    }
  }

  function settle(seq: number): InFlight | undefined {
    const request = inFlight.get(seq);
    if (!request) return undefined; // timed out already
    inFlight.delete(seq);
    clearTimeout(request.timer);
    // Idle, the worker must not keep the process alive; with a request in flight it must.
    if (inFlight.size === 0) worker?.unref();
    return request;
  }

  function spawn(): Worker {
    // smol: the worker runs a few statements and holds one batch; JSC's large heap would add
    // ~30 MB of peak RSS to the process for nothing (bench scenario 7).
    const started = new Worker(options.workerUrl ?? WORKER_URL, { name: "intake-sqlite-event-writer", smol: true });
    started.onmessage = (event: MessageEvent<WriterReply>) => {
      const reply = event.data;
      if (reply.kind === "closed") {
        onClosed?.();
        return;
      }
      const request = settle(reply.seq);
      if (!request) return;
      if (reply.ok) request.resolve(reply.value);
      else request.reject(options.mapError(rebuild(reply.error)));
    };
    started.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      fail(started, new Error(`sqlite event writer: the worker failed: ${event.message}`));
    };
    started.addEventListener("close", () => fail(started, new Error("sqlite event writer: the worker exited")));
    started.postMessage({ kind: "open", path: options.path } satisfies WriterRequest);
    return started;
  }

  /**
   * Sends the request `make` builds with its sequence number (moving the buffers in `transfer`);
   * settles with the worker's answer to it.
   */
  function send(
    make: (seq: number) => WriterRequest,
    transfer: ArrayBuffer[] = [],
  ): Promise<InsertEventResult[] | number> {
    if (closed) return Promise.reject(new Error("sqlite event writer: the store is closed"));
    worker ??= spawn();
    const current = worker;
    const seq = nextSeq++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => fail(current, new DomainError("unavailable", "The store cannot be reached.")),
        timeoutMs,
      );
      inFlight.set(seq, { resolve, reject, timer });
      current.ref();
      current.postMessage(make(seq), transfer);
    });
  }

  function insertBatch(batch: ReadonlyArray<NewEvent>): Promise<InsertEventResult[]> {
    if (batch.length === 0) return Promise.resolve([]);
    const events = packBatch(batch);
    return send(
      (seq) => ({ kind: "batch", seq, events }),
      [events.payloads, events.receivedAt.buffer, events.ends.buffer],
    ).then((value) => (typeof value === "number" ? Array.from({ length: value }, () => INSERTED) : value));
  }

  function deleteOlderThan(cutoff: number, batch: number): Promise<number> {
    return send((seq) => ({ kind: "expire", seq, cutoff, batch })) as Promise<number>;
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    // Each request in flight settles: answered, failed with its worker, or timed out.
    await Promise.allSettled(
      [...inFlight.values()].map(
        (request) =>
          new Promise<void>((done) => {
            const { resolve, reject } = request;
            request.resolve = (value) => {
              resolve(value);
              done();
            };
            request.reject = (error) => {
              reject(error);
              done();
            };
          }),
      ),
    );
    const last = worker;
    if (!last) return;
    worker = null; // its exit is now expected, not a failure
    // Let the worker close its connection (and checkpoint the WAL), bounded, then stop it.
    await new Promise<void>((done) => {
      const timer = setTimeout(done, closeTimeoutMs);
      onClosed = () => {
        clearTimeout(timer);
        done();
      };
      last.postMessage({ kind: "close" } satisfies WriterRequest);
    });
    onClosed = null;
    last.terminate();
  }

  return { insertBatch, deleteOlderThan, close };
}
