/**
 * The audit log's names (SPEC §22: names beside ids): who acted and what changed, by name, with
 * the id beside it. Services and tokens are read once per page view (tokens with the revoked
 * ones); an incident's title is asked once per incident the page shows.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { AuditEvent } from "../../../gen/intake/v1/audit_pb.ts";
import { api, readAll } from "../api.ts";
import { Id, Link } from "../components.tsx";

/** Names of the ids the log mentions: the tenant's services and tokens (revoked ones too). */
interface Names {
  services: ReadonlyMap<string, string>;
  tokens: ReadonlyMap<string, string>;
}

/**
 * The names, read once per page view. A deleted service has none left to read (its create and
 * delete events carry no name): it is shown as "deleted service" beside its id.
 */
export function useNames(enabled: boolean): Names | null {
  const [names, setNames] = useState<Names | null>(null);
  useEffect(() => {
    if (!enabled) return;
    let current = true;
    Promise.all([
      readAll((cursor) => api.services.listServices({ limit: 100, cursor })),
      readAll((cursor) => api.tokens.listApiTokens({ limit: 100, cursor, includeRevoked: true })),
    ]).then(
      ([services, tokens]) =>
        current &&
        setNames({
          services: new Map(services.map((s) => [s.id, s.serviceName])),
          tokens: new Map(tokens.map((t) => [t.id, t.name])),
        }),
      // Without names the log still reads, by ids.
      () => current && setNames({ services: new Map(), tokens: new Map() }),
    );
    return () => {
      current = false;
    };
  }, [enabled]);
  return names;
}

/** Who or what an audit event names: its name first, then its id (copyable). */
export function Named(props: {
  subject: { type: string; id?: string } | undefined;
  names: Names | null;
  incidents: ReadonlyMap<string, string>;
  tenant: { id: string; name: string } | undefined;
}) {
  const { subject, names, tenant } = props;
  if (!subject) return <span>—</span>;
  if (subject.type === "setup_link") return <span>a setup link</span>;
  if (subject.type === "operator") return <span>the operator (CLI)</span>;
  const id = subject.id ?? "";
  let name: ComponentChildren = null;
  if (subject.type === "service") {
    const known = names?.services.get(id);
    name = known ? <Link to={`/services/${id}`}>{known}</Link> : names && <em>deleted service</em>;
  } else if (subject.type === "api_token") {
    const known = names?.tokens.get(id);
    name = known ? <strong>{known}</strong> : null;
  } else if (subject.type === "incident") {
    const title = props.incidents.get(id);
    name = title ? <Link to={`/incidents/${id}`}>{title}</Link> : null;
  } else if (subject.type === "tenant" && tenant && id === tenant.id) {
    name = <strong>{tenant.name}</strong>;
  }
  return (
    <span class="named">
      <span>
        {name ?? <span class="meta">{subject.type.replace("_", " ")}</span>}
        {name && <span class="meta"> · {subject.type.replace("_", " ")}</span>}
      </span>
      {id && <Id short value={id} label={`${subject.type.replace("_", " ")} id`} />}
    </span>
  );
}

/** The titles of the incidents `events` target, each asked once (GetIncident). */
export function useIncidentTitles(events: AuditEvent[]): ReadonlyMap<string, string> {
  const [titles, setTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const asked = useRef(new Set<string>());
  useEffect(() => {
    for (const e of events) {
      const id = e.target?.type === "incident" ? e.target.id : undefined;
      if (!id || asked.current.has(id)) continue;
      asked.current.add(id);
      api.incidents.getIncident({ id }).then(
        (res) => res.incident && setTitles((old) => new Map([...old, [id, res.incident?.title ?? ""]])),
        // Without its title the incident is still named by its id.
        () => undefined,
      );
    }
  }, [events]);
  return titles;
}
