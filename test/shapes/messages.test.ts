/**
 * The list pages' messages are object literals, not `create()` (src/shapes/): what a
 * client decodes from them, over the binary and the JSON encodings, must be exactly what the
 * reflective construction gave, for every field set and for every optional field unset.
 */
import { describe, expect, test } from "bun:test";
import { create, type DescMessage, type MessageShape, toBinary, toJson } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ApiTokenSchema } from "../../gen/intake/v1/api_tokens_pb.ts";
import { AuditEventSchema } from "../../gen/intake/v1/audit_pb.ts";
import { ServiceSchema, SignatureScheme } from "../../gen/intake/v1/services_pb.ts";
import type { AuditRecord } from "../../src/domain/audit.ts";
import { MAX_TIME_MS, MIN_TIME_MS } from "../../src/domain/time.ts";
import type { ServiceSummary, TokenSummary } from "../../src/domain/types.ts";
import { auditMessage } from "../../src/shapes/audit.ts";
import { serviceMessage } from "../../src/shapes/services.ts";
import { ts } from "../../src/shapes/time.ts";
import { tokenMessage } from "../../src/shapes/tokens.ts";

const T = Date.parse("2026-11-23T17:40:24.123Z");
const ID = "0193a0b1c2d3e4f5a6b7c8d9e0f1a2b3";
const OTHER = "0193a0b1c2d3e4f5a6b7c8d9e0f1a2b4";

/** Both encodings of `literal` are those of `reference`. */
function sameOnTheWire<D extends DescMessage>(schema: D, literal: MessageShape<D>, reference: MessageShape<D>) {
  expect(toBinary(schema, literal)).toEqual(toBinary(schema, reference));
  expect(toJson(schema, literal) as unknown).toEqual(toJson(schema, reference));
}

describe("ts", () => {
  test("is protobuf-es's timestampFromMs over the whole range Intake shows, negative times included", () => {
    for (const ms of [MIN_TIME_MS, -86_400_001, -1, 0, 1, 999, 1_000, T, MAX_TIME_MS]) {
      expect(ts(ms)).toEqual(timestampFromMs(ms));
    }
  });

  test("refuses a time the encoders cannot write", () => {
    expect(() => ts(MAX_TIME_MS + 1)).toThrow(RangeError);
    expect(() => ts(MIN_TIME_MS - 1)).toThrow(RangeError);
  });
});

describe("list messages encode as create() would build them", () => {
  const service: ServiceSummary = {
    id: ID,
    serviceName: "billing",
    isMonitored: false,
    signingSecretPrefix: "whsec_abcd",
    previousSecretExpiresAt: T + 3_600_000,
    secretRotatedAt: T + 5,
    createdAt: T,
    updatedAt: T + 5,
    rateLimitLimit: 50,
    rateLimitWindowSeconds: 10,
    incidentAutoResolveSeconds: null,
    signatureScheme: "stripe",
  };

  test("a service with every field set, and with every optional one unset", () => {
    sameOnTheWire(
      ServiceSchema,
      serviceMessage(service),
      create(ServiceSchema, {
        id: `svc_${ID}`,
        serviceName: "billing",
        isMonitored: false,
        signingSecretPrefix: "whsec_abcd",
        createdAt: timestampFromMs(T),
        updatedAt: timestampFromMs(T + 5),
        secretRotatedAt: timestampFromMs(T + 5),
        previousSecretExpiresAt: timestampFromMs(T + 3_600_000),
        rateLimit: { limit: 50, windowSeconds: 10 },
        signatureScheme: SignatureScheme.STRIPE,
      }),
    );
    const plain = {
      ...service,
      isMonitored: true,
      previousSecretExpiresAt: null,
      secretRotatedAt: null,
      rateLimitLimit: null,
      rateLimitWindowSeconds: null,
    };
    sameOnTheWire(
      ServiceSchema,
      serviceMessage(plain),
      create(ServiceSchema, {
        id: `svc_${ID}`,
        serviceName: "billing",
        isMonitored: true,
        signingSecretPrefix: "whsec_abcd",
        createdAt: timestampFromMs(T),
        updatedAt: timestampFromMs(T + 5),
        signatureScheme: SignatureScheme.STRIPE,
      }),
    );
  });

  test("a token with every field set, and with every optional one unset", () => {
    const token: TokenSummary = {
      id: ID,
      name: "deploy",
      scope: "read_only",
      role: "admin",
      prefix: "service_live_abcd1234",
      createdAt: T,
      createdBy: OTHER,
      expiresAt: T + 1,
      lastUsedAt: T + 2,
      revokedAt: T + 3,
    };
    const common = { id: `tok_${ID}`, name: "deploy", scope: "read_only", role: "admin", prefix: token.prefix };
    sameOnTheWire(
      ApiTokenSchema,
      tokenMessage(token),
      create(ApiTokenSchema, {
        ...common,
        createdAt: timestampFromMs(T),
        createdBy: `tok_${OTHER}`,
        expiresAt: timestampFromMs(T + 1),
        lastUsedAt: timestampFromMs(T + 2),
        revokedAt: timestampFromMs(T + 3),
      }),
    );
    sameOnTheWire(
      ApiTokenSchema,
      tokenMessage({ ...token, createdBy: null, expiresAt: null, lastUsedAt: null, revokedAt: null }),
      create(ApiTokenSchema, { ...common, createdAt: timestampFromMs(T) }),
    );
  });

  test("an audit event with changes by a token, and one without by the operator", () => {
    const update: AuditRecord = {
      id: ID,
      tenantId: "6f1c1f9e-1d2b-4c3a-9b8e-7d6c5b4a3f2e",
      occurredAt: T,
      action: "service.update",
      actor: { type: "api_token", id: OTHER },
      target: { type: "service", id: ID },
      requestId: `req_${OTHER}`,
      changes: {
        is_monitored: { from: true, to: false },
        rate_limit: { from: null, to: { limit: 50, window_seconds: 10 } },
      },
    };
    const fromJsonValue = (value: unknown) => ({ kind: toValueKind(value) });
    const reference = create(AuditEventSchema, {
      id: `aud_${ID}`,
      occurredAt: timestampFromMs(T),
      action: "service.update",
      actor: { type: "api_token", id: `tok_${OTHER}` },
      target: { type: "service", id: `svc_${ID}` },
      requestId: `req_${OTHER}`,
      changes: {
        is_monitored: { from: fromJsonValue(true), to: fromJsonValue(false) },
        rate_limit: { from: fromJsonValue(null), to: fromJsonValue({ limit: 50, window_seconds: 10 }) },
      },
    });
    sameOnTheWire(AuditEventSchema, auditMessage(update), reference);
    sameOnTheWire(
      AuditEventSchema,
      auditMessage({ ...update, actor: { type: "operator" }, requestId: null, changes: null }),
      create(AuditEventSchema, {
        id: `aud_${ID}`,
        occurredAt: timestampFromMs(T),
        action: "service.update",
        actor: { type: "operator" },
        target: { type: "service", id: `svc_${ID}` },
      }),
    );
  });
});

/** A JSON value as google.protobuf.Value's oneof, written out by hand (not through fromJson). */
// biome-ignore lint/suspicious/noExplicitAny: the oneof's init shape is recursive
function toValueKind(value: unknown): any {
  if (value === null) return { case: "nullValue", value: 0 };
  if (typeof value === "boolean") return { case: "boolValue", value };
  if (typeof value === "number") return { case: "numberValue", value };
  if (typeof value === "string") return { case: "stringValue", value };
  if (Array.isArray(value))
    return { case: "listValue", value: { values: value.map((v) => ({ kind: toValueKind(v) })) } };
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as object)) fields[k] = { kind: toValueKind(v) };
  return { case: "structValue", value: { fields } };
}
