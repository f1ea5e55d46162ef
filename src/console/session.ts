/**
 * The signed-in token lives in sessionStorage only: never a cookie (no ambient authority for
 * other sites to ride on), never localStorage (gone when the tab closes). Signing out, closing
 * the tab and any 401 forget it.
 */
import { useEffect, useState } from "preact/hooks";

const KEY = "intake.token";

type Listener = () => void;
const listeners = new Set<Listener>();
let reason: string | null = null;

function notify(): void {
  for (const listener of listeners) listener();
}

export const session = {
  token(): string | null {
    return sessionStorage.getItem(KEY);
  },
  signIn(token: string): void {
    sessionStorage.setItem(KEY, token);
    reason = null;
    notify();
  },
  /** Forgets the token; `why` is shown on the sign-in page. */
  signOut(why: string | null = null): void {
    sessionStorage.removeItem(KEY);
    reason = why;
    notify();
  },
  /** Why the last sign-out happened (a 401's message), if it was not the person's choice. */
  reason(): string | null {
    return reason;
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

/** The signed-in token, re-rendering on sign-in and sign-out. */
export function useSessionToken(): string | null {
  const [token, setToken] = useState(session.token());
  useEffect(() => session.subscribe(() => setToken(session.token())), []);
  return token;
}
