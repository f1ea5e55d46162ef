import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { useCallback, useEffect, useState } from "preact/hooks";
import type { AuditEvent } from "../../../gen/intake/v1/audit_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { Empty, ErrorNotice, Id, Loading, Time } from "../components.tsx";
import { cannotReadAudit, type Identity } from "../identity.ts";
import { Named, useIncidentTitles, useNames } from "./audit-names.tsx";

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
  const incidents = useIncidentTitles(events);
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
                  <Named subject={e.actor} names={names} incidents={incidents} tenant={tenant} />
                </td>
                <td data-label="Target">
                  <Named subject={e.target} names={names} incidents={incidents} tenant={tenant} />
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
