/**
 * The ingest outcomes a service's stats count (src/domain/stats-types.ts), as the senders chart
 * names and colours them (test/console/outcomes.test.ts holds the two lists together, and every
 * outcome to a colour in explorer.css).
 */

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

/** What the chart calls an outcome; an unknown one by its own name. */
export function outcomeLabel(key: string): string {
  return OUTCOMES.find((o) => o.key === key)?.label ?? key;
}

/**
 * The outcomes present in `counts`, in stacking order; one this console does not know yet (a
 * newer server's) still gets a bar, after the known ones.
 */
export function ordered(counts: Record<string, number>): string[] {
  const known = OUTCOMES.map((o) => o.key).filter((k) => (counts[k] ?? 0) > 0);
  const other = Object.keys(counts).filter((k) => !OUTCOMES.some((o) => o.key === k) && (counts[k] ?? 0) > 0);
  return [...known, ...other.sort()];
}

/** The class that colours an outcome's bar and swatch (explorer.css). */
export function outcomeClass(key: string): string {
  return OUTCOMES.some((o) => o.key === key) ? `o-${key.replaceAll("_", "-")}` : "o-other";
}
