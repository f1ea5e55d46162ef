import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import type { AuditEvent } from "../../../gen/intake/v1/audit_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { Empty, ErrorNotice, Id, Link, Loading, Time } from "../components.tsx";
import { cannotReadAudit, type Identity } from "../identity.ts";

const ACTIONS = [
  "tenant.create",
  "tenant.update",
  "api_token.create",
  "api_token.revoke",
  "service.create",
  "service.update",
  "service.delete",
  "service.secret_rotate",
  "incident.acknowledge",
  "incident.resolve",
] as const;

/** Names of the ids the log mentions: the tenant's services and tokens (revoked ones too). */
interface Names {
  services: ReadonlyMap<string, string>;
  tokens: ReadonlyMap<string, string>;
}

async function readAll<T>(page: (cursor: string | undefined) => Promise<{ data: T[]; nextCursor?: string }>) {
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
 * The names, read once per page view. A deleted service has none left to read (its create and
 * delete events carry no name): it is shown as "deleted service" beside its id.
 */
function useNames(enabled: boolean): Names | null {
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
function Named(props: {
  subject: { type: string; id?: string } | undefined;
  names: Names | null;
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

function shown(value: AuditEvent["changes"][string]["from"]): string {
  return value ? JSON.stringify(toJson(ValueSchema, value)) : "—";
}

export function AuditPage({ identity }: { identity: Identity | null }) {
  const [events, setEvents] = useState<AuditEvent[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [action, setAction] = useState("");
  const [target, setTarget] = useState("");
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [loading, setLoading] = useState(true);
  const denied = cannotReadAudit(identity);
  const names = useNames(denied === null);
  const tenant = identity ? { id: identity.tenant.id, name: identity.tenant.name } : undefined;

  const load = useCallback(
    async (after: string | undefined) => {
      setFailure(null);
      setLoading(true);
      try {
        const res = await api.audit.listAuditEvents({
          limit: 50,
          cursor: after,
          action: action || undefined,
          targetId: target.trim() || undefined,
        });
        setEvents((old) => (after ? [...old, ...res.data] : res.data));
        setCursor(res.nextCursor);
      } catch (error) {
        setFailure(failureOf(error));
      } finally {
        setLoading(false);
      }
    },
    [action, target],
  );

  useEffect(() => {
    if (denied === null) void load(undefined);
  }, [load, denied]);

  if (denied) {
    return (
      <main>
        <h1>Audit log</h1>
        <p class="notice">{denied}</p>
      </main>
    );
  }
  return (
    <main>
      <h1>Audit log</h1>
      <p class="meta">Every change to this tenant, newest first: who, what, when, and which request.</p>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          void load(undefined);
        }}
      >
        <label>
          Action
          <select value={action} onChange={(e) => setAction(e.currentTarget.value)}>
            <option value="">any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Target id
          <input
            value={target}
            placeholder="tok_…, svc_…, tenant id"
            onInput={(e) => setTarget(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorNotice failure={failure} />
      {loading && events.length === 0 && <Loading label="Loading the audit log…" />}
      {!loading && events.length === 0 && !failure && (
        <Empty
          title={action || target.trim() ? "No audit events match these filters." : "No audit events yet."}
          next={action || target.trim() ? "Choose another action or clear the target id." : undefined}
        />
      )}
      {events.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Actor</th>
              <th scope="col">Target</th>
              <th scope="col">Changes</th>
              <th scope="col">Request</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.id}>
                <td data-label="When">
                  <Time at={e.occurredAt} />
                </td>
                <td data-label="Action">
                  <code class="action">{e.action}</code>
                </td>
                <td data-label="Actor">
                  <Named subject={e.actor} names={names} tenant={tenant} />
                </td>
                <td data-label="Target">
                  <Named subject={e.target} names={names} tenant={tenant} />
                </td>
                <td data-label="Changes">
                  {Object.keys(e.changes).length > 0 && (
                    <div>
                      {Object.entries(e.changes).map(([field, change]) => (
                        <div key={field}>
                          <code>{field}</code>: {shown(change.from)} → {shown(change.to)}
                        </div>
                      ))}
                    </div>
                  )}
                </td>
                <td data-label="Request">
                  {e.requestId ? <Id short value={e.requestId} label="request id" /> : <span>CLI</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" onClick={() => void load(cursor)}>
          Load older events
        </button>
      )}
    </main>
  );
}
