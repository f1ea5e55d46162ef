/**
 * An event's public shapes. REST: the contract's JSON bytes (docs/api.md "Event"), each event's
 * fields written around its stored payload, which is embedded verbatim, never decoded or
 * re-serialized; the one writer of every REST surface that shows events (a service's listing,
 * the feed page, one event, the SSE messages). RPC: the `Event` message, payload as bytes.
 */
import type { Event, IngestResponse } from "../../gen/intake/v1/ingest_pb.ts";
import { formatId } from "../domain/ids.ts";
import type { EventRecord } from "../domain/types.ts";
import { isoOfMs, ts, type Whole } from "./time.ts";

const CLOSE = 0x7d; // "}"
const COMMA = 0x2c; // ","

/**
 * `prefix`, the events as JSON objects separated by commas, then `suffix`, as UTF-8 bytes. The
 * text parts are what the caller's contract says around them (`{"data":[` … `]}` for a page,
 * `data: ` … `\n\n` for an SSE message, nothing for one event). The whole answer goes into one
 * buffer sized up front: the heads are measured, the payloads' lengths are known, and each
 * part is written once in place.
 */
export function eventsJson(prefix: string, events: readonly EventRecord[], suffix: string): Buffer {
  const heads = new Array<string>(events.length);
  let total = Buffer.byteLength(prefix) + Buffer.byteLength(suffix) + Math.max(0, events.length - 1);
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as EventRecord;
    const head =
      `{"id":"${formatId("evt", e.id)}","service_id":"${formatId("svc", e.serviceId)}",` +
      `"received_at":"${isoOfMs(e.receivedAt)}","idempotency_key":${JSON.stringify(e.idempotencyKey)},` +
      `"type":${JSON.stringify(e.type)},"incident_id":${e.incidentId === null ? "null" : `"${formatId("inc", e.incidentId)}"`},"payload":`;
    heads[i] = head;
    total += Buffer.byteLength(head) + e.payload.byteLength + 1;
  }
  const out = Buffer.allocUnsafe(total);
  let at = out.write(prefix, 0);
  for (let i = 0; i < events.length; i++) {
    if (i > 0) out[at++] = COMMA;
    at += out.write(heads[i] as string, at);
    const payload = (events[i] as EventRecord).payload;
    out.set(payload, at);
    at += payload.byteLength;
    out[at++] = CLOSE;
  }
  at += out.write(suffix, at);
  if (at !== total) throw new Error(`event JSON: wrote ${at} of ${total} bytes`);
  return out;
}

/** A page of events (a service's listing, the feed) as the contract's JSON bytes. */
export function eventPageJson(events: readonly EventRecord[], nextCursor: string | null): Buffer {
  return eventsJson('{"data":[', events, `],"next_cursor":${JSON.stringify(nextCursor)}}`);
}

export function eventMessage(record: EventRecord): Event {
  const message: Whole<Event> = {
    $typeName: "intake.v1.Event",
    id: formatId("evt", record.id),
    serviceId: formatId("svc", record.serviceId),
    receivedAt: ts(record.receivedAt),
    idempotencyKey: record.idempotencyKey ?? undefined,
    payload: record.payload,
    type: record.type ?? undefined,
    incidentId: record.incidentId === null ? undefined : formatId("inc", record.incidentId),
  };
  return message;
}

/** What a signed ingest answers: 202 (stored) or 200 (a duplicate Idempotency-Key). */
export interface IngestAnswer {
  /** Raw id (32 hex). */
  id: string;
  receivedAt: number;
  duplicate: boolean;
  /** §17, an accepted alert event only: its dedup key and incident (raw id; null: none was open). */
  incident?: { dedupKey: string; incidentId: string | null } | null;
}

export function ingestJson(result: IngestAnswer) {
  const id = formatId("evt", result.id);
  const receivedAt = isoOfMs(result.receivedAt);
  if (result.duplicate) return { id, received_at: receivedAt, duplicate: true };
  const incident = result.incident;
  if (!incident) return { id, received_at: receivedAt };
  // §17: an alert event's 202 names its key and incident (null: nothing was open). Plain events: unchanged.
  const incidentId = incident.incidentId === null ? null : formatId("inc", incident.incidentId);
  return { id, received_at: receivedAt, dedup_key: incident.dedupKey, incident_id: incidentId };
}

export function ingestResponseMessage(result: IngestAnswer): IngestResponse {
  const message: Whole<IngestResponse> = {
    $typeName: "intake.v1.IngestResponse",
    id: formatId("evt", result.id),
    receivedAt: ts(result.receivedAt),
    duplicate: result.duplicate,
    dedupKey: result.incident?.dedupKey,
    incidentId: result.incident?.incidentId == null ? undefined : formatId("inc", result.incident.incidentId),
  };
  return message;
}
