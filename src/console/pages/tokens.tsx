import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useCallback, useEffect, useState } from "preact/hooks";
import type { ApiToken } from "../../../gen/intake/v1/api_tokens_pb.ts";
import { type ApiFailure, api, failureOf, readAll } from "../api.ts";
import { Action, Empty, ErrorNotice, Id, Loading, ShownOnce, Time } from "../components.tsx";
import { cannotChange, type Identity, mayHandleRole } from "../identity.ts";

const ROLES = ["member", "admin", "owner"] as const;

/** What the API's last_owner_token refusal means for the person reading it. */
const LAST_OWNER_HELP =
  "Mint another owner read_write token that does not expire first: a tenant must always keep one, or nobody could administer it again.";

export function TokensPage({ identity }: { identity: Identity | null }) {
  const [tokens, setTokens] = useState<ApiToken[] | null>(null);
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const [name, setName] = useState("");
  const [scope, setScope] = useState("read_only");
  const [role, setRole] = useState("member");
  const [expires, setExpires] = useState("");
  const [minted, setMinted] = useState<{ name: string; token: string } | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setTokens(await readAll((cursor) => api.tokens.listApiTokens({ limit: 100, cursor, includeRevoked })));
    } catch (error) {
      setFailure(failureOf(error));
    }
  }, [includeRevoked]);
  useEffect(() => void load(), [load]);

  async function attempt(call: () => Promise<unknown>) {
    setBusy(true);
    setFailure(null);
    try {
      await call();
      await load();
    } catch (error) {
      setFailure(failureOf(error));
    } finally {
      setBusy(false);
    }
  }

  const denied = cannotChange(identity);
  return (
    <main>
      <h1>API tokens</h1>
      <form
        class="grid"
        onSubmit={(event) => {
          event.preventDefault();
          void attempt(async () => {
            const res = await api.tokens.createApiToken({
              name,
              scope,
              role,
              expiresAt: expires ? timestampFromDate(new Date(expires)) : undefined,
            });
            setMinted({ name: res.apiToken?.name ?? name, token: res.token });
            setName("");
          });
        }}
      >
        <label>
          Name
          <input
            required
            maxLength={80}
            value={name}
            disabled={denied !== null}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label>
          Scope
          <select value={scope} disabled={denied !== null} onChange={(e) => setScope(e.currentTarget.value)}>
            <option value="read_only">read_only</option>
            <option value="read_write">read_write</option>
          </select>
        </label>
        <label>
          Role
          <select value={role} disabled={denied !== null} onChange={(e) => setRole(e.currentTarget.value)}>
            {ROLES.map((r) => (
              <option key={r} value={r} disabled={!mayHandleRole(identity, r)}>
                {r}
                {mayHandleRole(identity, r) ? "" : " (above this token's role)"}
              </option>
            ))}
          </select>
        </label>
        <label>
          Expires (optional, your local time)
          <input
            type="datetime-local"
            value={expires}
            disabled={denied !== null}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
        </label>
        <div class="row">
          <button type="submit" class="primary" disabled={denied !== null || busy}>
            Create token
          </button>
          {denied && <small class="reason">{denied}</small>}
        </div>
      </form>
      {minted && <ShownOnce label={`Token ${minted.name}`} value={minted.token} />}
      <ErrorNotice failure={failure} />
      {failure?.code === "last_owner_token" && <p class="notice">{LAST_OWNER_HELP}</p>}

      <label class="inline">
        <input type="checkbox" checked={includeRevoked} onChange={(e) => setIncludeRevoked(e.currentTarget.checked)} />
        Show revoked tokens
      </label>
      {!tokens && !failure && <Loading label="Loading tokens…" />}
      {tokens?.length === 0 && (
        <Empty
          title={includeRevoked ? "No tokens." : "No active tokens."}
          next="Create one above; it is shown once, so store it where it will be used."
        />
      )}
      {tokens && tokens.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scope</th>
              <th scope="col">Role</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => {
              const self = identity?.self?.id === t.id;
              const revokeDenied =
                denied ?? (mayHandleRole(identity, t.role) ? null : `A ${t.role} token is above this token's role.`);
              return (
                <tr key={t.id}>
                  <td data-label="Name">
                    <span>
                      {t.name}
                      {self && <small> (this token)</small>}
                    </span>
                  </td>
                  <td data-label="Prefix">
                    <Id value={t.prefix} label="prefix" />
                  </td>
                  <td data-label="Scope">{t.scope}</td>
                  <td data-label="Role">{t.role}</td>
                  <td data-label="Expires">{t.expiresAt ? <Time at={t.expiresAt} /> : "never"}</td>
                  <td data-label="Last used">
                    <Time at={t.lastUsedAt} fallback="never" />
                  </td>
                  <td data-label="Status">
                    <TokenStatus token={t} />
                  </td>
                  <td class="row-action">
                    {!t.revokedAt && (
                      <Action
                        kind="danger"
                        label={`Revoke ${t.name}`}
                        denied={revokeDenied}
                        busy={busy}
                        confirm={{
                          title: `Revoke ${t.name}?`,
                          body: (
                            <p>
                              Every call made with <code>{t.prefix}…</code> is refused from now on
                              {self ? ", including this console's: you will be signed out" : ""}. A revoked token cannot
                              be restored.
                            </p>
                          ),
                          confirmLabel: "Revoke token",
                          danger: true,
                        }}
                        onClick={() => void attempt(() => api.tokens.revokeApiToken({ id: t.id }))}
                      >
                        Revoke
                      </Action>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </main>
  );
}

/** A token's state in words: active, expired (past its expiry, not revoked), or revoked and when. */
function TokenStatus({ token }: { token: ApiToken }) {
  if (token.revokedAt) {
    return (
      <span>
        <span class="badge token-revoked">revoked</span> <Time at={token.revokedAt} />
      </span>
    );
  }
  const expired = token.expiresAt && Number(token.expiresAt.seconds) * 1000 <= Date.now();
  return expired ? <span class="badge token-expired">expired</span> : <span class="badge token-active">active</span>;
}
