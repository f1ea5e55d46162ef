/**
 * A service's ingest by outcome over time (SPEC §22): stacked SVG bars, one per stats bucket,
 * drawn by hand — a few dozen lines against a chart library's tens of kilobytes, no inline
 * style (the CSP forbids it: colours come from classes and theme tokens in explorer.css), and
 * the numbers stay in the page as a list of totals a screen reader reads
 * (docs/console.md "Senders").
 */
import { formatLocal } from "./ui/time.tsx";

export interface StatsView {
  window: string;
  bucketSeconds: number;
  from: Date;
  to: Date;
  buckets: { start: Date; counts: Record<string, number> }[];
  totals: Record<string, number>;
}

/** Every outcome the server counts (src/domain/stats-types.ts), in stacking order, with what it means. */
export const OUTCOMES: readonly { key: string; label: string }[] = [
  { key: "accepted", label: "Accepted (202)" },
  { key: "duplicate", label: "Duplicate: already stored (200)" },
  { key: "no_matching_signature", label: "Refused: wrong signature (401)" },
  { key: "timestamp_outside_tolerance", label: "Refused: timestamp too old or in the future (401)" },
  { key: "malformed_signature_header", label: "Refused: missing or malformed signature headers (401)" },
  { key: "paused", label: "Refused: ingestion paused (409)" },
  { key: "invalid_request", label: "Refused: invalid body or headers (400)" },
  { key: "payload_too_large", label: "Refused: body too large (413)" },
  { key: "rate_limited", label: "Refused: rate limited (429)" },
  { key: "unavailable", label: "Failed: store unavailable (503)" },
  { key: "internal_error", label: "Failed: server error (500)" },
];

export function outcomeLabel(key: string): string {
  return OUTCOMES.find((o) => o.key === key)?.label ?? key;
}

/** An outcome this console does not know yet (a newer server) still gets a bar. */
function ordered(counts: Record<string, number>): string[] {
  const known = OUTCOMES.map((o) => o.key).filter((k) => (counts[k] ?? 0) > 0);
  const other = Object.keys(counts).filter((k) => !OUTCOMES.some((o) => o.key === k) && (counts[k] ?? 0) > 0);
  return [...known, ...other.sort()];
}

export function outcomeClass(key: string): string {
  return OUTCOMES.some((o) => o.key === key) ? `o-${key.replaceAll("_", "-")}` : "o-other";
}

/** The bar's width in viewBox units; the SVG stretches to the page's width. */
const STEP = 10;
const HEIGHT = 100;

function sum(counts: Record<string, number>): number {
  let n = 0;
  for (const v of Object.values(counts)) n += v;
  return n;
}

export function OutcomeChart({ stats, caption }: { stats: StatsView; caption: string }) {
  const peak = Math.max(1, ...stats.buckets.map((b) => sum(b.counts)));
  const width = stats.buckets.length * STEP;
  const present = ordered(stats.totals);
  const total = sum(stats.totals);
  const summary =
    total === 0
      ? `${caption}: no ingest.`
      : `${caption}: ${present.map((k) => `${stats.totals[k]} ${outcomeLabel(k)}`).join(", ")}.`;
  return (
    <figure class="outcome-chart">
      <figcaption>{caption}</figcaption>
      <div class="chart-frame">
        <span class="chart-peak meta" aria-hidden="true">
          {peak}
        </span>
        <svg viewBox={`0 0 ${width} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={summary}>
          <line class="chart-base" x1="0" x2={width} y1={HEIGHT} y2={HEIGHT} vector-effect="non-scaling-stroke" />
          {stats.buckets.map((bucket, i) => {
            const keys = ordered(bucket.counts);
            if (keys.length === 0) return null;
            let y = HEIGHT;
            const end = new Date(bucket.start.getTime() + stats.bucketSeconds * 1000);
            return (
              <g key={bucket.start.getTime()}>
                <title>
                  {`${formatLocal(bucket.start)} – ${formatLocal(end)}\n`}
                  {keys.map((k) => `${bucket.counts[k]} ${outcomeLabel(k)}`).join("\n")}
                </title>
                {keys.map((k) => {
                  const h = ((bucket.counts[k] ?? 0) / peak) * HEIGHT;
                  y -= h;
                  return <rect key={k} class={outcomeClass(k)} x={i * STEP + 1} width={STEP - 2} y={y} height={h} />;
                })}
              </g>
            );
          })}
        </svg>
      </div>
      <div class="chart-axis meta" aria-hidden="true">
        <span>{formatLocal(stats.from)}</span>
        <span>now</span>
      </div>
      {total > 0 && (
        <ul class="outcome-totals" aria-label={`${caption}: totals by outcome`}>
          {present.map((k) => (
            <li key={k}>
              <span class={`swatch ${outcomeClass(k)}`} aria-hidden="true" />
              <span class="outcome">{outcomeLabel(k)}</span>
              <strong class="num">{(stats.totals[k] ?? 0).toLocaleString()}</strong>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
