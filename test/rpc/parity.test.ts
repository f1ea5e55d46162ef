/**
 * One set of cases, run on both surfaces: REST through app.fetch and RPC through a Connect
 * client on a real listener. Each case records a transcript of outcomes (the REST JSON shape,
 * or the REST error code); ids, credentials and cursors are replaced by placeholders in order
 * of appearance, timestamps normalized, and the two transcripts must be equal.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { ApiTokenSchema, ApiTokenService } from "../../gen/intake/v1/api_tokens_pb.ts";
import {
  RotateSigningSecretResponseSchema,
  ServiceRegistryService,
  ServiceSchema,
} from "../../gen/intake/v1/services_pb.ts";
import { TenantSchema, TenantService } from "../../gen/intake/v1/tenant_pb.ts";
import { ERROR_TABLE } from "../../src/rpc/errors.ts";
import { bearer, codeName, failure, type Served, serveWorld, transportFor } from "./support.ts";

type Json = { [key: string]: unknown };
type Outcome = { ok: true; body: Json | null } | { ok: false; code: string };
/** A token to call with; undefined = the world's owner token, null = no Authorization at all. */
type As = string | null | undefined;

interface Api {
  createToken(body: { name: string; scope?: string; role?: string }, as?: As): Promise<Outcome>;
  getToken(id: string, as?: As): Promise<Outcome>;
  listTokens(query: { limit?: number; cursor?: string; include_revoked?: boolean }, as?: As): Promise<Outcome>;
  revokeToken(id: string, as?: As): Promise<Outcome>;
  createService(body: { service_name: string; is_monitored?: boolean }, as?: As): Promise<Outcome>;
  getService(id: string, as?: As): Promise<Outcome>;
  listServices(query: { limit?: number; cursor?: string }, as?: As): Promise<Outcome>;
  updateService(id: string, body: { is_monitored?: boolean; service_name?: string }, as?: As): Promise<Outcome>;
  deleteService(id: string, as?: As): Promise<Outcome>;
  rotateSecret(id: string, as?: As): Promise<Outcome>;
  getTenant(as?: As): Promise<Outcome>;
  updateTenant(body: { name?: string; permission_mode?: string }, as?: As): Promise<Outcome>;
}

function restApi(served: Served): Api {
  const { world } = served;
  async function call(method: string, path: string, as: As, body?: Json): Promise<Outcome> {
    const res = await world.request(method, path, { token: as === undefined ? world.ownerToken : as, body });
    if (res.status >= 400) return { ok: false, code: res.body.error.code };
    return { ok: true, body: res.body };
  }
  const qs = (q: Record<string, unknown>) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
    return p.size > 0 ? `?${p}` : "";
  };
  return {
    createToken: (body, as) => call("POST", "/v1/api_tokens", as, body),
    getToken: (id, as) => call("GET", `/v1/api_tokens/${id}`, as),
    listTokens: (q, as) => call("GET", `/v1/api_tokens${qs(q)}`, as),
    revokeToken: (id, as) => call("DELETE", `/v1/api_tokens/${id}`, as),
    createService: (body, as) => call("POST", "/v1/services", as, body),
    getService: (id, as) => call("GET", `/v1/services/${id}`, as),
    listServices: (q, as) => call("GET", `/v1/services${qs(q)}`, as),
    updateService: (id, body, as) => call("PATCH", `/v1/services/${id}`, as, body),
    deleteService: (id, as) => call("DELETE", `/v1/services/${id}`, as),
    rotateSecret: (id, as) => call("POST", `/v1/services/${id}/secret_rotations`, as),
    getTenant: (as) => call("GET", "/v1/tenant", as),
    updateTenant: (body, as) => call("PATCH", "/v1/tenant", as, body),
  };
}

/**
 * A message in the REST JSON shape: proto field names, every implicit field present, and an
 * enum value by its REST name (`SIGNATURE_SCHEME_STANDARD_WEBHOOKS` is `standard_webhooks`).
 */
function rest<D extends DescMessage>(schema: D, message: MessageShape<D> | undefined): Json {
  if (!message) throw new Error("missing message");
  const json = toJson(schema, message, { useProtoFieldName: true, alwaysEmitImplicit: true }) as Json;
  const scheme = json.signature_scheme;
  if (typeof scheme === "string") json.signature_scheme = scheme.replace(/^SIGNATURE_SCHEME_/, "").toLowerCase();
  return json;
}

function rpcApi(served: Served): Api {
  const { world } = served;
  const transport = transportFor(served, "connect-json");
  const tokens = createClient(ApiTokenService, transport);
  const services = createClient(ServiceRegistryService, transport);
  const tenant = createClient(TenantService, transport);
  const opts = (as: As) => (as === null ? {} : bearer(as ?? world.ownerToken));

  async function call(run: () => Promise<Json | null>): Promise<Outcome> {
    try {
      return { ok: true, body: await run() };
    } catch (error) {
      const f = await failure(Promise.reject(error));
      // The Connect code is the one the single error table assigns to the REST code.
      expect(f.restCode).toBeDefined();
      expect(f.code).toBe(codeName(ERROR_TABLE[f.restCode as keyof typeof ERROR_TABLE].connect));
      return { ok: false, code: f.restCode as string };
    }
  }

  return {
    createToken: (body, as) =>
      call(async () => {
        const res = await tokens.createApiToken(body, opts(as));
        return { ...rest(ApiTokenSchema, res.apiToken), token: res.token };
      }),
    getToken: (id, as) => call(async () => rest(ApiTokenSchema, (await tokens.getApiToken({ id }, opts(as))).apiToken)),
    listTokens: (q, as) =>
      call(async () => {
        const res = await tokens.listApiTokens(
          { limit: q.limit, cursor: q.cursor, includeRevoked: q.include_revoked ?? false },
          opts(as),
        );
        return { data: res.data.map((t) => rest(ApiTokenSchema, t)), next_cursor: res.nextCursor ?? null };
      }),
    revokeToken: (id, as) =>
      call(async () => rest(ApiTokenSchema, (await tokens.revokeApiToken({ id }, opts(as))).apiToken)),
    createService: (body, as) =>
      call(async () => {
        const res = await services.createService(
          { serviceName: body.service_name, isMonitored: body.is_monitored },
          opts(as),
        );
        return { ...rest(ServiceSchema, res.service), signing_secret: res.signingSecret };
      }),
    getService: (id, as) =>
      call(async () => rest(ServiceSchema, (await services.getService({ id }, opts(as))).service)),
    listServices: (q, as) =>
      call(async () => {
        const res = await services.listServices({ limit: q.limit, cursor: q.cursor }, opts(as));
        return { data: res.data.map((s) => rest(ServiceSchema, s)), next_cursor: res.nextCursor ?? null };
      }),
    updateService: (id, body, as) =>
      call(async () => {
        const req = { id, isMonitored: body.is_monitored, serviceName: body.service_name };
        return rest(ServiceSchema, (await services.updateService(req, opts(as))).service);
      }),
    deleteService: (id, as) =>
      call(async () => {
        await services.deleteService({ id }, opts(as));
        return null;
      }),
    rotateSecret: (id, as) =>
      call(async () => rest(RotateSigningSecretResponseSchema, await services.rotateSigningSecret({ id }, opts(as)))),
    getTenant: (as) => call(async () => rest(TenantSchema, (await tenant.getTenant({}, opts(as))).tenant)),
    updateTenant: (body, as) =>
      call(async () =>
        rest(
          TenantSchema,
          (await tenant.updateTenant({ name: body.name, permissionMode: body.permission_mode }, opts(as))).tenant,
        ),
      ),
  };
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const OPAQUE_KEYS = new Set([
  "id",
  "created_by",
  "service_id",
  "token",
  "prefix",
  "signing_secret",
  "signing_secret_prefix",
  "next_cursor",
]);

/** Placeholders for values that differ between two worlds by construction; nulls dropped (proto omits unset). */
function normalizer() {
  const seen = new Map<string, string>();
  const placeholder = (v: string) => {
    let p = seen.get(v);
    if (!p) {
      p = `<${seen.size + 1}>`;
      seen.set(v, p);
    }
    return p;
  };
  const walk = (value: unknown, key?: string): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v));
    if (value && typeof value === "object") {
      const out: Json = {};
      for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = walk(v, k);
      return out;
    }
    if (typeof value === "string" && key && OPAQUE_KEYS.has(key)) return placeholder(value);
    if (typeof value === "string" && TIMESTAMP.test(value)) return new Date(value).toISOString();
    return value;
  };
  return walk;
}

interface CaseContext {
  api: Api;
  record(label: string, outcome: Outcome): Outcome;
  /** Another tenant's owner token, in the same deployment. */
  otherTenantToken(): Promise<string>;
  ownerTokenId: string;
}

type Case = (ctx: CaseContext) => Promise<void>;

function ok(outcome: Outcome): Json {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.code}`);
  return outcome.body ?? {};
}

const CASES: Record<string, Case> = {
  "api tokens: create → get → list → revoke (idempotent) → the revoked token is 401": async (c) => {
    const created = ok(
      c.record("create", await c.api.createToken({ name: " ci ", scope: "read_write", role: "admin" })),
    );
    const id = created.id as string;
    c.record("get", await c.api.getToken(id));
    c.record("list", await c.api.listTokens({}));
    c.record("revoke", await c.api.revokeToken(id));
    c.record("revoke again", await c.api.revokeToken(id));
    c.record("list active", await c.api.listTokens({}));
    c.record("list with revoked", await c.api.listTokens({ include_revoked: true }));
    c.record("call with revoked", await c.api.getTenant(created.token as string));
  },

  "api tokens: pagination, bad cursor and limit": async (c) => {
    for (const name of ["a", "b", "c"]) c.record(`create ${name}`, await c.api.createToken({ name }));
    const first = ok(c.record("page 1", await c.api.listTokens({ limit: 2 })));
    c.record("page 2", await c.api.listTokens({ limit: 2, cursor: first.next_cursor as string }));
    c.record("bad cursor", await c.api.listTokens({ cursor: "garbage!" }));
    c.record("limit 0", await c.api.listTokens({ limit: 0 }));
    c.record("limit 101", await c.api.listTokens({ limit: 101 }));
  },

  "services: create → duplicate → get → pause → rename refused → rotate → list → delete → gone": async (c) => {
    const created = ok(c.record("create", await c.api.createService({ service_name: "billing" })));
    const id = created.id as string;
    c.record("duplicate", await c.api.createService({ service_name: "billing" }));
    c.record("other case is another name", await c.api.createService({ service_name: "Billing" }));
    c.record("get", await c.api.getService(id));
    c.record("pause", await c.api.updateService(id, { is_monitored: false }));
    c.record("rename", await c.api.updateService(id, { service_name: "ledger" }));
    c.record("rotate", await c.api.rotateSecret(id));
    c.record("list", await c.api.listServices({}));
    c.record("delete", await c.api.deleteService(id));
    c.record("get deleted", await c.api.getService(id));
    c.record("empty name", await c.api.createService({ service_name: "   " }));
  },

  "tenant: get → rename (trimmed) → permission_mode refused → admin is owner_required": async (c) => {
    c.record("get", await c.api.getTenant());
    c.record("rename", await c.api.updateTenant({ name: "  Acme Two  " }));
    c.record("permission_mode", await c.api.updateTenant({ permission_mode: "flat" }));
    const admin = ok(await c.api.createToken({ name: "admin", scope: "read_write", role: "admin" }));
    c.record("admin renames", await c.api.updateTenant({ name: "Mine" }, admin.token as string));
    c.record("admin reads", await c.api.getTenant(admin.token as string));
  },

  "errors: 401, 403 scope/owner/escalation, 404 across tenants, 409 last owner": async (c) => {
    c.record("no token", await c.api.getTenant(null));
    c.record("tok_ id as credential", await c.api.getTenant(c.ownerTokenId));
    c.record("garbage credential", await c.api.listServices({}, "service_live_x"));
    const readOnly = ok(await c.api.createToken({ name: "ro", scope: "read_only", role: "owner" }));
    c.record("read_only mutation", await c.api.createService({ service_name: "x" }, readOnly.token as string));
    c.record("read_only read", await c.api.listServices({}, readOnly.token as string));
    const svc = ok(await c.api.createService({ service_name: "owned" }));
    const admin = ok(await c.api.createToken({ name: "adm", scope: "read_write", role: "admin" }));
    c.record("admin delete", await c.api.deleteService(svc.id as string, admin.token as string));
    c.record("admin mints owner", await c.api.createToken({ name: "up", role: "owner" }, admin.token as string));
    c.record("admin revokes owner", await c.api.revokeToken(c.ownerTokenId, admin.token as string));
    const other = await c.otherTenantToken();
    c.record("other tenant's service", await c.api.getService(svc.id as string, other));
    c.record("other tenant's token", await c.api.getToken(c.ownerTokenId, other));
    c.record("unknown id", await c.api.getService("svc_00000000000000000000000000000000"));
    c.record("last owner", await c.api.revokeToken(c.ownerTokenId));
  },
};

let served: Served[] = [];
afterEach(async () => {
  await Promise.all(served.map((s) => s.close()));
  served = [];
});

async function transcript(surface: "rest" | "rpc", run: Case): Promise<Array<[string, unknown]>> {
  const s = await serveWorld();
  served.push(s);
  const api = surface === "rest" ? restApi(s) : rpcApi(s);
  const walk = normalizer();
  const lines: Array<[string, unknown]> = [];
  await run({
    api,
    record(label, outcome) {
      lines.push([label, walk(outcome)]);
      return outcome;
    },
    otherTenantToken: async () => (await s.world.otherTenant()).token,
    ownerTokenId: s.world.ownerTokenId,
  });
  return lines;
}

describe("REST and RPC give the same results", () => {
  for (const [name, run] of Object.entries(CASES)) {
    test(name, async () => {
      const viaRest = await transcript("rest", run);
      const viaRpc = await transcript("rpc", run);
      expect(viaRpc).toEqual(viaRest);
    });
  }

  test("the transcripts are not vacuous: REST outcomes are what the contract says", async () => {
    const lines = new Map(
      await transcript(
        "rest",
        CASES["errors: 401, 403 scope/owner/escalation, 404 across tenants, 409 last owner"] as Case,
      ),
    );
    expect(lines.get("no token")).toEqual({ ok: false, code: "missing_credentials" });
    expect(lines.get("tok_ id as credential")).toEqual({ ok: false, code: "invalid_credentials" });
    expect(lines.get("read_only mutation")).toEqual({ ok: false, code: "token_scope_insufficient" });
    expect(lines.get("admin delete")).toEqual({ ok: false, code: "owner_required" });
    expect(lines.get("admin mints owner")).toEqual({ ok: false, code: "role_escalation" });
    expect(lines.get("other tenant's service")).toEqual({ ok: false, code: "not_found" });
    expect(lines.get("last owner")).toEqual({ ok: false, code: "last_owner_token" });
  });
});
