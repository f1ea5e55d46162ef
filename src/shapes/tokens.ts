/** An API token's public shapes: its REST JSON and its protobuf message, from one record. */
import type { ApiToken } from "../../gen/intake/v1/api_tokens_pb.ts";
import { formatId } from "../domain/ids.ts";
import type { TokenSummary } from "../domain/types.ts";
import { isoOfMs, isoOrNull, optionalTs, ts, type Whole } from "./time.ts";

/** A full record or a list's summary: never the digest or the tenant. */
export function tokenJson(record: TokenSummary) {
  return {
    id: formatId("tok", record.id),
    name: record.name,
    scope: record.scope,
    role: record.role,
    prefix: record.prefix,
    created_at: isoOfMs(record.createdAt),
    created_by: record.createdBy === null ? null : formatId("tok", record.createdBy),
    expires_at: isoOrNull(record.expiresAt),
    last_used_at: isoOrNull(record.lastUsedAt),
    revoked_at: isoOrNull(record.revokedAt),
  };
}

export function tokenMessage(record: TokenSummary): ApiToken {
  const message: Whole<ApiToken> = {
    $typeName: "intake.v1.ApiToken",
    id: formatId("tok", record.id),
    name: record.name,
    scope: record.scope,
    role: record.role,
    prefix: record.prefix,
    createdAt: ts(record.createdAt),
    createdBy: record.createdBy === null ? undefined : formatId("tok", record.createdBy),
    expiresAt: optionalTs(record.expiresAt),
    lastUsedAt: optionalTs(record.lastUsedAt),
    revokedAt: optionalTs(record.revokedAt),
  };
  return message;
}
