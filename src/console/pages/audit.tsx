import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { useCallback, useEffect, useState } from "preact/hooks";
import type { AuditEvent } from "../../../gen/intake/v1/audit_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice, Time } from "../components.tsx";
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

function shown(value: AuditEvent["changes"][string]["from"]): string {
  return value ? JSON.stringify(toJson(ValueSchema, value)) : "—";
}

export function AuditPage({ identity }: { identity: Identity | null }) {
  const [events, setEvents] = useState<AuditEvent[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [action, setAction] = useState("");
  const [target, setTarget] = useState("");
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const denied = cannotReadAudit(identity);

  const load = useCallback(
    async (after: string | undefined) => {
      setFailure(null);
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
            placeholder="tok_…, svc_… or the tenant id"
            onInput={(e) => setTarget(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorNotice failure={failure} />
      {events.length === 0 && !failure && <p>No audit events match.</p>}
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
                <td>
                  <Time at={e.occurredAt} />
                </td>
                <td>
                  <code class="action">{e.action}</code>
                </td>
                <td>
                  {e.actor?.type}
                  {e.actor?.id && (
                    <>
                      {" "}
                      <code>{e.actor.id}</code>
                    </>
                  )}
                </td>
                <td>
                  {e.target?.type} <code>{e.target?.id}</code>
                </td>
                <td>
                  {Object.entries(e.changes).map(([field, change]) => (
                    <div key={field}>
                      <code>{field}</code>: {shown(change.from)} → {shown(change.to)}
                    </div>
                  ))}
                </td>
                <td>{e.requestId ? <code>{e.requestId}</code> : "CLI"}</td>
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
