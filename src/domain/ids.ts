/**
 * Prefixed, time-ordered ids: `tok_`/`svc_`/`evt_`/`aud_`/`inc_` + 32 hex of a UUIDv7 without dashes
 * (request ids, `req_`, are random: createRequestIdGenerator).
 * Ids made by one process are strictly increasing, even within one millisecond (the 12-bit
 * rand_a field counts), so `ORDER BY id DESC` is newest first and keyset cursors are stable.
 */
export type IdKind = "tok" | "svc" | "evt" | "req" | "aud" | "inc";

const HEX = /^[0-9a-f]{32}$/;

export function createIdGenerator(now: () => number = Date.now): () => string {
  let lastMs = -1;
  let counter = 0;
  const bytes = new Uint8Array(16);
  const randomTail = bytes.subarray(8);
  // A Buffer view of the same bytes: its hex encoding is native and yields a flat string,
  // several times cheaper than concatenating 16 table lookups (this runs for every event ingested).
  const hexView = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return () => {
    let ms = now();
    if (ms <= lastMs) {
      // Same (or earlier: clock step back) millisecond: stay on lastMs and count up.
      ms = lastMs;
      counter++;
      if (counter > 0xfff) {
        ms = ++lastMs;
        counter = 0;
      }
    } else {
      lastMs = ms;
      counter = 0;
    }
    // Web Crypto, not node:crypto's randomFillSync: the same CSPRNG, much cheaper per call in
    // Bun, and every ingested event pays it for its id (bench scenario 3).
    crypto.getRandomValues(randomTail);
    bytes[0] = (ms / 2 ** 40) & 0xff;
    bytes[1] = (ms / 2 ** 32) & 0xff;
    bytes[2] = (ms >>> 24) & 0xff;
    bytes[3] = (ms >>> 16) & 0xff;
    bytes[4] = (ms >>> 8) & 0xff;
    bytes[5] = ms & 0xff;
    bytes[6] = 0x70 | (counter >>> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
    return hexView.toString("hex");
  };
}

const REQUEST_ID_BATCH = 256;

/**
 * Request ids: `req_` + 32 hex of a random UUIDv4 without dashes (docs/api.md). Every response
 * carries a fresh one, so they are made 256 at a time: one CSPRNG call and one native hex
 * encoding per batch instead of a clock read, a CSPRNG call and an encoding per request (the
 * health probe's CPU per request: bench scenario 1). They are not time-ordered:
 * nothing sorts by them, and the access log and audit events carry their own time.
 */
export function createRequestIdGenerator(): () => string {
  const bytes = new Uint8Array(16 * REQUEST_ID_BATCH);
  const hexView = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ids: string[] = new Array(REQUEST_ID_BATCH);
  let next = REQUEST_ID_BATCH;
  return () => {
    if (next === REQUEST_ID_BATCH) {
      crypto.getRandomValues(bytes);
      for (let at = 0; at < bytes.length; at += 16) {
        bytes[at + 6] = 0x40 | ((bytes[at + 6] as number) & 0x0f); // version 4
        bytes[at + 8] = 0x80 | ((bytes[at + 8] as number) & 0x3f); // RFC 9562 variant
      }
      const hex = hexView.toString("hex");
      for (let i = 0; i < REQUEST_ID_BATCH; i++) ids[i] = `req_${hex.slice(i * 32, i * 32 + 32)}`;
      next = 0;
    }
    return ids[next++] as string;
  };
}

export function formatId(kind: IdKind, raw: string): string {
  return `${kind}_${raw}`;
}

/** The raw 32 hex of a well-formed prefixed id, or null: malformed ids are simply "not found". */
export function parseId(kind: IdKind, id: string): string | null {
  if (id.length !== kind.length + 33 || !id.startsWith(`${kind}_`)) return null;
  const raw = id.slice(kind.length + 1);
  return HEX.test(raw) ? raw : null;
}

/** Tenant ids are raw UUIDs with dashes (docs/api.md). */
export function newTenantId(): string {
  return crypto.randomUUID();
}

export const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The smallest raw id a generator can make at `ms` or later: ids are time-ordered, so
 * `id < idFloor(ms)` selects rows made before `ms` through the primary key's index
 * (retention sweeps use it instead of an index on received_at that every insert would pay for).
 */
export function idFloor(ms: number): string {
  return `${Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0")}${"0".repeat(20)}`;
}

/**
 * How far an event's id time (its receipt, by the receiving instance's clock) may be from the
 * order its batch commits in: commit latency plus clock skew between instances. §18's time
 * bounds (store/search-query.ts) widen by it, so an event within it of a bound is never
 * missed; only the walk's length grows with it (docs/search.md, "Time bounds").
 */
export const ID_TIME_SLACK_MS = 10 * 60_000;
