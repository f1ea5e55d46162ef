/**
 * Whether this tab holds its live streams (docs/console.md, "Live views"). A tab that stays
 * hidden (`document.visibilityState`, the Page Visibility API) for `HIDDEN_GRACE_MS` lets them
 * go, so tabs left in the background do not hold the token's live-reader cap; shown again, it
 * takes them back. A switch to another tab and back within the grace keeps them open.
 *
 * One state for the whole tab, which both live loops consult (`attemptSignal` in live.ts): the
 * signal of the present shown period, aborted when the grace runs out, and a fresh one once the
 * tab is shown again.
 */

export const HIDDEN_GRACE_MS = 10_000;

let period = new AbortController();
let timer: ReturnType<typeof setTimeout> | undefined;
const waiting = new Set<() => void>();

function follow(): void {
  if (document.visibilityState === "hidden") {
    if (timer === undefined && !period.signal.aborted) {
      timer = setTimeout(() => {
        timer = undefined;
        period.abort(new DOMException("The tab is hidden.", "AbortError"));
      }, HIDDEN_GRACE_MS);
    }
    return;
  }
  clearTimeout(timer);
  timer = undefined;
  if (!period.signal.aborted) return;
  period = new AbortController();
  for (const wake of waiting) wake();
}

// Not in a browser (a unit test importing a module that imports this one): always shown.
if (typeof document !== "undefined") {
  document.addEventListener("visibilitychange", follow);
  follow();
}

/** The present shown period's signal: aborted once the tab has been hidden for the grace. */
export function streamsHeld(): AbortSignal {
  return period.signal;
}

/** Resolves once the tab holds its streams again (at once if it does), or when `signal` aborts. */
export function whenShown(signal: AbortSignal): Promise<void> {
  if (!period.signal.aborted || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      waiting.delete(done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    waiting.add(done);
    signal.addEventListener("abort", done, { once: true });
  });
}
