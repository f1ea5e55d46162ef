/**
 * Confirmation before an irreversible action (SPEC §22: revoke, rotate, delete, resolve), as a
 * native modal <dialog>: the browser keeps the focus inside it, Escape cancels, and the focus
 * returns to the button that opened it. The cancel button has the focus first, so Enter alone
 * never confirms a destructive action.
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks";

export interface ConfirmOptions {
  /** The question, e.g. "Revoke dashboard?" — the dialog's accessible name. */
  title: string;
  /** What happens, in a sentence or two. */
  body?: ComponentChildren;
  /** The confirming button's text, e.g. "Revoke token". */
  confirmLabel: string;
  /** The cancelling button's text; "Cancel" unless said. */
  cancelLabel?: string;
  /** A destructive action: the confirm button is drawn in the danger style. */
  danger?: boolean;
}

/** A controlled confirmation: shown while `open`; `onClose(true)` when confirmed, else `onClose(false)`. */
export function Confirm(props: ConfirmOptions & { open: boolean; onClose: (confirmed: boolean) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const bodyId = useId();
  const { open, onClose } = props;

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby={titleId}
      aria-describedby={props.body ? bodyId : undefined}
      onCancel={(event) => {
        // Escape: the browser would close it; the owner decides, so its state stays the truth.
        event.preventDefault();
        onClose(false);
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.body && <div id={bodyId}>{props.body}</div>}
      <div class="buttons">
        <button type="button" autofocus onClick={() => onClose(false)}>
          {props.cancelLabel ?? "Cancel"}
        </button>
        <button type="button" class={props.danger ? "danger solid" : "primary"} onClick={() => onClose(true)}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/**
 * The promise form: `const { ask, dialog } = useConfirm();` render `{dialog}` once, then
 * `if (await ask({ title, confirmLabel, danger: true })) …`.
 */
export function useConfirm(): { ask: (options: ConfirmOptions) => Promise<boolean>; dialog: ComponentChildren } {
  const [pending, setPending] = useState<{ options: ConfirmOptions; resolve: (ok: boolean) => void } | null>(null);
  const ask = useCallback(
    (options: ConfirmOptions) => new Promise<boolean>((resolve) => setPending({ options, resolve })),
    [],
  );
  const dialog = (
    <Confirm
      {...(pending?.options ?? { title: "", confirmLabel: "" })}
      open={pending !== null}
      onClose={(ok) => {
        pending?.resolve(ok);
        setPending(null);
      }}
    />
  );
  return { ask, dialog };
}
