/**
 * A domain world for test/domain/: the domain exactly as app.ts composes it (createDomain), on
 * a real in-memory SQLite store and the memory cache, with a manual clock and a captured log;
 * no HTTP, no Connect. One tenant is bootstrapped; `owner` is its owner token's principal, as
 * verifyToken resolves it.
 */
import { createDomain, type Domain } from "../../src/app.ts";
import { createMemoryCache } from "../../src/cache/memory.ts";
import { createMemoryRateLimiter } from "../../src/cache/rate-limiter-memory.ts";
import { type Env, loadKeyMaterial, parseConfig } from "../../src/config.ts";
import { formatId } from "../../src/domain/ids.ts";
import type { Store } from "../../src/domain/ports/store.ts";
import type { Principal } from "../../src/domain/types.ts";
import { createLogger } from "../../src/logger.ts";
import { createSqliteStore } from "../../src/store/sqlite/store.ts";
import { type ManualClock, manualClock } from "./harness.ts";
import { sign } from "./signing.ts";

export interface DomainWorld {
  domain: Domain;
  store: Store;
  clock: ManualClock;
  logs: string[];
  /** The bootstrapped tenant's owner read_write token, and the principal it verifies to. */
  ownerToken: string;
  owner: Principal;
  /** The principal of a token (verifyToken's; throws if the token does not verify). */
  principalOf(token: string): Promise<Principal>;
  /** A service of the owner's tenant (or `as`'s): its `svc_` id and signing secret. */
  createService(name: string, as?: Principal): Promise<{ id: string; secret: string }>;
  /** Signs `body` with `secret` at the world's clock (or `atMs`) and ingests it. */
  ingest(
    service: { id: string; secret: string },
    body: string,
    options?: { idempotencyKey?: string; atMs?: number },
  ): ReturnType<Domain["ingest"]["ingest"]>;
  /** Another tenant of the same deployment, with its owner's principal. */
  otherTenant(): Promise<Principal>;
  close(): Promise<void>;
}

export async function createDomainWorld(env: Env = {}): Promise<DomainWorld> {
  const clock = manualClock();
  const logs: string[] = [];
  const config = parseConfig({ DATABASE_URL: "sqlite::memory:", ...env });
  const store = createSqliteStore({ path: ":memory:" });
  await store.migrate();
  const cache = createMemoryCache({ now: () => clock.now() });
  const domain = createDomain({
    store,
    cache,
    keys: loadKeyMaterial(config),
    config,
    logger: createLogger((line) => logs.push(line)),
    clock,
    rateLimiter: createMemoryRateLimiter({ now: () => clock.now() }),
  });

  async function principalOf(token: string): Promise<Principal> {
    const verdict = await domain.tokens.verifyToken(token);
    if (!verdict.ok) throw new Error(`token does not verify: ${verdict.reason}`);
    return verdict.principal;
  }
  const boot = await domain.onboarding.bootstrapTenant({ name: "Acme", permissionMode: "role_based" });
  const owner = await principalOf(boot.token);

  return {
    domain,
    store,
    clock,
    logs,
    ownerToken: boot.token,
    owner,
    principalOf,
    async createService(name, as = owner) {
      const { record, signingSecret } = await domain.services.createService(as, { serviceName: name }, null);
      return { id: formatId("svc", record.id), secret: signingSecret };
    },
    ingest(service, body, options = {}) {
      const payload = new TextEncoder().encode(body);
      return domain.ingest.ingest({
        serviceId: service.id,
        signature: sign(service.secret, payload, options.atMs ?? clock.now()),
        payload,
        idempotencyKey: options.idempotencyKey ?? null,
      });
    },
    async otherTenant() {
      const other = await domain.onboarding.bootstrapTenant({ name: "Other", permissionMode: "role_based" });
      return principalOf(other.token);
    },
    async close() {
      // app.ts's order: readers end, background work stops, queued events commit, then the store closes.
      domain.feed.drain();
      await domain.retention.stop();
      await domain.tokens.flushLastUsed();
      await domain.ingest.close();
      await cache.close();
      await store.close();
    },
  };
}
