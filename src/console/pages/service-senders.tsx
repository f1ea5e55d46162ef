/**
 * A service page's senders section (SPEC §22 "Senders"; docs/console.md): where a sender posts,
 * how it signs (copyable snippets for the service's scheme, §19), and the last 24 h or 7 d of its
 * ingest by outcome from `ServiceRegistryService/GetServiceStats` (the RPC of
 * `GET /v1/services/{id}/stats`), so a person sees why a sender is refused without reading logs.
 */
import { useEffect, useState } from "preact/hooks";
import type { GetServiceStatsResponse } from "../../../gen/intake/v1/services_pb.ts";
import { type Service, SignatureScheme } from "../../../gen/intake/v1/services_pb.ts";
import { type ApiFailure, api, failureOf } from "../api.ts";
import { ErrorNotice } from "../components.tsx";
import { OutcomeChart, type StatsView } from "../outcome-chart.tsx";
import { ingestUrl, type Scheme, snippetsFor } from "../snippets.ts";
import { CopyButton } from "../ui/copy.tsx";
import { Empty, Loading } from "../ui/states.tsx";
import { toDate } from "../ui/time.tsx";

const WINDOWS = [
  { key: "24h", label: "Last 24 hours" },
  { key: "7d", label: "Last 7 days" },
] as const;
type Window = (typeof WINDOWS)[number]["key"];
/** How often the chart reads the counts again by itself (the server flushes them every 5 s). */
const AUTO_REFRESH_MS = 30_000;

function countsOf(map: { [key: string]: bigint }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(map)) out[k] = Number(v);
  return out;
}

function viewOf(res: GetServiceStatsResponse): StatsView {
  const date = (at: Parameters<typeof toDate>[0]) => toDate(at) ?? new Date(0);
  return {
    window: res.window,
    bucketSeconds: res.bucketSeconds,
    from: date(res.from),
    to: date(res.to),
    buckets: res.buckets.map((b) => ({ start: date(b.start), counts: countsOf(b.counts) })),
    totals: countsOf(res.totals),
  };
}

export function SendersSection({ service }: { service: Service }) {
  const scheme: Scheme = service.signatureScheme === SignatureScheme.STANDARD_WEBHOOKS ? "standard_webhooks" : "stripe";
  const url = ingestUrl(location.origin, service.id);
  return (
    <section class="senders" aria-labelledby="senders-heading">
      <h2 id="senders-heading">Senders</h2>
      <dl class="facts">
        <dt>Ingest URL</dt>
        <dd>
          <span class="id">
            <code>{url}</code>
            <CopyButton text={url} label="ingest URL" compact />
          </span>
        </dd>
        <dt>Signature</dt>
        <dd>
          {scheme === "stripe" ? (
            <>
              Stripe's scheme: <code>X-Service-Signature: t=…,v1=…</code>
            </>
          ) : (
            <>
              Standard Webhooks: <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>{" "}
              (the <code>svix-*</code> spellings too)
            </>
          )}
        </dd>
        <dt>Secret</dt>
        <dd>
          <code>{service.signingSecretPrefix}…</code> — shown whole once, when the service was created or its secret
          rotated. The snippets read it from <code>INTAKE_SIGNING_SECRET</code>.
        </dd>
      </dl>
      <IngestStats serviceId={service.id} />
      <h3>Sign and send</h3>
      <p class="meta">
        A sender signs each body with the service's secret and posts it to the ingest URL. Copy a snippet to try it: it
        sends a <code>test.ping</code> event.
      </p>
      {!service.isMonitored && (
        <p class="notice warning">Ingestion is paused: until it is resumed, every post is refused with 409.</p>
      )}
      {snippetsFor(scheme, url).map((snippet) => (
        <div class="snippet" key={snippet.title}>
          <div class="row heading-row">
            <h4>{snippet.title}</h4>
            <span class="meta">{snippet.needs}</span>
            <CopyButton text={snippet.code} label={`${snippet.title} snippet`} />
          </div>
          <details>
            <summary>Show the code</summary>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls sideways must take the focus, or the keyboard cannot scroll it (axe scrollable-region-focusable) */}
            <pre tabIndex={0}>
              <code class="snippet-code">{snippet.code}</code>
            </pre>
          </details>
        </div>
      ))}
    </section>
  );
}

function IngestStats({ serviceId }: { serviceId: string }) {
  const [span, setSpan] = useState<Window>("24h");
  const [stats, setStats] = useState<StatsView | null>(null);
  const [failure, setFailure] = useState<ApiFailure | null>(null);
  const [generation, setGeneration] = useState(0);

  // The counts follow on their own while the page is open and visible.
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") setGeneration((g) => g + 1);
    }, AUTO_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    const abort = new AbortController();
    setFailure(null);
    api.services.getServiceStats({ id: serviceId, window: span }, { signal: abort.signal }).then(
      (res) => setStats(viewOf(res)),
      (error) => {
        if (!abort.signal.aborted) setFailure(failureOf(error));
      },
    );
    return () => abort.abort();
  }, [serviceId, span, generation]);

  const label = WINDOWS.find((w) => w.key === span)?.label ?? span;
  const shown = stats?.window === span ? stats : null;
  const empty = shown && Object.values(shown.totals).every((n) => n === 0);
  return (
    <>
      <h3>Ingest by outcome</h3>
      <fieldset class="row bare">
        <legend class="visually-hidden">Time window</legend>
        {WINDOWS.map((w) => (
          <button key={w.key} type="button" aria-pressed={span === w.key} onClick={() => setSpan(w.key)}>
            {w.label}
          </button>
        ))}
        <button type="button" onClick={() => setGeneration((g) => g + 1)}>
          Refresh
        </button>
      </fieldset>
      <p class="meta">
        Every attempt to post to this service, by what Intake answered. A refused sender always gets the same 401; the
        reason is shown only here. Counts arrive within a few seconds; the chart reads them again every 30 s.
      </p>
      <ErrorNotice failure={failure} />
      {!shown && !failure && <Loading label="Loading the counts…" />}
      {empty && (
        <Empty
          title={`No ingest in the ${label.toLowerCase()}`}
          next="Send an event with a snippet above, then refresh."
        />
      )}
      {shown && !empty && <OutcomeChart stats={shown} caption={`Ingest, ${label.toLowerCase()}`} />}
    </>
  );
}
