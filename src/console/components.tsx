import type { ComponentChildren } from "preact";
import { useId, useState } from "preact/hooks";
import type { Event } from "../../gen/intake/v1/ingest_pb.ts";
import type { ApiFailure } from "./api.ts";
import type { LiveState } from "./live.ts";

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
            <code>{failure.requestId}</code>
          </>
        )}
      </p>
    </div>
  );
}

/** A credential shown once: readable, selectable, with a copy button and the warning. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
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
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard.writeText(value).then(
              () => setCopied(true),
              () => setCopied(false),
            );
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
    </div>
  );
}

/**
 * A control the signed-in token may not use is shown disabled, with the reason next to it
 * (and linked to it for screen readers).
 */
export function Action(props: {
  onClick: () => void;
  denied: string | null;
  children: ComponentChildren;
  kind?: "danger" | "primary";
  busy?: boolean;
}) {
  const reasonId = useId();
  const disabled = props.denied !== null || props.busy === true;
  return (
    <span class="action">
      <button
        type="button"
        class={props.kind ?? ""}
        disabled={disabled}
        aria-describedby={props.denied ? reasonId : undefined}
        onClick={props.onClick}
      >
        {props.children}
      </button>
      {props.denied && (
        <small id={reasonId} class="reason">
          {props.denied}
        </small>
      )}
    </span>
  );
}

export function Time({ at }: { at: { seconds: bigint; nanos: number } | undefined }) {
  if (!at) return <span>—</span>;
  const date = new Date(Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6));
  return <time dateTime={date.toISOString()}>{date.toISOString().replace("T", " ").slice(0, 19)} UTC</time>;
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

/** Events newest first, pretty-printed; `source` names where each came from (the overview). */
export function EventList({ events, source }: { events: Event[]; source?: (event: Event) => ComponentChildren }) {
  return (
    <ol class="events" aria-live="polite">
      {events.map((e) => (
        <li key={e.id}>
          <p class="meta">
            {source && <>{source(e)} · </>}
            <code>{e.id}</code> · <Time at={e.receivedAt} />
            {e.idempotencyKey && (
              <>
                {" · key "}
                <code>{e.idempotencyKey}</code>
              </>
            )}
          </p>
          <pre>{pretty(e.payload)}</pre>
        </li>
      ))}
    </ol>
  );
}

/** Whether a live view is receiving, and why not when it is not. */
export function LiveStatus({ state }: { state: LiveState }) {
  let text = "Connecting…";
  if (state.kind === "live") text = "Live: new events appear here as they arrive.";
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
