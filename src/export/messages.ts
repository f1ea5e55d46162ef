/**
 * What the export publishes for each feed item (SPEC §21): subjects
 * `intake.<tenant id>.events.<service id>` and `intake.<tenant id>.incidents`; the body is the
 * event object every REST surface writes (shapes/events.ts: the stored payload embedded
 * byte for byte) or the incident change stream's `{change, incident}`; the id JetStream
 * de-duplicates by is the event's id, or the change's cursor in the incident change stream.
 */
import { formatId } from "../domain/ids.ts";
import { encodeIncidentCursor } from "../domain/incident-cursor.ts";
import type { ExportMessage } from "../domain/ports/publisher.ts";
import type { ExportItem } from "../domain/ports/store.ts";
import { eventsJson } from "../shapes/events.ts";
import { incidentChangeJson } from "../shapes/incidents.ts";

/** Every subject the export publishes on is under this one (the stream's `subjects`). */
export const EXPORT_SUBJECTS = "intake.>";

export function exportMessage(item: ExportItem): ExportMessage {
  if (item.kind === "event") {
    const { event } = item;
    return {
      subject: `intake.${event.tenantId}.events.${formatId("svc", event.serviceId)}`,
      body: eventsJson("", [event], ""),
      id: formatId("evt", event.id),
    };
  }
  return {
    subject: `intake.${item.tenantId}.incidents`,
    body: Buffer.from(incidentChangeJson(item.change)),
    id: encodeIncidentCursor(item.tenantId, item.position),
  };
}
