import { useState } from "preact/hooks";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice, Mark } from "../components.tsx";
import { session } from "../session.ts";

export function SignInPage() {
  const [token, setToken] = useState("");
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const why = session.reason();
  return (
    <main class="narrow welcome">
      <Mark size={44} />
      <h1>Sign in to Intake</h1>
      {why && (
        <p class="notice" role="status">
          {why}
        </p>
      )}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setFailure(null);
          const candidate = token.trim();
          try {
            // Tried before it is kept: a refused token never enters the session.
            await api.tenant.getTenant({}, { headers: { authorization: `Bearer ${candidate}` } });
            session.signIn(candidate);
          } catch (error) {
            setFailure(failureOf(error));
          }
        }}
      >
        <p>Paste an API token. It stays in this tab only and is forgotten when the tab closes.</p>
        <label>
          API token
          <input
            type="password"
            required
            autoComplete="off"
            spellcheck={false}
            placeholder="service_live_…"
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </label>
        <ErrorNotice failure={failure} />
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
