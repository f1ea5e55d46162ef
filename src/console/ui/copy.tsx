import { useEffect, useState } from "preact/hooks";

/**
 * Copies `text` to the clipboard. Its text is always "Copy": with `label` its accessible name is
 * "Copy <label>", so a screen reader and a test can tell two copy buttons apart; without one (a
 * button right beside what it copies) its name is just "Copy", and `describedBy` can point at
 * what it copies. What happened ("Copied", "Copy failed") is a status beside it for 1.5 s, so
 * the button's name never changes under the pointer (WCAG 2.5.3: its visible text begins it).
 */
export function CopyButton(props: { text: string; label?: string; compact?: boolean; describedBy?: string }) {
  const { text, label, compact } = props;
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const timer = setTimeout(() => setState("idle"), 1500);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <span class={compact ? "copy compact" : "copy"}>
      <button
        type="button"
        aria-label={label ? `Copy ${label}` : undefined}
        aria-describedby={props.describedBy}
        title={label ? `Copy ${label}` : "Copy"}
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setState("copied"),
            () => setState("failed"),
          )
        }
      >
        <CopyIcon />
        <span class={compact ? "visually-hidden" : undefined}>Copy</span>
      </button>
      <span role="status" class="copy-status">
        {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : ""}
      </span>
    </span>
  );
}

/**
 * An id as people handle it: monospace, with its copy button (which copies it whole). `short`
 * shows it abbreviated (`tok_01a21b…c999`, the whole id on hover) where a table has no room.
 */
export function Id({ value, label = "id", short }: { value: string; label?: string; short?: boolean }) {
  return (
    <span class="id">
      <code title={short ? value : undefined}>{short ? abbreviated(value) : value}</code>
      <CopyButton text={value} label={`${label} ${value}`} compact />
    </span>
  );
}

function CopyIcon() {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" width="14" height="14" focusable="false">
      <rect x="5" y="5" width="9" height="9" rx="1.5" fill="none" stroke="currentColor" stroke-width="1.5" />
      <path
        d="M11 3.5V3a1 1 0 0 0-1-1H3a1 1 0 0 0-1 1v7a1 1 0 0 0 1 1h.5"
        fill="none"
        stroke="currentColor"
        stroke-width="1.5"
      />
    </svg>
  );
}

/** `prefix_` + the first 6 and last 4 characters of the rest; a short id stays as it is. */
export function abbreviated(id: string): string {
  const cut = id.indexOf("_") + 1;
  const rest = id.slice(cut);
  return rest.length <= 12 ? id : `${id.slice(0, cut)}${rest.slice(0, 6)}…${rest.slice(-4)}`;
}
