/**
 * The one auth suite every authenticated route runs (unkey's runCommonRouteTests): no header,
 * garbage, bad checksum, unknown token, revoked, expired, a tok_ id as credential, read_only
 * on a mutation, and another tenant's resource. Each route brings a `prepare` that builds a
 * valid call, so the credential is the only thing wrong in each negative case.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { generateToken } from "../../src/domain/credentials.ts";
import type { Limits } from "../../src/domain/limits.ts";
import { declareOperations } from "../../src/gateway/gateway.ts";
import type { OperationDomain } from "../../src/gateway/operation.ts";
import { silentLogger } from "../../src/logger.ts";
import { POLICY } from "../../src/rpc/policy.ts";
import { createWorld, type Reply, type World } from "../support/harness.ts";
import { openIncident } from "../support/incidents.ts";
import { sign } from "../support/signing.ts";

export interface PreparedCall {
  path: string;
  body?: unknown;
  /** A stream that never ends by itself: the control reads only its status and headers. */
  stream?: boolean;
}

export interface AuthRoute {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The path as the router declares it, e.g. `/v1/services/:id`. */
  pattern: string;
  /** POST/PATCH/DELETE: needs a read_write token. */
  mutating: boolean;
  /** Reads that need more than a member (the audit log: admin); member when absent. */
  readRole?: "admin";
  /** The status of the prepared call made with the bootstrap owner token. */
  ok: number;
  /** Builds a valid call in this world (creating whatever it points at). */
  prepare(world: World): Promise<PreparedCall>;
  /**
   * Routes naming a resource: the same call pointed at another tenant's resource, created with
   * `otherToken` (which belongs to that tenant).
   */
  foreign?(world: World, otherToken: string): Promise<PreparedCall>;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

async function svc(world: World, token?: string): Promise<string> {
  return (await world.createService(undefined, token)).id;
}

/** A stored event of a new service (of `token`'s tenant): its evt_ id. */
async function event(world: World, token?: string): Promise<string> {
  const service = await world.createService(undefined, token);
  const payload = '{"auth":"suite"}';
  const res = await world.request("POST", `/v1/ingest/${service.id}`, {
    token: null,
    body: payload,
    headers: { "x-service-signature": sign(service.secret, payload, world.clock.now()) },
  });
  if (res.status !== 202) throw new Error(`ingest failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/**
 * How to make a valid call of each authenticated operation. The route list itself is the
 * gateway's declaration (src/gateway/operation.ts): every operation whose policy takes a bearer
 * token runs the suite, and one without an entry here fails at load.
 */
const CALLS: Record<string, Omit<AuthRoute, "method" | "pattern" | "mutating" | "readRole">> = {
  "GET /v1/api_tokens": {
    ok: 200,
    prepare: async () => ({ path: "/v1/api_tokens" }),
  },
  "POST /v1/api_tokens": {
    ok: 201,
    prepare: async () => ({ path: "/v1/api_tokens", body: { name: "ci" } }),
  },
  "GET /v1/api_tokens/:id": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/api_tokens/${(await world.mint({ name: "target" })).id}` }),
    foreign: async (world, other) => ({ path: `/v1/api_tokens/${(await world.mint({ name: "theirs" }, other)).id}` }),
  },
  "DELETE /v1/api_tokens/:id": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/api_tokens/${(await world.mint({ name: "target" })).id}` }),
    foreign: async (world, other) => ({ path: `/v1/api_tokens/${(await world.mint({ name: "theirs" }, other)).id}` }),
  },
  "GET /v1/services": {
    ok: 200,
    prepare: async () => ({ path: "/v1/services" }),
  },
  "POST /v1/services": {
    ok: 201,
    prepare: async () => ({ path: "/v1/services", body: { service_name: "billing" } }),
  },
  "GET /v1/services/:id": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/services/${await svc(world)}` }),
    foreign: async (world, other) => ({ path: `/v1/services/${await svc(world, other)}` }),
  },
  "PATCH /v1/services/:id": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/services/${await svc(world)}`, body: { is_monitored: false } }),
    foreign: async (world, other) => ({
      path: `/v1/services/${await svc(world, other)}`,
      body: { is_monitored: false },
    }),
  },
  "DELETE /v1/services/:id": {
    ok: 204,
    prepare: async (world) => ({ path: `/v1/services/${await svc(world)}` }),
    foreign: async (world, other) => ({ path: `/v1/services/${await svc(world, other)}` }),
  },
  "POST /v1/services/:id/secret_rotations": {
    ok: 201,
    prepare: async (world) => ({ path: `/v1/services/${await svc(world)}/secret_rotations` }),
    foreign: async (world, other) => ({ path: `/v1/services/${await svc(world, other)}/secret_rotations` }),
  },
  "GET /v1/tenant": {
    ok: 200,
    prepare: async () => ({ path: "/v1/tenant" }),
  },
  "PATCH /v1/tenant": {
    ok: 200,
    prepare: async () => ({ path: "/v1/tenant", body: { name: "Renamed" } }),
  },
  "GET /v1/services/:id/events": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/services/${await svc(world)}/events` }),
    foreign: async (world, other) => ({ path: `/v1/services/${await svc(world, other)}/events` }),
  },
  "GET /v1/services/:id/stats": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/services/${await svc(world)}/stats` }),
    foreign: async (world, other) => ({ path: `/v1/services/${await svc(world, other)}/stats` }),
  },
  "GET /v1/events": {
    ok: 200,
    prepare: async () => ({ path: "/v1/events" }),
  },
  "GET /v1/feed": {
    ok: 200,
    prepare: async () => ({ path: "/v1/feed" }),
  },
  "GET /v1/feed/stream": {
    ok: 200,
    prepare: async () => ({ path: "/v1/feed/stream", stream: true }),
  },
  "GET /v1/events/:id": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/events/${await event(world)}` }),
    foreign: async (world, other) => ({ path: `/v1/events/${await event(world, other)}` }),
  },
  "GET /v1/audit_events": {
    ok: 200,
    prepare: async () => ({ path: "/v1/audit_events" }),
  },
  "GET /v1/incidents": {
    ok: 200,
    prepare: async () => ({ path: "/v1/incidents" }),
  },
  "GET /v1/incidents/stream": {
    ok: 200,
    prepare: async () => ({ path: "/v1/incidents/stream", stream: true }),
  },
  "GET /v1/incidents/:id": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/incidents/${await openIncident(world)}` }),
    foreign: async (world, other) => ({ path: `/v1/incidents/${await openIncident(world, other)}` }),
  },
  "GET /v1/incidents/:id/events": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/incidents/${await openIncident(world)}/events` }),
    foreign: async (world, other) => ({ path: `/v1/incidents/${await openIncident(world, other)}/events` }),
  },
  "POST /v1/incidents/:id/acknowledge": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/incidents/${await openIncident(world)}/acknowledge` }),
    foreign: async (world, other) => ({ path: `/v1/incidents/${await openIncident(world, other)}/acknowledge` }),
  },
  "POST /v1/incidents/:id/resolve": {
    ok: 200,
    prepare: async (world) => ({ path: `/v1/incidents/${await openIncident(world)}/resolve` }),
    foreign: async (world, other) => ({ path: `/v1/incidents/${await openIncident(world, other)}/resolve` }),
  },
};

/** The /v1 operations as the gateway declares them (their handlers are never called here). */
const DECLARED = declareOperations({
  domain: {} as OperationDomain,
  limits: { managementBodyBytes: 1, eventBytes: 1 } as Limits,
  logger: silentLogger,
  version: "auth-suite",
});

/** Every authenticated route of the /v1 surface, from the declaration. */
export const AUTHENTICATED_ROUTES: AuthRoute[] = DECLARED.flatMap((op) => {
  const policy = POLICY[op.rpc];
  if (!policy.bearer) return [];
  const key = `${op.method} ${op.path}`;
  const call = CALLS[key];
  if (!call) throw new Error(`the auth suite has no valid call for ${key}`);
  return [
    {
      method: op.method,
      pattern: op.path,
      mutating: policy.mutating,
      ...(policy.adminOnly && { readRole: "admin" as const }),
      ...call,
    },
  ];
});

/** Routes that take no bearer token at all. */
export const UNAUTHENTICATED_ROUTES = DECLARED.filter((op) => !POLICY[op.rpc].bearer).map(
  (op) => `${op.method} ${op.path}`,
);

/** The routes the running gateway actually declares under /v1. */
export function declaredRoutes(world: World): string[] {
  return world.app.gateway.elysia.routes
    .filter((r) => r.path.startsWith("/v1/") && r.method !== "HEAD" && r.method !== "OPTIONS")
    .map((r) => `${r.method} ${r.path}`);
}

function expect401(reply: Reply, code: "missing_credentials" | "invalid_credentials") {
  expect(reply.status).toBe(401);
  expect(reply.body?.error?.code).toBe(code);
  expect(reply.body.error.request_id).toBe(reply.headers.get("x-request-id"));
  expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer( |$)/);
}

/**
 * Runs the auth suite over one route. A route the gateway does not declare fails every case
 * (the router's 404 is not a 401), and the "declared" test in auth.test.ts names it.
 */
export function runAuthSuite(route: AuthRoute): void {
  const name = `${route.method} ${route.pattern}`;

  describe(`auth: ${name}`, () => {
    let world: World;
    afterEach(async () => {
      await world?.close();
    });

    async function call(token: string | null, prepared: PreparedCall, headers?: Record<string, string>) {
      return world.request(route.method, prepared.path, {
        token,
        ...(prepared.stream && { headersOnly: true }),
        ...(prepared.body !== undefined && { body: prepared.body }),
        ...(headers && { headers }),
      });
    }

    async function start(): Promise<PreparedCall> {
      world = await createWorld();
      return route.prepare(world);
    }

    test(`${route.ok} with a valid owner read_write token (control)`, async () => {
      const prepared = await start();
      const reply = await call(world.ownerToken, prepared);
      expect(reply.status).toBe(route.ok);
    });

    test("401 missing_credentials with WWW-Authenticate: Bearer when no Authorization header is sent", async () => {
      const prepared = await start();
      expect401(await call(null, prepared), "missing_credentials");
    });

    test("401 invalid_credentials for a garbage bearer token", async () => {
      const prepared = await start();
      for (const garbage of ["garbage", "service_live_", "service_live_abc", `${world.ownerToken}x`, "Ünïcødé"]) {
        expect401(
          await call(null, prepared, { authorization: `Bearer ${encodeURIComponent(garbage)}` }),
          "invalid_credentials",
        );
      }
    });

    test("401 for a non-Bearer Authorization header (Basic, empty Bearer)", async () => {
      const prepared = await start();
      for (const header of [`Basic ${btoa("user:pass")}`, "Bearer", "Bearer ", world.ownerToken]) {
        const reply = await call(null, prepared, { authorization: header });
        expect(reply.status).toBe(401);
        expect(["missing_credentials", "invalid_credentials"]).toContain(reply.body.error.code);
        expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer/);
      }
    });

    test("401 invalid_credentials for a token with a bad checksum (one char changed)", async () => {
      const prepared = await start();
      const token = world.ownerToken;
      const typo = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
      expect401(await call(typo, prepared), "invalid_credentials");
    });

    test("401 invalid_credentials for an unknown well-formed token", async () => {
      const prepared = await start();
      expect401(await call(generateToken(), prepared), "invalid_credentials");
    });

    test("401 invalid_credentials for a revoked token, on the very next request", async () => {
      const prepared = await start();
      const { id, token } = await world.mint({ name: "doomed", scope: "read_write", role: "owner" });
      // Used once, so that it sits in the token cache when it is revoked.
      expect((await world.request("GET", "/v1/tenant", { token })).status).toBe(200);
      expect((await world.request("DELETE", `/v1/api_tokens/${id}`)).status).toBe(200);
      expect401(await call(token, prepared), "invalid_credentials");
    });

    test("401 invalid_credentials for an expired token (manual clock), even though it was cached", async () => {
      const prepared = await start();
      const expiresAt = world.clock.now() + 3_600_000;
      const { token } = await world.mint({
        name: "short",
        scope: "read_write",
        role: "owner",
        expires_at: iso(expiresAt),
      });
      expect((await world.request("GET", "/v1/tenant", { token })).status).toBe(200);
      world.clock.set(expiresAt);
      expect401(await call(token, prepared), "invalid_credentials");
    });

    test("401 invalid_credentials for a tok_ id sent as the credential", async () => {
      const prepared = await start();
      expect401(await call(world.ownerTokenId, prepared), "invalid_credentials");
    });

    if (route.mutating) {
      test("403 token_scope_insufficient for a read_only token, even an owner's", async () => {
        const prepared = await start();
        const { token } = await world.mint({ name: "reader", scope: "read_only", role: "owner" });
        const reply = await call(token, prepared);
        expect(reply.status).toBe(403);
        expect(reply.body.error.code).toBe("token_scope_insufficient");
      });
    } else {
      const role = route.readRole ?? "member";
      test(`${route.ok} for a read_only ${role} token (reads need no read_write)`, async () => {
        const prepared = await start();
        const { token } = await world.mint({ name: "reader", scope: "read_only", role });
        expect((await call(token, prepared)).status).toBe(route.ok);
      });
    }

    const foreign = route.foreign;
    if (foreign) {
      test("404 not_found for another tenant's resource", async () => {
        await start();
        const other = await world.otherTenant();
        const prepared = await foreign(world, other.token);
        const reply = await call(world.ownerToken, prepared);
        expect(reply.status).toBe(404);
        expect(reply.body.error.code).toBe("not_found");
        // The owner of that resource does reach it: the 404 is the tenant boundary.
        expect((await call(other.token, prepared)).status).toBe(route.ok);
      });
    }
  });
}
