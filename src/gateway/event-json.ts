/**
 * Events as the contract's JSON bytes (docs/api.md "Event"): each event's fields written around
 * its stored payload, which is embedded verbatim, never decoded or re-serialized. Every REST
 * surface that shows events writes them here: the feed page, the SSE messages, one event, a
 * service's listing.
 *
 * The whole answer goes into one buffer sized up front: the heads are measured, the payloads'
 * lengths are known, and each part is written once in place (no list of parts to concatenate,
 * no encoded copy of every head). A page of 1,000 events of 1 KiB is about 1.15 MB.
 */
import { formatId } from "../domain/ids.ts";
import type { EventRecord } from "../domain/types.ts";
import { isoOfMs } from "./serialize.ts";

const CLOSE = 0x7d; // "}"
const COMMA = 0x2c; // ","

/**
 * `prefix`, the events as JSON objects separated by commas, then `suffix`, as UTF-8 bytes.
 * The text parts are what the caller's contract says around them (`{"data":[` … `]}` for a
 * page, `data: ` … `\n\n` for an SSE message).
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
