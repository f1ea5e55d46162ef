/**
 * Times in the two public forms: RFC 3339 text (REST) and google.protobuf.Timestamp (RPC).
 * Every time a response carries is written by one of these.
 */
import type { Message } from "@bufbuild/protobuf";
import { type Timestamp, timestampMs } from "@bufbuild/protobuf/wkt";
import { isRepresentableTime } from "../domain/time.ts";

const DAY_MS = 86_400_000;
/** Date's own range: ±100,000,000 days around the epoch. */
const MAX_DATE_MS = 8.64e15;

/** "000Z" … "999Z": the end of a time with milliseconds. */
const MILLIS_Z = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, "0")}Z`);

function twoDigits(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/**
 * The RFC 3339 writer. Its caches (the `YYYY-MM-DDT` of recent days, the text of the last
 * second written) memoize a pure function, so sharing one writer cannot change an answer.
 * Pages format many times at once (a feed page: one per event; bench scenarios 11 and 12),
 * and consecutive events are often in the same second.
 */
function createIsoWriter(): (time: number) => string {
  const dayPrefixes = new Map<number, string>();
  let lastSecond = Number.NaN;
  let lastSecondText = "";
  return (time) => {
    if (!(Math.abs(time) <= MAX_DATE_MS)) throw new RangeError(`Invalid time value: ${time}`);
    const ms = Math.trunc(time); // as Date does
    const second = Math.floor(ms / 1000);
    if (second === lastSecond) return lastSecondText + MILLIS_Z[ms - second * 1000];
    const day = Math.floor(ms / DAY_MS);
    let prefix = dayPrefixes.get(day);
    if (prefix === undefined) {
      if (dayPrefixes.size >= 64) dayPrefixes.clear();
      prefix = new Date(day * DAY_MS).toISOString().slice(0, -13);
      dayPrefixes.set(day, prefix);
    }
    let rest = ms - day * DAY_MS;
    const hours = Math.floor(rest / 3_600_000);
    rest -= hours * 3_600_000;
    const minutes = Math.floor(rest / 60_000);
    rest -= minutes * 60_000;
    const seconds = Math.floor(rest / 1000);
    const millis = rest - seconds * 1000;
    lastSecond = second;
    lastSecondText = `${prefix}${twoDigits(hours)}:${twoDigits(minutes)}:${twoDigits(seconds)}.`;
    return lastSecondText + MILLIS_Z[millis];
  };
}

/**
 * RFC 3339 UTC, always with milliseconds: exactly what `Date.prototype.toISOString` writes
 * (a RangeError where it would throw). Whatever the date part (year 10000 is `+010000-…`), the
 * time of day is the last 13 characters of toISOString.
 */
export const isoOfMs: (time: number) => string = createIsoWriter();

/** isoOfMs, or null for an unset time. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : isoOfMs(ms);
}

/**
 * A Timestamp. One the encoders cannot write (a row stored before the domain's range check)
 * fails inside the method, where the rpc layer turns it into the fixed internal_error, instead
 * of inside connect-es's serializer, whose error would carry protobuf-es's own message.
 */
export function ts(ms: number): Timestamp {
  if (!isRepresentableTime(ms)) throw new RangeError(`timestamp out of range: ${ms}`);
  // protobuf-es's timestampFromMs, without create() and protoInt64's checks: ms is in range.
  const seconds = Math.floor(ms / 1000);
  return { $typeName: "google.protobuf.Timestamp", seconds: BigInt(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

export function optionalTs(ms: number | null): Timestamp | undefined {
  return ms === null ? undefined : ts(ms);
}

/**
 * A request's Timestamp → epoch ms. NaN for one protobuf calls invalid (nanos outside
 * 0..999,999,999), which the domain's range check refuses with a 400 like any other bad time.
 */
export function msOf(value: Timestamp): number {
  if (!Number.isInteger(value.nanos) || value.nanos < 0 || value.nanos > 999_999_999) return Number.NaN;
  return timestampMs(value);
}

/**
 * Every field of a message, the optional ones too (undefined when unset, which protobuf-es
 * reads as not set). Messages are written as object literals of this type — what a
 * protobuf-es v2 message is — rather than through the reflective `create()`, which cost most
 * of a list page's conversion (bench scenarios 11 and 12); a literal cannot leave a field out.
 */
export type Whole<M extends Message> = {
  [K in Exclude<keyof M, "$unknown">]-?: undefined extends M[K] ? M[K] | undefined : M[K];
};
