import { Code, ConnectError } from "@connectrpc/connect";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { Event } from "../../../gen/intake/v1/ingest_pb.ts";
import type { Service } from "../../../gen/intake/v1/services_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { Empty, ErrorNotice, EventList, Id, Link, LiveStatus, Loading, mergeNewest } from "../components.tsx";
import type { Identity } from "../identity.ts";
import { useLiveFeed } from "../live.ts";
import { navigate } from "../router.ts";
import { OpenIncidents } from "./overview-incidents.tsx";

/** How many of the tenant's newest events the overview shows. */
const LATEST = 20;
/** How many services' newest pages the first fill asks for at once. */
const FILL_CONCURRENCY = 4;

async function listAll<T>(
  page: (cursor: string | undefined) => Promise<{ data: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const res = await page(cursor);
    all.push(...res.data);
    cursor = res.nextCursor;
  } while (cursor);
  return all;
}

/**
 * The tenant's newest events. The feed reads oldest first only, so the newest LATEST across the
 * tenant are the merge of each service's own newest page (ListEvents, newest first): one small
 * call per service (docs/console.md).
 */
async function newestOfTenant(services: Service[], signal: AbortSignal): Promise<Event[]> {
  let merged: Event[] = [];
  const queue = [...services];
  const worker = async () => {
    for (let service = queue.shift(); service; service = queue.shift()) {
      try {
        const res = await api.ingest.listEvents({ serviceId: service.id, limit: LATEST }, { signal });
        merged = mergeNewest(merged, res.data, LATEST);
      } catch (error) {
        // Deleted since the list was read: it has no events left to show.
        if (!(error instanceof ConnectError && error.code === Code.NotFound)) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: FILL_CONCURRENCY }, worker));
  return merged;
}

export function OverviewPage({ identity }: { identity: Identity | null }) {
  const [services, setServices] = useState<number | null>(null);
  const [tokens, setTokens] = useState<number | null>(null);
  const [events, setEvents] = useState<Event[] | null>(null);
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const asked = useRef(new Set<string>());

  useEffect(() => {
    listAll((cursor) => api.tokens.listApiTokens({ limit: 100, cursor, includeRevoked: false })).then(
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
      const all = await listAll((cursor) => api.services.listServices({ limit: 100, cursor }, { signal }));
      setServices(all.length);
      named(all);
      const newest = await newestOfTenant(all, signal);
      setEvents((old) => mergeNewest(old ?? [], newest, LATEST));
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
      {identity && (
        <p class="meta">
          Tenant <Id value={identity.tenant.id} label="tenant id" /> · {identity.tenant.permissionMode}
          {identity.self && (
            <>
              {" · signed in as "}
              <strong>{identity.self.name}</strong> ({identity.self.scope}, {identity.self.role})
            </>
          )}
        </p>
      )}
      <ErrorNotice failure={failure} />
      {services !== null && tokens !== null && (
        <ul class="cards">
          <li>
            <strong>{services}</strong> {services === 1 ? "service" : "services"}
          </li>
          <li>
            <strong>{tokens}</strong> active API {tokens === 1 ? "token" : "tokens"}
          </li>
        </ul>
      )}
      <OpenIncidents />
      <h2>Latest events</h2>
      <p class="meta">The tenant's {LATEST} newest events, newest first, across its services.</p>
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
      {events && (
        <EventList
          events={events}
          source={(e) => (
            <a
              href={`/console/services/${e.serviceId}`}
              onClick={(click) => {
                click.preventDefault();
                navigate(`/services/${e.serviceId}`);
              }}
            >
              {names.get(e.serviceId) ?? e.serviceId}
            </a>
          )}
        />
      )}
    </main>
  );
}
