/**
 * Size limits. Read from the configuration once (config.ts) and handed out by the composition
 * root (app.ts) to everything that enforces one: the REST gateway, the Connect routers, the
 * domain and the listener. No layer keeps a copy of its own (docs/architecture.md).
 */
export interface Limits {
  /** A management request: a REST JSON body, a Connect/gRPC management message (docs/api.md). */
  readonly managementBodyBytes: number;
  /** An event payload (INTAKE_MAX_EVENT_BYTES). */
  readonly eventBytes: number;
}

/** Management bodies: 64 KiB (docs/api.md). */
export const MANAGEMENT_BODY_BYTES = 64 * 1024;
