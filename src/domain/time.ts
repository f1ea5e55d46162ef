/**
 * The instants Intake accepts and returns: those both RFC 3339 (four-digit years) and
 * google.protobuf.Timestamp can write, 0001-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z
 * at millisecond precision (docs/api.md, "Timestamps"). A time outside it could be stored but
 * never shown: JSON would print `+010000-…` and the protobuf JSON encoder refuses it.
 */
export const MIN_TIME_MS = -62_135_596_800_000;
export const MAX_TIME_MS = 253_402_300_799_999;
export const MAX_TIME_TEXT = "9999-12-31T23:59:59.999Z";

export function isRepresentableTime(ms: number): boolean {
  return Number.isSafeInteger(ms) && ms >= MIN_TIME_MS && ms <= MAX_TIME_MS;
}
