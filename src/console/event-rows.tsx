/**
 * One compact row per event (SPEC §22): time, service, type, id, the payload's first line; the
 * id links to the event page, where the payload is shown whole. Used by the events explorer and
 * the service page, so neither lays out a payload at full length. An alert event (§17), which
 * has no type, shows "alert · <action>" in its place. On a phone each row is a dense card of
 * three lines (explorer.css): time and service, type and the id abbreviated, the first line.
 */
import type { Event } from "../../gen/intake/v1/ingest_pb.ts";
import { firstLine, typeLabel } from "./event-query.ts";
import { abbreviated } from "./ui/copy.tsx";
import { Link } from "./ui/states.tsx";
import { Time } from "./ui/time.tsx";

export function EventRows(props: {
  events: Event[];
  /** The service names by id; without it (a service's own page) the service column is left out. */
  names?: ReadonlyMap<string, string>;
  caption: string;
  live?: boolean;
}) {
  const { events, names } = props;
  return (
    <div class="table-scroll">
      <table class="event-rows">
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Received</th>
            {names && <th scope="col">Service</th>}
            <th scope="col">Type</th>
            <th scope="col">Id</th>
            <th scope="col">Payload</th>
          </tr>
        </thead>
        <tbody aria-live={props.live ? "polite" : undefined}>
          {events.map((e) => (
            <tr key={e.id}>
              <td data-label="Received">
                <Time at={e.receivedAt} />
              </td>
              {names && (
                <td data-label="Service">
                  <Link to={`/services/${e.serviceId}`}>{names.get(e.serviceId) ?? e.serviceId}</Link>
                </td>
              )}
              <td data-label="Type">
                <TypeCell type={e.type} label={typeLabel(e)} />
              </td>
              <td data-label="Id">
                <Link to={`/events/${e.id}`} class="event-id" data-short={abbreviated(e.id)}>
                  <span>{e.id}</span>
                </Link>
              </td>
              <td data-label="Payload" class="first-line">
                <code>{firstLine(e.payload)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The API's type as code; an alert event's label as words (it is not a type to filter by); else a dash. */
function TypeCell({ type, label }: { type: string | undefined; label: string | null }) {
  if (type) return <code>{type}</code>;
  if (label) return <span class="alert-type">{label}</span>;
  return <span class="meta">—</span>;
}
