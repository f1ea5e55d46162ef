/**
 * A service's ingest by outcome over time (SPEC §22): stacked SVG bars, one per stats bucket,
 * drawn by hand — a few dozen lines against a chart library's tens of kilobytes, no inline
 * style (the CSP forbids it: colours come from classes and theme tokens in explorer.css), and
 * the numbers stay in the page as a list of totals a screen reader reads
 * (docs/console.md "Senders").
 */
import { ordered, outcomeClass, outcomeLabel } from "./outcomes.ts";
import { formatLocal } from "./ui/time.tsx";

export interface StatsView {
  window: string;
  bucketSeconds: number;
  from: Date;
  to: Date;
  buckets: { start: Date; counts: Record<string, number> }[];
  totals: Record<string, number>;
}

/** The bar's width in viewBox units; the SVG stretches to the page's width. */
const STEP = 10;
const HEIGHT = 100;

function sum(counts: Record<string, number>): number {
  let n = 0;
  for (const v of Object.values(counts)) n += v;
  return n;
}

/**
 * The time axis: equal segments of the window, each named by how long ago it starts (6-hour
 * segments for 24 h, days for 7 d); the buckets are equal too, so a segment's start is exact.
 */
function ticksOf(stats: StatsView): string[] {
  // "24 h", "18 h", …: "ago" is added by the axis (and left out on a phone).
  const span = stats.to.getTime() - stats.from.getTime();
  const day = span > 86_400_000 * 1.5;
  const segments = day ? Math.round(span / 86_400_000) : 4;
  const step = span / segments;
  return Array.from({ length: segments }, (_, i) => {
    const ago = span - i * step;
    return day ? `${Math.round(ago / 86_400_000)} d` : `${Math.round(ago / 3_600_000)} h`;
  });
}

export function OutcomeChart({ stats, caption }: { stats: StatsView; caption: string }) {
  const peak = Math.max(1, ...stats.buckets.map((b) => sum(b.counts)));
  const width = stats.buckets.length * STEP;
  const present = ordered(stats.totals);
  const total = sum(stats.totals);
  const ticks = ticksOf(stats);
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
          {ticks.slice(1).map((tick, i) => {
            const x = ((i + 1) * width) / ticks.length;
            return (
              <line key={tick} class="chart-grid" x1={x} x2={x} y1="0" y2={HEIGHT} vector-effect="non-scaling-stroke" />
            );
          })}
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
      <div class={`chart-axis meta n${ticks.length}`} aria-hidden="true">
        {ticks.map((tick, i) => (
          <span key={tick}>
            <span title={i === 0 ? formatLocal(stats.from) : undefined}>
              {tick}
              <span class="ago"> ago</span>
            </span>
            {i === ticks.length - 1 && <span class="now">now</span>}
          </span>
        ))}
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
