/**
 * A fresh world per test: its own store and cache, manual clock, captured log, and a
 * bootstrapped tenant with an owner read_write token. The store and cache are in-memory
 * SQLite and the memory cache, or, with INTAKE_TEST_STACK=postgres-redis, a fresh
 * PostgreSQL database and Redis under a random key prefix (test/support/stack.ts).
 */
import { type App, createApp } from "../../src/app.ts";
import { type Env, loadKeyMaterial, parseConfig } from "../../src/config.ts";
import type { Clock, PermissionMode } from "../../src/domain/types.ts";
import { createLogger } from "../../src/logger.ts";
import { acquireStack } from "./stack.ts";

export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

export function manualClock(start = Date.parse("2026-11-22T10:00:00.000Z")): ManualClock {
  let now = start;
  return {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or null when there is none. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read reply fields freely
  body: any;
  text: string;
}

export interface RequestOptions {
  /**
   * Read only the status and headers of a 2xx, then cancel the body: for streams that never end
   * on their own (`GET /v1/feed/stream`). Error answers are read whole.
   */
  headersOnly?: boolean;
  token?: string | null;
  /** An object is sent as JSON; a string or bytes as they are. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface World {
  app: App;
  clock: ManualClock;
  logs: string[];
  tenantId: string;
  /** The bootstrap owner read_write token. */
  ownerToken: string;
  ownerTokenId: string;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  /** Mints a token through the API with the owner token (or `as`). */
  mint(
    fields: { name?: string; scope?: string; role?: string; expires_at?: string | null },
    as?: string,
  ): Promise<{ id: string; token: string }>;
  /** Creates a service through the API; returns its id and signing secret. */
  createService(name?: string, as?: string): Promise<{ id: string; secret: string }>;
  /** Another tenant in the same deployment. */
  otherTenant(mode?: PermissionMode): Promise<{ tenantId: string; token: string }>;
  close(): Promise<void>;
}

export interface WorldOptions {
  env?: Env;
  permissionMode?: PermissionMode;
}

export async function createWorld(options: WorldOptions = {}): Promise<World> {
  const clock = manualClock();
  const logs: string[] = [];
  const stack = await acquireStack();
  let app: App | undefined;
  let boot: Awaited<ReturnType<App["domain"]["onboarding"]["bootstrapTenant"]>>;
  try {
    const config = parseConfig({ ...stack.env, INTAKE_GRPC_PORT: "0", ...options.env });
    app = await createApp({
      config,
      keys: loadKeyMaterial(config),
      logger: createLogger((l) => logs.push(l)),
      clock,
    });
    boot = await app.domain.onboarding.bootstrapTenant({
      name: "Acme",
      permissionMode: options.permissionMode ?? "role_based",
    });
  } catch (error) {
    // A world that never came up must not leave its database behind.
    await app?.close().catch(() => {});
    await stack.release();
    throw error;
  }
  const ready: App = app;

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
    const headers = new Headers(opts.headers);
    const token = opts.token === undefined ? boot.token : opts.token;
    if (token !== null) headers.set("authorization", `Bearer ${token}`);
    let body: RequestInit["body"];
    if (opts.body !== undefined) {
      if (typeof opts.body === "string" || opts.body instanceof Uint8Array) body = opts.body as RequestInit["body"];
      else {
        body = JSON.stringify(opts.body);
        if (!headers.has("content-type")) headers.set("content-type", "application/json");
      }
    }
    const res = await ready.fetch(new Request(`http://intake.test${path}`, { method, headers, body }));
    if (opts.headersOnly && res.ok) {
      await res.body?.cancel();
      return { status: res.status, headers: res.headers, body: null, text: "" };
    }
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  async function mint(fields: Parameters<World["mint"]>[0], as?: string) {
    const res = await request("POST", "/v1/api_tokens", { token: as ?? boot.token, body: { name: "t", ...fields } });
    if (res.status !== 201) throw new Error(`mint failed: ${res.status} ${res.text}`);
    return { id: res.body.id as string, token: res.body.token as string };
  }

  let services = 0;
  async function createService(name?: string, as?: string) {
    const res = await request("POST", "/v1/services", {
      token: as ?? boot.token,
      body: { service_name: name ?? `service-${++services}` },
    });
    if (res.status !== 201) throw new Error(`createService failed: ${res.status} ${res.text}`);
    return { id: res.body.id as string, secret: res.body.signing_secret as string };
  }

  async function otherTenant(mode: PermissionMode = "role_based") {
    const other = await ready.domain.onboarding.bootstrapTenant({ name: "Other", permissionMode: mode });
    return { tenantId: other.tenant.id, token: other.token };
  }

  return {
    app: ready,
    clock,
    logs,
    tenantId: boot.tenant.id,
    ownerToken: boot.token,
    ownerTokenId: `tok_${boot.record.id}`,
    request,
    mint,
    createService,
    otherTenant,
    close: async () => {
      try {
        await ready.close();
      } finally {
        await stack.release();
      }
    },
  };
}
