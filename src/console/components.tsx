/**
 * The console's shared components. Pages import them from here; the bigger ones live in ui/.
 * See docs/console.md ("Components and theme") for how pages use them.
 */
import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import type { Event } from "../../gen/intake/v1/ingest_pb.ts";
import type { ApiFailure } from "./api.ts";
import type { LiveState } from "./live.ts";
import { type ConfirmOptions, useConfirm } from "./ui/confirm.tsx";
import { CopyButton, Id } from "./ui/copy.tsx";

export { Confirm, type ConfirmOptions, useConfirm } from "./ui/confirm.tsx";
export { CopyButton, Id } from "./ui/copy.tsx";
export { Mark } from "./ui/mark.tsx";
export { Empty, Link, Loading, NotFound } from "./ui/states.tsx";
export { formatLocal, formatUtc, type Stamp, Time, toDate, type When } from "./ui/time.tsx";

/** A failed call, as the API said it: its message, its code and the request id to quote. */
export function ErrorNotice({ failure }: { failure: ApiFailure | null }) {
  if (!failure) return null;
  return (
    <div class="notice error" role="alert">
      <p>{failure.message}</p>
      <p class="meta">
        <code>{failure.code}</code>
        {failure.requestId && (
          <>
            {" · request "}
            <Id value={failure.requestId} label="request id" />
          </>
        )}
      </p>
    </div>
  );
}

/** A credential shown once: readable, selectable, with a copy button and the warning. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const id = useId();
  return (
    <div class="notice once">
      <p>
        <strong>{label}</strong> — shown this once. Store it now: it cannot be shown again.
      </p>
      <div class="secret">
        <output id={id} aria-label={label}>
          {value}
        </output>
        <CopyButton text={value} describedBy={id} />
      </div>
    </div>
  );
}

/**
 * A control the signed-in token may not use is shown disabled, with the reason next to it
 * (and linked to it for screen readers). With `confirm`, a click first asks (a modal dialog)
 * and `onClick` runs only when the person confirms. `label` names it for screen readers when its
 * text is short ("Revoke", named "Revoke dashboard"): it must begin with that text (WCAG 2.5.3).
 */
export function Action(props: {
  onClick: () => void;
  label?: string;
  denied: string | null;
  children: ComponentChildren;
  kind?: "danger" | "primary";
  busy?: boolean;
  confirm?: ConfirmOptions;
}) {
  const reasonId = useId();
  const { ask, dialog } = useConfirm();
  const disabled = props.denied !== null || props.busy === true;
  return (
    <span class="action">
      <button
        type="button"
        class={props.kind ?? ""}
        aria-label={props.label}
        disabled={disabled}
        aria-describedby={props.denied ? reasonId : undefined}
        aria-haspopup={props.confirm ? "dialog" : undefined}
        onClick={async () => {
          if (props.confirm && !(await ask(props.confirm))) return;
          props.onClick();
        }}
      >
        {props.children}
      </button>
      {props.denied && (
        <small id={reasonId} class="reason">
          {props.denied}
        </small>
      )}
      {props.confirm && dialog}
    </span>
  );
}

const utf8 = new TextDecoder();

/** A payload as people read it: JSON indented, anything else as the text it is. */
export function pretty(payload: Uint8Array): string {
  const text = utf8.decode(payload);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * Whether a live view is receiving, and why not when it is not; `arriving` says what appears
 * while it is live (by default new events).
 */
export function LiveStatus({
  state,
  arriving = "new events appear here as they arrive",
}: {
  state: LiveState;
  arriving?: string;
}) {
  let text = "Connecting…";
  if (state.kind === "live") text = `Live: ${arriving}.`;
  if (state.kind === "paused") text = "Paused while the tab is hidden.";
  if (state.kind === "reconnecting") text = `Reconnecting (${state.failure.message})…`;
  if (state.kind === "stopped") text = `Not live: ${state.failure.message}`;
  return (
    <p class={`meta live ${state.kind}`} role="status">
      {text}
    </p>
  );
}

/** Merges events into a newest-first list by id, keeping at most `max`. */
export function mergeNewest(old: Event[], incoming: Event[], max: number): Event[] {
  const seen = new Set(old.map((e) => e.id));
  const fresh = incoming.filter((e) => !seen.has(e.id));
  if (fresh.length === 0) return old;
  return [...fresh, ...old].sort(newestFirst).slice(0, max);
}

function newestFirst(a: Event, b: Event): number {
  const at = (e: Event) => (e.receivedAt ? Number(e.receivedAt.seconds) * 1e3 + e.receivedAt.nanos / 1e6 : 0);
  return at(b) - at(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}
