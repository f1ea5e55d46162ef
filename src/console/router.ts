/** Path routing under /console with the History API: every /console/* URL serves the same page. */
import { useEffect, useState } from "preact/hooks";

export const BASE = "/console";

const listeners = new Set<() => void>();

/** The path below /console, e.g. "/services/svc_…"; "/" for the overview. */
export function currentPath(): string {
  const rest = location.pathname.slice(BASE.length);
  return rest === "" ? "/" : rest;
}

export function navigate(path: string): void {
  history.pushState(null, "", BASE + (path === "/" ? "" : path));
  for (const listener of listeners) listener();
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return path;
}
