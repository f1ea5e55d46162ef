import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { Event } from "../../../gen/intake/v1/ingest_pb.ts";
import type { Service } from "../../../gen/intake/v1/services_pb.ts";
import { type ApiFailure, api, failureOf, readAll } from "../api.ts";
import { Empty, ErrorNotice, Id, Link, LiveStatus, Loading, mergeNewest } from "../components.tsx";
import { EventRows } from "../event-rows.tsx";
import type { Identity } from "../identity.ts";
import { useLiveFeed } from "../live.ts";
import { OpenIncidents } from "./overview-incidents.tsx";

/** How many of the tenant's newest events the overview shows. */
const LATEST = 20;

export function OverviewPage({ identity }: { identity: Identity | null }) {
  const [services, setServices] = useState<number | null>(null);
  const [tokens, setTokens] = useState<number | null>(null);
  const [events, setEvents] = useState<Event[] | null>(null);
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const asked = useRef(new Set<string>());

  useEffect(() => {
    readAll((cursor) => api.tokens.listApiTokens({ limit: 100, cursor, includeRevoked: false })).then(
      (all) => setTokens(all.length),
      (error: unknown) => setFailure(failureOf(error)),
    );
  }, []);

  const named = useCallback((list: Service[]) => {
    setNames((old) => new Map([...old, ...list.map((s) => [s.id, s.serviceName] as const)]));
  }, []);

  const live = useLiveFeed(
    undefined,
    async (signal) => {
      const all = await readAll((cursor) => api.services.listServices({ limit: 100, cursor }, { signal }));
      setServices(all.length);
      named(all);
      // The tenant's newest events in one read (SearchEvents, newest first, no filter).
      const newest = await api.ingest.searchEvents({ limit: LATEST }, { signal });
      setEvents((old) => mergeNewest(old ?? [], newest.data, LATEST));
    },
    (event) => setEvents((old) => mergeNewest(old ?? [], [event], LATEST)),
  );

  // A service created after the page opened: learn its name once.
  useEffect(() => {
    for (const e of events ?? []) {
      if (names.has(e.serviceId) || asked.current.has(e.serviceId)) continue;
      asked.current.add(e.serviceId);
      api.services.getService({ id: e.serviceId }).then(
        (res) => res.service && named([res.service]),
        () => undefined,
      );
    }
  }, [events, names, named]);

  return (
    <main>
      <h1>{identity ? identity.tenant.name : "Overview"}</h1>
      {/* The line and the cards hold their place while they load: nothing below them moves. */}
      <p class="meta">
        {identity ? (
          <>
            Tenant <Id value={identity.tenant.id} label="tenant id" /> · {identity.tenant.permissionMode}
            {identity.self && (
              <>
                {" · signed in as "}
                <strong>{identity.self.name}</strong> ({identity.self.scope}, {identity.self.role})
              </>
            )}
          </>
        ) : (
          "\u00a0"
        )}
      </p>
      <ErrorNotice failure={failure} />
      <ul class="cards" aria-busy={services === null || tokens === null}>
        <li>
          <strong>{services ?? "…"}</strong> {services === 1 ? "service" : "services"}
        </li>
        <li>
          <strong>{tokens ?? "…"}</strong> active API {tokens === 1 ? "token" : "tokens"}
        </li>
      </ul>
      <OpenIncidents />
      <h2>Latest events</h2>
      <p class="meta">
        The tenant's {LATEST} newest events, newest first, across its services: <Link to="/events">find any event</Link>
        .
      </p>
      <LiveStatus state={live} />
      {events === null && live.kind !== "stopped" && <Loading label="Loading the latest events…" />}
      {events?.length === 0 && (
        <Empty
          title="No events yet."
          next={
            <>
              <Link to="/services">Create a service</Link>, then have its sender post signed events to it: they appear
              here as they arrive.
            </>
          }
        />
      )}
      {events && events.length > 0 && (
        <EventRows events={events} names={names} caption="The tenant's latest events, newest first" live />
      )}
    </main>
  );
}
