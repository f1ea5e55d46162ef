import { useState } from "preact/hooks";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice, Mark, ShownOnce } from "../components.tsx";
import { navigate } from "../router.ts";
import { session } from "../session.ts";

/** The setup link's code travels in the fragment (#code=setup_…), never to a server log. */
function codeFromFragment(): string {
  return new URLSearchParams(location.hash.slice(1)).get("code") ?? "";
}

export function SetupPage() {
  const [code] = useState(codeFromFragment);
  const [name, setName] = useState("");
  const [mode, setMode] = useState("role_based");
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<{ tenantId: string; tokenId: string; token: string } | null>(null);

  if (made) {
    return (
      <main class="narrow welcome">
        <Mark size={44} />
        <h1>Your tenant is ready</h1>
        <p>
          Tenant <code>{made.tenantId}</code> and its first owner token <code>{made.tokenId}</code>.
        </p>
        <ShownOnce label="Owner token" value={made.token} />
        <button
          type="button"
          class="primary"
          onClick={() => {
            session.signIn(made.token);
            navigate("/");
          }}
        >
          Sign in with this token
        </button>
      </main>
    );
  }

  return (
    <main class="narrow welcome">
      <Mark size={44} />
      <h1>Set up Intake</h1>
      {code === "" ? (
        <p class="notice error" role="alert">
          This page needs the link printed by <code>intake setup-link</code>: its code is in the part after #.
        </p>
      ) : (
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            setBusy(true);
            setFailure(null);
            try {
              const res = await api.setup.redeemSetupCode({
                setupCode: code,
                tenantName: name,
                permissionMode: mode,
              });
              // The code is spent: drop it from the address bar and history.
              history.replaceState(null, "", location.pathname);
              setMade({ tenantId: res.tenantId, tokenId: res.tokenId, token: res.token });
            } catch (error) {
              setFailure(failureOf(error));
            } finally {
              setBusy(false);
            }
          }}
        >
          <p>Create your tenant and its first owner token. The link works once.</p>
          <label>
            Tenant name
            <input required maxLength={80} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <fieldset>
            <legend>Permission mode</legend>
            <label class="inline">
              <input
                type="radio"
                name="mode"
                value="role_based"
                checked={mode === "role_based"}
                onChange={() => setMode("role_based")}
              />
              Role based (owner, admin, member)
            </label>
            <label class="inline">
              <input type="radio" name="mode" value="flat" checked={mode === "flat"} onChange={() => setMode("flat")} />
              Flat (every read_write token may do everything)
            </label>
          </fieldset>
          <ErrorNotice failure={failure} />
          <button type="submit" class="primary" disabled={busy}>
            Create tenant
          </button>
        </form>
      )}
    </main>
  );
}
