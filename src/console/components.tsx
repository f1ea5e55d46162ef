import type { ComponentChildren } from "preact";
import { useId, useState } from "preact/hooks";
import type { ApiFailure } from "./api.ts";

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
