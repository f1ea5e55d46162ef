import { useEffect, useState } from "preact/hooks";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice, Id, Loading, Time } from "../components.tsx";
import { cannotOwn, type Identity } from "../identity.ts";

export function SettingsPage({ identity, onChanged }: { identity: Identity | null; onChanged: () => void }) {
  const [name, setName] = useState(identity?.tenant.name ?? "");
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [saved, setSaved] = useState(false);
  const denied = cannotOwn(identity);
  // Opened directly, the page renders before the identity is read: the name arrives with it.
  const loaded = identity?.tenant.name;
  useEffect(() => {
    if (loaded !== undefined) setName((current) => current || loaded);
  }, [loaded]);
  if (!identity) {
    return (
      <main class="narrow">
        <h1>Tenant settings</h1>
        <Loading label="Loading the tenant…" />
      </main>
    );
  }
  return (
    <main class="narrow">
      <h1>Tenant settings</h1>
      {identity && (
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <Id value={identity.tenant.id} label="tenant id" />
          </dd>
          <dt>Permission mode</dt>
          <dd>{identity.tenant.permissionMode}</dd>
          <dt>Created</dt>
          <dd>
            <Time at={identity.tenant.createdAt} />
          </dd>
        </dl>
      )}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setFailure(null);
          setSaved(false);
          try {
            await api.tenant.updateTenant({ name });
            setSaved(true);
            onChanged();
          } catch (error) {
            setFailure(failureOf(error));
          }
        }}
      >
        <label>
          Tenant name
          <input
            required
            maxLength={80}
            value={name}
            disabled={denied !== null}
            aria-describedby={denied ? "rename-denied" : undefined}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <button type="submit" class="primary" disabled={denied !== null}>
          Rename
        </button>
        {denied && (
          <small id="rename-denied" class="reason">
            {denied}
          </small>
        )}
        {saved && <p role="status">Renamed.</p>}
        <ErrorNotice failure={failure} />
      </form>
    </main>
  );
}
