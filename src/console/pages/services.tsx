import { useCallback, useEffect, useState } from "preact/hooks";
import type { Event } from "../../../gen/intake/v1/ingest_pb.ts";
import { type Service, SignatureScheme } from "../../../gen/intake/v1/services_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import {
  Action,
  Empty,
  ErrorNotice,
  Id,
  Link,
  LiveStatus,
  Loading,
  mergeNewest,
  NotFound,
  ShownOnce,
  Time,
} from "../components.tsx";
import { explorerPath } from "../event-query.ts";
import { EventRows } from "../event-rows.tsx";
import { cannotChange, cannotOwn, type Identity } from "../identity.ts";
import { useLiveFeed } from "../live.ts";
import { navigate } from "../router.ts";
import { ServiceIncidents } from "./service-incidents.tsx";
import { SendersSection } from "./service-senders.tsx";

/** Runs an API call for a button: busy while it runs, its failure shown, never thrown. */
function useCall() {
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(async <T,>(call: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setFailure(null);
    try {
      return await call();
    } catch (error) {
      setFailure(failureOf(error));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { failure, busy, run };
}

export function ServicesPage({ identity }: { identity: Identity | null }) {
  const [services, setServices] = useState<Service[] | null>(null);
  const [name, setName] = useState("");
  const [scheme, setScheme] = useState<SignatureScheme>(SignatureScheme.STRIPE);
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const list = useCall();
  const create = useCall();

  const load = useCallback(async () => {
    const all: Service[] = [];
    let cursor: string | undefined;
    do {
      const res = await list.run(() => api.services.listServices({ limit: 100, cursor }));
      if (!res) return;
      all.push(...res.data);
      cursor = res.nextCursor;
    } while (cursor);
    setServices(all);
  }, [list.run]);
  useEffect(() => void load(), [load]);

  const denied = cannotChange(identity);
  return (
    <main>
      <h1>Services</h1>
      <p>One service per sender; each signs its events with its own secret.</p>
      <form
        class="row"
        onSubmit={async (event) => {
          event.preventDefault();
          const res = await create.run(() =>
            api.services.createService({ serviceName: name, signatureScheme: scheme }),
          );
          if (res?.service) {
            setCreated({ name: res.service.serviceName, secret: res.signingSecret });
            setName("");
            await load();
          }
        }}
      >
        <label>
          New service name
          <input
            required
            maxLength={80}
            value={name}
            disabled={denied !== null}
            aria-describedby={denied ? "create-denied" : undefined}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label>
          Senders sign with
          <select
            value={String(scheme)}
            disabled={denied !== null}
            onChange={(e) => setScheme(Number(e.currentTarget.value) as SignatureScheme)}
          >
            <option value={String(SignatureScheme.STRIPE)}>Stripe (X-Service-Signature)</option>
            <option value={String(SignatureScheme.STANDARD_WEBHOOKS)}>Standard Webhooks / Svix (webhook-*)</option>
          </select>
        </label>
        <button type="submit" class="primary" disabled={denied !== null || create.busy}>
          Create service
        </button>
        {denied && (
          <small id="create-denied" class="reason">
            {denied}
          </small>
        )}
      </form>
      <ErrorNotice failure={create.failure} />
      {created && <ShownOnce label={`Signing secret of ${created.name}`} value={created.secret} />}
      <ErrorNotice failure={list.failure} />
      {!services && !list.failure && <Loading label="Loading services…" />}
      {services?.length === 0 && (
        <Empty
          title="No services yet."
          next="Create one above for each system that sends you events; its signing secret is shown once."
        />
      )}
      {services && services.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Ingestion</th>
              <th scope="col">Secret</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {services.map((s) => (
              <tr key={s.id}>
                <td data-label="Name">
                  <a
                    href={`/console/services/${s.id}`}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`/services/${s.id}`);
                    }}
                  >
                    {s.serviceName}
                  </a>
                </td>
                <td data-label="Id">
                  <Id short value={s.id} label="service id" />
                </td>
                <td data-label="Ingestion">{s.isMonitored ? "on" : "paused"}</td>
                <td data-label="Secret">
                  <code>{s.signingSecretPrefix}…</code>
                </td>
                <td data-label="Created">
                  <Time at={s.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}

/** The newest page the service page opens with; the live tail keeps at most TAIL_MAX. */
const FIRST_PAGE = 50;
const TAIL_MAX = 200;

export function ServicePage({ id, identity }: { id: string; identity: Identity | null }) {
  const [service, setService] = useState<Service | null>(null);
  const [events, setEvents] = useState<Event[]>([]);
  const [rotated, setRotated] = useState<{ secret: string; previousExpiresAt: Date | null } | null>(null);
  const [confirm, setConfirm] = useState("");
  const load = useCall();
  const act = useCall();

  useEffect(() => {
    void load.run(async () => {
      const res = await api.services.getService({ id });
      setService(res.service ?? null);
    });
  }, [id, load.run]);

  // The live tail (docs/console.md): the newest page from ListEvents, then StreamFeed for this
  // service from the position the page was read at.
  const live = useLiveFeed(
    id,
    async (signal) => {
      const res = await api.ingest.listEvents({ serviceId: id, limit: FIRST_PAGE }, { signal });
      setEvents((old) => mergeNewest(old, res.data, TAIL_MAX));
    },
    (event) => setEvents((old) => mergeNewest(old, [event], TAIL_MAX)),
  );

  if (!service) {
    if (load.failure?.code === "not_found" || load.failure?.code === "NotFound") {
      return (
        <NotFound title="Service not found" back={{ to: "/services", label: "See all services" }}>
          <p>
            There is no service <code>{id}</code> in this tenant: it may have been deleted.
          </p>
        </NotFound>
      );
    }
    return (
      <main>
        <h1>Service</h1>
        {load.failure ? <ErrorNotice failure={load.failure} /> : <Loading label="Loading the service…" />}
      </main>
    );
  }
  const change = cannotChange(identity);
  const own = cannotOwn(identity);
  return (
    <main>
      <h1>{service.serviceName}</h1>
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <Id value={service.id} label="service id" />
        </dd>
        <dt>Ingestion</dt>
        <dd>{service.isMonitored ? "on" : "paused: events are refused with 409"}</dd>
        <dt>Secret</dt>
        <dd>
          <code>{service.signingSecretPrefix}…</code>
        </dd>
        <dt>Ingest rate limit</dt>
        <dd>
          {service.rateLimit
            ? `${service.rateLimit.limit} per ${service.rateLimit.windowSeconds} s (this service's own)`
            : "the deployment's default"}
        </dd>
        <dt>Previous secret valid until</dt>
        <dd>
          <Time at={service.previousSecretExpiresAt} />
        </dd>
      </dl>
      <div class="row">
        <Action
          denied={change}
          busy={act.busy}
          onClick={async () => {
            const res = await act.run(() => api.services.updateService({ id, isMonitored: !service.isMonitored }));
            if (res?.service) setService(res.service);
          }}
        >
          {service.isMonitored ? "Pause ingestion" : "Resume ingestion"}
        </Action>
        <Action
          denied={change}
          busy={act.busy}
          confirm={{
            title: `Rotate the signing secret of ${service.serviceName}?`,
            body: (
              <p>
                A new secret is made and shown once. The current one keeps verifying for a grace period, then its
                senders' events are refused until they sign with the new one.
              </p>
            ),
            confirmLabel: "Rotate secret",
            danger: true,
          }}
          onClick={async () => {
            const res = await act.run(() => api.services.rotateSigningSecret({ id }));
            if (!res) return;
            const at = res.previousSecretExpiresAt;
            setRotated({
              secret: res.signingSecret,
              previousExpiresAt: at ? new Date(Number(at.seconds) * 1000) : null,
            });
            const fresh = await api.services.getService({ id });
            if (fresh.service) setService(fresh.service);
          }}
        >
          Rotate signing secret
        </Action>
      </div>
      <ErrorNotice failure={act.failure} />
      <RateLimitForm service={service} denied={change} onSaved={setService} />
      {rotated && (
        <>
          <ShownOnce label="New signing secret" value={rotated.secret} />
          <p>
            The previous secret keeps verifying until <Time at={rotated.previousExpiresAt} />.
          </p>
        </>
      )}

      <ServiceIncidents service={service} denied={change} onSaved={setService} />

      <SendersSection service={service} />
      <h2>Events</h2>
      <p class="meta">
        Newest first, the latest {TAIL_MAX} at most:{" "}
        <Link to={explorerPath({ service_id: id })}>all of them, with search</Link>.
      </p>
      <LiveStatus state={live} />
      {events.length === 0 && live.kind !== "connecting" && (
        <Empty
          title="No events yet."
          next="Events appear here as soon as a sender posts one, signed with this secret: see Senders above."
        />
      )}
      {events.length > 0 && <EventRows events={events} caption={`Events of ${service.serviceName}`} live />}

      <h2>Delete</h2>
      <form
        class="row"
        onSubmit={async (event) => {
          event.preventDefault();
          const res = await act.run(() => api.services.deleteService({ id }));
          if (res) navigate("/services");
        }}
      >
        <label>
          <span>
            Type <strong>{service.serviceName}</strong> to delete it and all its events
          </span>
          <input
            value={confirm}
            disabled={own !== null}
            aria-describedby={own ? "delete-denied" : undefined}
            onInput={(e) => setConfirm(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="danger" disabled={own !== null || confirm !== service.serviceName || act.busy}>
          Delete service
        </button>
        {own && (
          <small id="delete-denied" class="reason">
            {own}
          </small>
        )}
      </form>
    </main>
  );
}

/**
 * The service's own ingest rate limit (docs/rate-limits.md): set it, or return to the
 * deployment's default. The bounds are the API's; the API judges them again.
 */
function RateLimitForm(props: { service: Service; denied: string | null; onSaved: (service: Service) => void }) {
  const { service, denied } = props;
  const save = useCall();
  const [limit, setLimit] = useState(String(service.rateLimit?.limit ?? ""));
  const [windowSeconds, setWindowSeconds] = useState(String(service.rateLimit?.windowSeconds ?? ""));
  const apply = async (rateLimit: { limit: number; windowSeconds: number } | null) => {
    const res = await save.run(() =>
      api.services.updateService(rateLimit ? { id: service.id, rateLimit } : { id: service.id, resetRateLimit: true }),
    );
    if (res?.service) props.onSaved(res.service);
  };
  return (
    <>
      <h2>Ingest rate limit</h2>
      <form
        class="row"
        onSubmit={async (event) => {
          event.preventDefault();
          await apply({ limit: Number(limit), windowSeconds: Number(windowSeconds) });
        }}
      >
        <label>
          Requests
          <input
            type="number"
            required
            min={1}
            max={1_000_000_000}
            step={1}
            value={limit}
            disabled={denied !== null}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </label>
        <label>
          per seconds
          <input
            type="number"
            required
            min={1}
            max={86_400}
            step={1}
            value={windowSeconds}
            disabled={denied !== null}
            onInput={(e) => setWindowSeconds(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={denied !== null || save.busy}>
          Set rate limit
        </button>
        {service.rateLimit && (
          <Action denied={denied} busy={save.busy} onClick={() => void apply(null)}>
            Use the default
          </Action>
        )}
      </form>
      <ErrorNotice failure={save.failure} />
    </>
  );
}
