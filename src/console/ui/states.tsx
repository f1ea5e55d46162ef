/** The states every page has besides its content (SPEC §22): loading, empty, not found. */
import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";
import { navigate } from "../router.ts";

/**
 * Shown while a page's first read runs. It fades in after a moment (CSS), so a fast answer
 * never flashes it; screen readers hear it as a status.
 */
export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}

/** Nothing to show yet, and what to do next: `<Empty title="No services yet" next={…} />`. */
export function Empty({
  title,
  next,
  children,
}: {
  title: string;
  next?: ComponentChildren;
  children?: ComponentChildren;
}) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children}
      {next && <p class="meta">{next}</p>}
    </div>
  );
}

/** A link inside the console that routes without reloading the page. */
export function Link({
  to,
  children,
  ...rest
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  "data-short"?: string;
}) {
  return (
    <a
      {...rest}
      href={`/console${to === "/" ? "" : to}`}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/**
 * A whole page for what is not there: an unknown console path, or a resource that does not
 * exist (or no longer does). `back` is where to go instead.
 */
export function NotFound(props: {
  title?: string;
  children?: ComponentChildren;
  back?: { to: string; label: string };
}) {
  const back = props.back ?? { to: "/", label: "Go to the overview" };
  const title = props.title ?? "Page not found";
  // After the app's own title (a layout effect), on every render: the tab says what happened.
  useEffect(() => {
    document.title = `${title} · Intake console`;
  });
  return (
    <main class="narrow not-found">
      <p class="code" aria-hidden="true">
        404
      </p>
      <h1>{title}</h1>
      {props.children ?? <p>There is nothing at this address in the console. The link may be old or mistyped.</p>}
      <p>
        <Link to={back.to}>{back.label}</Link>
      </p>
    </main>
  );
}
