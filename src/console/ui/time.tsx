/**
 * One date format everywhere (SPEC §22): the viewer's local time, with the UTC instant on hover
 * (the title) and in the machine-readable `datetime`. Intl only: no date library.
 */

/** A protobuf Timestamp as the generated clients give it. */
export interface Stamp {
  seconds: bigint;
  nanos: number;
}

/** Whatever a page holds: an ISO string (REST), a Date, or a protobuf Timestamp (Connect). */
export type When = string | number | Date | Stamp | null | undefined;

export function toDate(at: When): Date | null {
  if (at === null || at === undefined || at === "") return null;
  if (at instanceof Date) return Number.isNaN(at.getTime()) ? null : at;
  if (typeof at === "string" || typeof at === "number") {
    const date = new Date(at);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return new Date(Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6));
}

const LOCAL = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

/** "27 Nov 2026, 03:35:31" in the viewer's locale and time zone. */
export function formatLocal(at: When): string {
  const date = toDate(at);
  return date ? LOCAL.format(date) : "—";
}

/** "2026-11-27 03:35:31 UTC": the hover text. */
export function formatUtc(at: When): string {
  const date = toDate(at);
  return date ? `${date.toISOString().replace("T", " ").slice(0, 19)} UTC` : "";
}

/** A moment, shown in the viewer's local time; the UTC instant on hover. "—" when absent. */
export function Time({ at, fallback = "—" }: { at: When; fallback?: string }) {
  const date = toDate(at);
  if (!date) return <span>{fallback}</span>;
  return (
    <time dateTime={date.toISOString()} title={formatUtc(date)}>
      {LOCAL.format(date)}
    </time>
  );
}
