/** Protobuf messages (what the rpc layer answers) → the REST JSON shapes of the contract. */

import { toJson } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ApiToken } from "../../gen/intake/v1/api_tokens_pb.ts";
import type { AuditEvent } from "../../gen/intake/v1/audit_pb.ts";
import type { Service } from "../../gen/intake/v1/services_pb.ts";
import type { Tenant } from "../../gen/intake/v1/tenant_pb.ts";

const DAY_MS = 86_400_000;
/** `YYYY-MM-DDT` of recent days (epoch day → prefix); emptied when it reaches 64. */
const dayPrefixes = new Map<number, string>();

function twoDigits(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** Date's own range: ±100,000,000 days around the epoch. */
const MAX_DATE_MS = 8.64e15;

/** "000Z" … "999Z": the end of a time with milliseconds. */
const MILLIS_Z = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, "0")}Z`);

/** The last whole second written, and its text up to the milliseconds ("…T17:00:00."). */
let lastSecond = Number.NaN;
let lastSecondText = "";

/**
 * RFC 3339 UTC, always with milliseconds: exactly what `Date.prototype.toISOString` writes
 * (a RangeError where it would throw), but the date part comes from a small cache of days and
 * the time of day is formatted by hand, 3× faster than a Date per value; and a time in the same
 * second as the one before reuses its text (a feed page's events often are: ~4× faster again).
 * Every REST time goes through here: a page of 20 services formats 40, a feed page 1,000
 * (bench/README.md, "11, 12. List pages"). Whatever the date part (year 10000 is `+010000-…`),
 * the time of day is the last 13 characters of toISOString.
 */
export function isoOfMs(time: number): string {
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
}

/** A message's Timestamp as isoOfMs writes it; null when unset. */
export function iso(value: Timestamp | undefined): string | null {
  if (!value) return null;
  return isoOfMs(Number(value.seconds) * 1000 + Math.floor(value.nanos / 1e6));
}

export function tokenJson(m: ApiToken) {
  return {
    id: m.id,
    name: m.name,
    scope: m.scope,
    role: m.role,
    prefix: m.prefix,
    created_at: iso(m.createdAt),
    created_by: m.createdBy ?? null,
    expires_at: iso(m.expiresAt),
    last_used_at: iso(m.lastUsedAt),
    revoked_at: iso(m.revokedAt),
  };
}

export function serviceJson(m: Service) {
  return {
    id: m.id,
    service_name: m.serviceName,
    is_monitored: m.isMonitored,
    signing_secret_prefix: m.signingSecretPrefix,
    created_at: iso(m.createdAt),
    updated_at: iso(m.updatedAt),
    secret_rotated_at: iso(m.secretRotatedAt),
    previous_secret_expires_at: iso(m.previousSecretExpiresAt),
    rate_limit: m.rateLimit ? { limit: m.rateLimit.limit, window_seconds: m.rateLimit.windowSeconds } : null,
  };
}

/** Allow-list serialization: exactly these four keys, ever. */
export function tenantJson(m: Tenant) {
  return { id: m.id, name: m.name, permission_mode: m.permissionMode, created_at: iso(m.createdAt) };
}

/** `actor.id` only for a token; `changes` only when there are some (updates). */
export function auditJson(m: AuditEvent) {
  const changes = Object.entries(m.changes);
  return {
    id: m.id,
    occurred_at: iso(m.occurredAt),
    action: m.action,
    actor: m.actor?.id === undefined ? { type: m.actor?.type ?? "" } : { type: m.actor.type, id: m.actor.id },
    target: { type: m.target?.type ?? "", id: m.target?.id ?? "" },
    request_id: m.requestId ?? null,
    ...(changes.length > 0 && {
      changes: Object.fromEntries(
        changes.map(([field, change]) => [
          field,
          {
            from: change.from ? toJson(ValueSchema, change.from) : null,
            to: change.to ? toJson(ValueSchema, change.to) : null,
          },
        ]),
      ),
    }),
  };
}
