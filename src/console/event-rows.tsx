/**
 * One compact row per event (SPEC §22): time, service, type, id, the payload's first line; the
 * id links to the event page, where the payload is shown whole. Used by the events explorer and
 * the service page, so neither lays out a payload at full length.
 */
import type { Event } from "../../gen/intake/v1/ingest_pb.ts";
import { firstLine } from "./event-query.ts";
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
              <td data-label="Type">{e.type ? <code>{e.type}</code> : <span class="meta">—</span>}</td>
              <td data-label="Id">
                <Link to={`/events/${e.id}`} class="event-id">
                  {e.id}
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
