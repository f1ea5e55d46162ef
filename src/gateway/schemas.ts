/**
 * Route schemas of the /v1 surface. Elysia validates requests with them and the OpenAPI
 * document is generated from them, so they describe every field, bound and response.
 */
import { t } from "elysia";
import { MAX_LIMIT, MAX_WINDOW_SECONDS } from "../domain/rate-limits.ts";

/**
 * Documentation-only markers, read by api-docs.ts when it builds the document and invisible to
 * validation (TypeBox ignores unknown keys):
 * - `component(name)`: the schema becomes `#/components/schemas/<name>` and is referenced.
 * - `limits({...})`: JSON Schema keywords (`minLength`, `maxLength`, `pattern`, `format`) put into
 *   the document for a rule the domain enforces (names count code points after trimming; the RPC
 *   surface must apply the same rule, so it is not Elysia's to check).
 */
export const component = (name: string) => ({ "x-component": name });
export const limits = (keywords: {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: "date-time";
}) => ({
  "x-limits": keywords,
});

import { AUDIT_ACTIONS } from "../domain/audit.ts";

const timestamp = t.String({ format: "date-time", description: "RFC 3339 UTC with milliseconds" });
const nullableTimestamp = t.Union([timestamp, t.Null()]);
const name = t.String({
  description: "1..80 Unicode code points after trimming; no control characters",
  ...limits({ minLength: 1, maxLength: 80, pattern: "^[^\\u0000-\\u001f]*$" }),
});

export const TokenId = t.String({
  description: "tok_ + 32 hex",
  examples: ["tok_0193a1b2c3d4e5f60718293a4b5c6d7e"],
  ...limits({ pattern: "^tok_[0-9a-f]{32}$" }),
});
export const ServiceId = t.String({
  description: "svc_ + 32 hex",
  examples: ["svc_0193a1b2c3d4e5f60718293a4b5c6d7e"],
  ...limits({ pattern: "^svc_[0-9a-f]{32}$" }),
});

export const ApiTokenRecord = t.Object(
  {
    id: TokenId,
    name: t.String(),
    scope: t.Union([t.Literal("read_only"), t.Literal("read_write")]),
    role: t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")]),
    prefix: t.String({ description: "service_live_ + the first 8 body characters" }),
    created_at: timestamp,
    created_by: t.Union([TokenId, t.Null()], { description: "the parent token; null for a tenant's first token" }),
    expires_at: nullableTimestamp,
    last_used_at: nullableTimestamp,
    revoked_at: nullableTimestamp,
  },
  component("ApiToken"),
);

export const CreatedApiToken = t.Composite(
  [
    ApiTokenRecord,
    t.Object({ token: t.String({ description: "service_live_ + 43 base62; shown only in this response" }) }),
  ],
  component("CreatedApiToken"),
);

export const CreateApiTokenBody = t.Object(
  {
    name,
    scope: t.Optional(t.Union([t.Literal("read_only"), t.Literal("read_write")], { default: "read_only" })),
    role: t.Optional(t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")], { default: "member" })),
    expires_at: t.Optional(
      t.Union([
        t.String({
          description: "RFC 3339, any offset; must be in the future and no later than 9999-12-31T23:59:59.999Z",
          examples: ["2027-01-31T23:59:59Z"],
          // The handler judges it (api-tokens.ts), naming the field and the expected form.
          ...limits({ format: "date-time" }),
        }),
        t.Null(),
      ]),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ name: "dashboard", scope: "read_only", role: "member" }],
    ...component("CreateApiTokenRequest"),
  },
);

export const RateLimitSchema = t.Object(
  {
    limit: t.Integer({ minimum: 1, maximum: MAX_LIMIT, description: "requests admitted per window" }),
    window_seconds: t.Integer({ minimum: 1, maximum: MAX_WINDOW_SECONDS, description: "the window, in seconds" }),
  },
  {
    additionalProperties: false,
    description: "At most `limit` signed ingest requests per `window_seconds` (docs/rate-limits.md)",
    examples: [{ limit: 100, window_seconds: 60 }],
    ...component("RateLimit"),
  },
);

const signatureScheme = (options: { description?: string; default?: string } = {}) =>
  t.Union([t.Literal("stripe"), t.Literal("standard_webhooks")], {
    description:
      "how the service's senders sign (docs/ingest.md): `stripe` (X-Service-Signature) or `standard_webhooks` (webhook-id, webhook-timestamp, webhook-signature)",
    error: "must be one of: stripe, standard_webhooks",
    ...options,
  });

export const ServiceRecordSchema = t.Object(
  {
    id: ServiceId,
    service_name: t.String(),
    is_monitored: t.Boolean(),
    signing_secret_prefix: t.String({ description: "the first 10 characters of the current secret" }),
    created_at: timestamp,
    updated_at: timestamp,
    secret_rotated_at: nullableTimestamp,
    previous_secret_expires_at: nullableTimestamp,
    rate_limit: t.Union([RateLimitSchema, t.Null()], {
      description: "the service's own ingest rate limit; null: the deployment's default (INTAKE_RATE_LIMIT_INGEST)",
    }),
    incident_auto_resolve_seconds: t.Union([t.Integer(), t.Null()], {
      description: "§17: open incidents with no alert event for this long are resolved (auto); null: never",
    }),
    signature_scheme: signatureScheme(),
  },
  component("Service"),
);

export const CreatedService = t.Composite(
  [
    ServiceRecordSchema,
    t.Object({
      signing_secret: t.String({
        description:
          "shown only in this response: whsec_ + 43 base62 (stripe), or whsec_ + the base64 of 32 random bytes (standard_webhooks)",
      }),
    }),
  ],
  component("CreatedService"),
);

/** §17; the domain checks the range (domain/services.ts), so REST and RPC say the same. */
const AutoResolveSeconds = t.Union([t.Number(), t.Null()], {
  description:
    "§17: seconds without an alert event before an open incident is resolved (auto), 60..2592000; null: never",
  error: "must be null or a whole number from 60 to 2592000",
});

export const CreateServiceBody = t.Object(
  {
    service_name: name,
    is_monitored: t.Optional(t.Boolean({ default: true })),
    incident_auto_resolve_seconds: t.Optional(AutoResolveSeconds),
    signature_scheme: t.Optional(signatureScheme({ default: "stripe" })),
  },
  { additionalProperties: false, examples: [{ service_name: "billing" }], ...component("CreateServiceRequest") },
);

export const UpdateServiceBody = t.Object(
  {
    is_monitored: t.Optional(t.Boolean()),
    rate_limit: t.Optional(
      t.Union([RateLimitSchema, t.Null()], {
        description: "sets the service's own ingest rate limit; null returns it to the deployment's default",
        // TypeBox reports a failed union only as "should be one of": say what is expected.
        error: `must be null or {"limit": 1..${MAX_LIMIT}, "window_seconds": 1..${MAX_WINDOW_SECONDS}}, whole numbers, no other field`,
      }),
    ),
    signature_scheme: t.Optional(
      signatureScheme({
        description: "switches how senders sign (`stripe` or `standard_webhooks`); the secret is kept",
      }),
    ),
    service_name: t.Optional(t.Unknown({ description: "immutable: naming it is 400 service_name_immutable" })),
    incident_auto_resolve_seconds: t.Optional(AutoResolveSeconds),
  },
  { additionalProperties: false, examples: [{ is_monitored: false }], ...component("UpdateServiceRequest") },
);

export const SecretRotation = t.Object(
  {
    service_id: ServiceId,
    signing_secret: t.String({ description: "the new secret, shown only in this response" }),
    signing_secret_prefix: t.String(),
    rotated_at: timestamp,
    previous_secret_expires_at: timestamp,
  },
  component("SecretRotation"),
);

export const TenantRecordSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    permission_mode: t.Union([t.Literal("flat"), t.Literal("role_based")]),
    created_at: timestamp,
  },
  component("Tenant"),
);

export const UpdateTenantBody = t.Object(
  {
    name: t.Optional(name),
    permission_mode: t.Optional(t.Unknown({ description: "immutable: naming it is 400 permission_mode_immutable" })),
  },
  { additionalProperties: false, examples: [{ name: "Acme Inc." }], ...component("UpdateTenantRequest") },
);

export const SetupBody = t.Object(
  {
    setup_code: t.String({
      description: "setup_ + 43 base62, from `intake setup-link` (the link's #code= fragment)",
      ...limits({ pattern: "^setup_[0-9A-Za-z]{43}$" }),
    }),
    tenant_name: name,
    permission_mode: t.Optional(t.Union([t.Literal("flat"), t.Literal("role_based")], { default: "role_based" })),
  },
  {
    additionalProperties: false,
    examples: [{ setup_code: "setup_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG", tenant_name: "Acme" }],
    ...component("SetupRequest"),
  },
);

export const SetupResult = t.Object(
  {
    tenant_id: t.String({ description: "raw UUID" }),
    token_id: TokenId,
    token: t.String({ description: "service_live_ + 43 base62: the first owner read_write token, shown only here" }),
  },
  component("SetupResult"),
);

export const Health = t.Object({ status: t.Literal("ok"), version: t.String() }, component("Health"));

const pageFields = {
  // Elysia checks a coerced query number's bounds on the value alone (the error has no path):
  // the title is how errors.ts names the parameter in `details`.
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 20, title: "limit" })),
  cursor: t.Optional(
    t.String({
      minLength: 1,
      description: "next_cursor of the previous page of this same list (400 for another list's)",
    }),
  ),
};

// Unknown query parameters are ignored (cache busters and tracing params are common); unknown body fields are not.
export const PageQuery = t.Object(pageFields, { additionalProperties: true });

export const TokenPageQuery = t.Object(
  { ...pageFields, include_revoked: t.Optional(t.Boolean({ default: false })) },
  { additionalProperties: true },
);

const auditAction = t.Union(
  AUDIT_ACTIONS.map((action) => t.Literal(action)),
  { description: "what was changed" },
);

const auditValue = t.Unknown({ description: "the field's value in its REST form (any JSON value)" });

export const AuditEventRecord = t.Object(
  {
    id: t.String({ description: "aud_ + 32 hex", examples: ["aud_0193a1b2c3d4e5f60718293a4b5c6d7e"] }),
    occurred_at: timestamp,
    action: auditAction,
    actor: t.Union(
      [
        t.Object({ type: t.Literal("api_token"), id: TokenId }),
        t.Object({ type: t.Literal("setup_link") }),
        t.Object({ type: t.Literal("operator") }),
      ],
      { description: "who made the change: a token, a person redeeming a setup link, or an operator at the CLI" },
    ),
    target: t.Object({
      type: t.Union([t.Literal("tenant"), t.Literal("api_token"), t.Literal("service"), t.Literal("incident")]),
      id: t.String({ description: "the tenant id, a tok_ id, a svc_ id or an inc_ id" }),
    }),
    request_id: t.Union([t.String({ description: "req_ + 32 hex" }), t.Null()], {
      description: "the X-Request-Id of the API call; null for the CLI",
    }),
    changes: t.Optional(
      t.Record(t.String(), t.Object({ from: auditValue, to: auditValue }), {
        description: "only for updates: each changed field (by its REST name) with its value before and after",
      }),
    ),
  },
  component("AuditEvent"),
);

export const AuditPageQuery = t.Object(
  {
    ...pageFields,
    action: t.Optional(auditAction),
    target_id: t.Optional(
      t.String({
        minLength: 1,
        description: "a tok_, svc_ or inc_ id, or the tenant id (a raw UUID)",
        // The domain judges it (400 naming target_id); the document states the same rule.
        ...limits({
          pattern: "^(?:(?:tok|svc|inc)_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$",
        }),
      }),
    ),
  },
  { additionalProperties: true },
);

/** A page of `item`s, documented as the component `<name>`. */
export function listOf<T extends ReturnType<typeof t.Object>>(item: T, name: string) {
  return t.Object(
    {
      data: t.Array(item, { maxItems: 100 }),
      next_cursor: t.Union([t.String(), t.Null()], { description: "pass as `cursor` for the next page; null: none" }),
    },
    component(name),
  );
}

export const ErrorResponse = t.Object(
  {
    error: t.Object({
      code: t.String({ description: "snake_case, stable: branch on it" }),
      message: t.String(),
      request_id: t.String(),
      details: t.Optional(t.Array(t.Object({ field: t.String(), message: t.String() }))),
    }),
  },
  { description: "Every error, in one shape", ...component("Error") },
);

/** A path id: never empty (an empty segment routes elsewhere); an unknown or malformed one is 404. */
export const IdParams = t.Object({ id: t.String(limits({ minLength: 1 })) });
