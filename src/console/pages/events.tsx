/**
 * The events explorer (SPEC §18, §22; docs/console.md "Events explorer"): the tenant's events
 * newest first through `IngestService/SearchEvents` (the RPC of `GET /v1/events`), §18's filters
 * and `q`, one compact row per event, older pages by cursor. The filters and the cursor live in
 * the address (`/console/events?q=…&service_id=…&cursor=…`), so a view can be linked, reloaded,
 * and left for an event page and come back to with the browser's Back.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { Event } from "../../../gen/intake/v1/ingest_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice } from "../components.tsx";
import { explorerPath, FILTERS, type Filters, filtersOf, isoOfLocal, localOfIso } from "../event-query.ts";
import { EventRows } from "../event-rows.tsx";
import { navigate } from "../router.ts";
import { useServices } from "../service-names.ts";
import { Empty, Link, Loading } from "../ui/states.tsx";

/** Events per page. */
const PAGE = 50;

/** The address's query, following Back and Forward and the explorer's own navigations. */
function useSearch(): [string, (filters: Filters) => void, number] {
  const [search, setSearch] = useState(location.search);
  // Asking again for the same view (Search pressed twice) reads it again.
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    const update = () => setSearch(location.search);
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  const go = (filters: Filters) => {
    navigate(explorerPath(filters));
    setSearch(location.search);
    setAsked((n) => n + 1);
    scrollTo(0, 0);
  };
  return [search, go, asked];
}

interface Result {
  /** The address's query this page answers: a result of another is never shown as this one's. */
  key: string;
  events: Event[];
  next: string | null;
}

export function EventsPage() {
  const [search, go, asked] = useSearch();
  const filters = useMemo(() => filtersOf(search), [search]);
  const key = `${asked} ${search}`;
  const { services, names, failure: servicesFailure } = useServices();
  const [answer, setAnswer] = useState<Result | null>(null);
  const [refusal, setRefusal] = useState<{ key: string; failure: ApiFailure } | null>(null);
  const result = answer?.key === key ? answer : null;
  const failure = refusal?.key === key ? refusal.failure : null;

  useEffect(() => {
    const abort = new AbortController();
    api.ingest
      .searchEvents(
        {
          q: filters.q,
          serviceId: filters.service_id,
          type: filters.type,
          incidentId: filters.incident_id,
          receivedAfter: filters.received_after,
          receivedBefore: filters.received_before,
          cursor: filters.cursor,
          limit: PAGE,
        },
        { signal: abort.signal },
      )
      .then(
        (res) => setAnswer({ key, events: res.data, next: res.nextCursor ?? null }),
        (error) => {
          if (!abort.signal.aborted) setRefusal({ key, failure: failureOf(error) });
        },
      );
    return () => abort.abort();
  }, [key, filters]);

  const { cursor: _cursor, ...unpaged } = filters;
  const narrowed = FILTERS.some((key) => filters[key]);
  return (
    <main>
      <h1>Events</h1>
      <p>Every event of the tenant, newest first. Search the payloads, or narrow by service, type and time.</p>
      <FilterForm filters={filters} services={services} types={result?.events ?? []} onApply={go} />
      <ErrorNotice failure={servicesFailure} />
      <Refusal failure={failure} filters={filters} onApply={go} />
      {!result && !failure && <Loading label="Finding events…" />}
      {result && result.events.length === 0 && (
        <Empty
          title={filters.cursor ? "No older events" : narrowed ? "No event matches" : "No events yet"}
          next={
            narrowed ? (
              "Remove a filter or widen the time range."
            ) : (
              <>
                Create a <Link to="/services">service</Link>: its page shows how a sender signs and posts events.
              </>
            )
          }
        />
      )}
      {result && result.events.length > 0 && (
        <>
          <p class="meta" role="status">
            {result.events.length} event{result.events.length === 1 ? "" : "s"}
            {filters.cursor ? " (an older page)" : ""}, newest first.
          </p>
          <EventRows events={result.events} names={names} caption="Events, newest first" />
        </>
      )}
      {(filters.cursor || result?.next) && (
        <nav class="row pager" aria-label="Pages">
          {filters.cursor && (
            <ViewLink filters={unpaged} go={go}>
              Newest events
            </ViewLink>
          )}
          {result?.next && (
            <ViewLink filters={{ ...unpaged, cursor: result.next }} go={go}>
              Older events
            </ViewLink>
          )}
        </nav>
      )}
    </main>
  );
}

/** A link to another view of the explorer: a real address (it opens in a new tab too), routed in place. */
function ViewLink(props: { filters: Filters; go: (filters: Filters) => void; children: ComponentChildren }) {
  return (
    <a
      href={`/console${explorerPath(props.filters)}`}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        props.go(props.filters);
      }}
    >
      {props.children}
    </a>
  );
}

/**
 * A refused search, explained. `search_disabled` is the deployment's choice, not the person's
 * mistake: say so, and offer the same filters without the words.
 */
function Refusal(props: { failure: ApiFailure | null; filters: Filters; onApply: (filters: Filters) => void }) {
  const { failure, filters } = props;
  if (!failure) return null;
  if (failure.code === "search_disabled") {
    const { q: _q, cursor: _c, ...rest } = filters;
    return (
      <div class="notice warning" role="alert">
        <p>
          <strong>Searching payloads is turned off on this server.</strong> Its operator runs it with{" "}
          <code>INTAKE_EVENT_SEARCH=false</code>, so there is no index to search the words in (docs/search.md). The
          other filters work.
        </p>
        <p>
          <button type="button" onClick={() => props.onApply(rest)}>
            Show the events without the search words
          </button>
        </p>
      </div>
    );
  }
  if (failure.code === "invalid_request" && failure.details?.length) {
    return (
      <div class="notice error" role="alert">
        <p>The server refused these filters:</p>
        <ul>
          {failure.details.map((d) => (
            <li key={d.field}>
              <code>{d.field}</code> {d.message}
            </li>
          ))}
        </ul>
      </div>
    );
  }
  return <ErrorNotice failure={failure} />;
}

function FilterForm(props: {
  filters: Filters;
  services: { id: string; serviceName: string }[] | null;
  types: Event[];
  onApply: (filters: Filters) => void;
}) {
  const { filters } = props;
  const [q, setQ] = useState(filters.q ?? "");
  const [serviceId, setServiceId] = useState(filters.service_id ?? "");
  const [type, setType] = useState(filters.type ?? "");
  const [incidentId, setIncidentId] = useState(filters.incident_id ?? "");
  const [after, setAfter] = useState(localOfIso(filters.received_after));
  const [before, setBefore] = useState(localOfIso(filters.received_before));
  // Back and Forward change the address: the form follows it.
  useEffect(() => {
    setQ(filters.q ?? "");
    setServiceId(filters.service_id ?? "");
    setType(filters.type ?? "");
    setIncidentId(filters.incident_id ?? "");
    setAfter(localOfIso(filters.received_after));
    setBefore(localOfIso(filters.received_before));
  }, [filters]);
  const seenTypes = [...new Set(props.types.map((e) => e.type).filter((t): t is string => !!t))].sort();
  return (
    <form
      class="filters"
      aria-label="Find events"
      onSubmit={(event) => {
        event.preventDefault();
        props.onApply({
          q: q.trim() || undefined,
          service_id: serviceId || undefined,
          type: type.trim() || undefined,
          incident_id: incidentId.trim() || undefined,
          received_after: isoOfLocal(after),
          received_before: isoOfLocal(before),
        });
      }}
    >
      <div class="row">
        <label class="grow">
          Search payloads
          <input
            type="search"
            value={q}
            placeholder="cus_123 invoice.paid"
            aria-describedby="q-hint"
            onInput={(e) => setQ(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary">
          Search
        </button>
      </div>
      <p id="q-hint" class="meta">
        Each word (3 characters or more, up to 8 words) must appear somewhere in the payload, in any case.
      </p>
      <div class="grid filter-grid">
        <label>
          Service
          <select value={serviceId} onChange={(e) => setServiceId(e.currentTarget.value)}>
            <option value="">All services</option>
            {(props.services ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                {s.serviceName}
              </option>
            ))}
          </select>
        </label>
        <label>
          Type
          <input
            value={type}
            list="seen-types"
            placeholder="invoice.paid"
            onInput={(e) => setType(e.currentTarget.value)}
          />
          <datalist id="seen-types">
            {seenTypes.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </label>
        <When label="Received from" value={after} onInput={setAfter} />
        <When label="Received before" value={before} onInput={setBefore} />
        <label>
          Incident
          <input
            value={incidentId}
            placeholder="inc_…"
            pattern="inc_[0-9a-f]{32}"
            onInput={(e) => setIncidentId(e.currentTarget.value)}
          />
        </label>
      </div>
      <div class="row">
        <button type="submit">Apply filters</button>
        <button type="button" onClick={() => props.onApply({})}>
          Clear
        </button>
      </div>
    </form>
  );
}

/** A time filter: a `datetime-local` field in the viewer's time zone, the whole width of a phone. */
function When(props: { label: string; value: string; onInput: (value: string) => void }) {
  return (
    <label class="when">
      {props.label}
      <input type="datetime-local" value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
    </label>
  );
}
