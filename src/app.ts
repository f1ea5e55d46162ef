import {
  openCache,
  openExporter,
  openNotifier,
  openRateLimiter,
  openRedis,
  openStore,
  openTracer,
} from "./adapters.ts";
import type { Config, KeyMaterial } from "./config.ts";
import { createAudit } from "./domain/audit.ts";
import { createAutoResolver } from "./domain/auto-resolve.ts";
import { createTokenHasher } from "./domain/credentials.ts";
import { createFeed } from "./domain/feed.ts";
import { createIdGenerator } from "./domain/ids.ts";
import { createIncidentHandling } from "./domain/incident-handling.ts";
import { createIngest } from "./domain/ingest.ts";
import { createOnboarding } from "./domain/onboarding.ts";
import type { Cache } from "./domain/ports/cache.ts";
import type { FeedNotifier } from "./domain/ports/notifier.ts";
import { noopObserver, type Observer } from "./domain/ports/observer.ts";
import type { RateLimiter } from "./domain/ports/rate-limiter.ts";
import type { Store } from "./domain/ports/store.ts";
import type { Tracer } from "./domain/ports/tracer.ts";
import { createRetentionSweeper, type RetentionTable } from "./domain/retention.ts";
import { createSealer } from "./domain/sealing.ts";
import { createEventSearch } from "./domain/search.ts";
import { createServices, type HeldServiceList, type SigningMaterial } from "./domain/services.ts";
import { createServiceStats, createStatsAggregator, noopStatsRecorder, STATS_RETENTION_DAYS } from "./domain/stats.ts";
import { createTenants } from "./domain/tenant.ts";
import { type CachedToken, createTokens } from "./domain/tokens.ts";
import { type Clock, systemClock, type TenantRecord } from "./domain/types.ts";
import { escapedErrorHandler } from "./gateway/errors.ts";
import { createGateway } from "./gateway/gateway.ts";
import type { Logger } from "./logger.ts";
import { createPrometheusMetrics } from "./metrics/prometheus.ts";
import { createLocalNotifier } from "./notify/local.ts";
import { createAdmission } from "./rpc/admission.ts";
import { createRpcImpls } from "./rpc/impls.ts";
import { createRequestObserver } from "./rpc/observe.ts";
import { createRpcRouter } from "./rpc/router.ts";

export interface AppOptions {
  config: Config;
  keys: KeyMaterial;
  logger: Logger;
  clock?: Clock;
}

/** Domain only (no HTTP): what the CLI's operator commands need. */
export function createDomain(deps: {
  store: Store;
  cache: Cache;
  keys: KeyMaterial;
  config: Config;
  logger: Logger;
  clock: Clock;
  /** Absent for the CLI, which ingests nothing. */
  rateLimiter?: RateLimiter;
  /** Metrics (docs/operations.md); the CLI's commands measure nothing. */
  /** Feed wake-ups; in process when omitted (the CLI's commands). */
  notifier?: FeedNotifier;
  observer?: Observer;
  /** Traces of the ingest commit (docs/tracing.md); absent when tracing is off. */
  tracer?: Tracer | null;
}) {
  const { store, cache, keys, config, logger, clock } = deps;
  const observer = deps.observer ?? noopObserver;
  const notifier = deps.notifier ?? createLocalNotifier();
  const newId = createIdGenerator(() => clock.now());
  const sealer = createSealer(keys.secretsKey);
  const audit = createAudit({ store, clock, newId });
  // A revoked token must fail on the next request: revocation invalidates before answering,
  // so the TTL only bounds memory and the damage of a lost invalidation.
  const tokenCache = cache.namespace<CachedToken>("tok", { ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 100_000 });
  const signingCache = cache.namespace<SigningMaterial>("svc", {
    ttlMs: 60_000,
    negativeTtlMs: 5_000,
    maxEntries: 50_000,
  });
  const hashToken = createTokenHasher(keys.tokenPepper);
  const tokens = createTokens({ store, tokenCache, clock, newId, hashToken, logger, audit });
  const onboarding = createOnboarding({ store, tokens, clock, hashToken, audit });
  // A tenant's service list (up to SERVICE_LIST_HELD), for the list pages the console and
  // integrations call most; invalidated by every change like the entries above (docs/cache.md).
  const listCache = cache.namespace<HeldServiceList>("svl", { ttlMs: 60_000, negativeTtlMs: 0, maxEntries: 10_000 });
  const services = createServices({
    store,
    signingCache,
    listCache,
    sealer,
    clock,
    newId,
    rotationGraceMs: config.rotationGraceSeconds * 1000,
    audit,
  });
  const tenantCache = cache.namespace<TenantRecord>("tnt", { ttlMs: 60_000, negativeTtlMs: 5_000, maxEntries: 10_000 });
  const tenants = createTenants({ store, tenantCache, audit });
  // §22: ingest outcomes counted in memory per service, added to the store on an interval.
  const statsAggregator = createStatsAggregator({ store, clock, logger });
  const ingest = createIngest({
    store,
    signingCache,
    sealer,
    clock,
    newId,
    logger,
    toleranceSeconds: config.signatureToleranceSeconds,
    maxEventBytes: config.limits.eventBytes,
    commit: config.ingestCommit,
    ...(deps.rateLimiter && { rateLimiter: deps.rateLimiter }),
    defaultRateLimit: config.rateLimitIngest,
    observer: deps.observer ?? noopObserver,
    // INTAKE_SERVICE_STATS=false: no outcome is counted (the aggregator then has nothing to flush).
    stats: config.serviceStats ? statsAggregator : noopStatsRecorder,
    notifier,
    tracer: deps.tracer ?? null,
  });
  const feed = createFeed({
    store,
    notifier,
    verifyToken: (credential) => tokens.verifyToken(credential),
    observer,
    logger,
    maxEventBytes: config.limits.eventBytes,
    readersPerToken: config.feedReaders.perToken,
    readersPerTenant: config.feedReaders.perTenant,
  });
  // Audit events always have a horizon (INTAKE_AUDIT_RETENTION_DAYS, default 365); events only when set.
  const retentionTables: RetentionTable[] = [
    {
      name: "audit_events",
      days: config.auditRetentionDays,
      deleteOlderThan: (cutoff, batch) => store.audit.deleteOlderThan(cutoff, batch),
    },
  ];
  retentionTables.push({
    name: "service_stats",
    days: STATS_RETENTION_DAYS,
    deleteOlderThan: (cutoff, batch) => store.stats.deleteOlderThan(cutoff, batch),
  });
  if (config.eventRetentionDays !== null) {
    retentionTables.push({
      name: "events",
      days: config.eventRetentionDays,
      deleteOlderThan: (cutoff, batch) => store.events.deleteOlderThan(cutoff, batch),
    });
  }
  if (config.incidentRetentionDays !== null) {
    // Only resolved incidents go, by `resolved_at`; event retention never touches incidents (§17).
    retentionTables.push({
      name: "incidents",
      days: config.incidentRetentionDays,
      deleteOlderThan: (cutoff, batch) => store.incidents.deleteResolvedBefore(cutoff, batch),
    });
  }
  const retention = createRetentionSweeper({ tables: retentionTables, clock, logger });
  const incidents = createIncidentHandling({ store, audit, clock, notifier, feed, observer });
  const autoResolve = createAutoResolver({ store, clock, logger, observer, notifier });
  const search = createEventSearch({ store, searchEnabled: config.eventSearch });
  const serviceStats = createServiceStats({ store, clock });
  return {
    tokens,
    onboarding,
    services,
    tenants,
    ingest,
    feed,
    audit,
    incidents,
    retention,
    autoResolve,
    signingCache,
    newId,
    search,
    serviceStats,
    statsAggregator,
  };
}

export type Domain = ReturnType<typeof createDomain>;

export async function createApp(options: AppOptions) {
  const { config, keys, logger } = options;
  const clock = options.clock ?? systemClock;
  // INTAKE_METRICS=false: no /metrics and nothing recorded (the no-op observer).
  const metrics = config.metrics ? createPrometheusMetrics({ version: config.version }) : null;
  const observer = metrics?.observer ?? noopObserver;
  const requests = createRequestObserver({ observer, metrics: metrics !== null, accessLog: config.accessLog, logger });
  const tracer = await openTracer(config);
  const decorate = tracer ? await import("./tracing/decorate.ts") : null;
  const store = await openStore(config);
  const redis = await openRedis(config, logger);
  const { cache, serving: cacheServing } = await openCache(config, redis, logger, clock, observer);
  const rateLimiter = await openRateLimiter(config, redis, logger, clock, observer);
  const notifier = await openNotifier(config, redis, logger);
  const domain = createDomain({
    // With tracing on, each store transaction and cache call is a child span of its request.
    store: tracer && decorate ? decorate.tracedStore(store, tracer) : store,
    cache: tracer && decorate ? decorate.tracedCache(cache, tracer) : cache,
    keys,
    config,
    logger,
    clock,
    rateLimiter,
    observer,
    notifier,
    tracer,
  });
  domain.retention.start();
  domain.autoResolve.start();
  metrics?.readIncidentsOpenFrom(() => store.incidents.countOpen());
  domain.statsAggregator.start();
  const exporter = await openExporter(config, { store, notifier, observer, logger });
  exporter?.start();
  const admission = createAdmission(
    domain.tokens,
    logger,
    config.rateLimitApi ? { limiter: rateLimiter, limit: config.rateLimitApi, observer } : null,
  );
  const impls = createRpcImpls({ ...domain, logger, version: config.version });
  const { limits } = config;
  const rpc = { impls, admission, limits, tracer };
  const gateway = await createGateway({
    domain,
    admission,
    limits,
    logger,
    requests,
    version: config.version,
    rpc: createRpcRouter(rpc, { grpc: false }),
    apiDocs: config.apiDocs ? { version: config.version } : null,
    console: config.console,
    corsOrigins: config.corsOrigins,
    metrics,
    tracer,
  });
  /**
   * The gRPC (h2c) listener on `port` (0: an ephemeral one); serve.ts starts it on config.grpcPort.
   * Loaded only when it listens (INTAKE_GRPC_PORT=0 never loads it): node:http2 and
   * connect-node are a large part of the heap app.ts's modules make, and a larger heap makes
   * every request dearer (bench scenario 2).
   */
  const listenGrpcOn = async (port: number) =>
    (await import("./rpc/grpc-server.ts")).listenGrpc(rpc, { port, host: config.host, logger, requests });

  let closed = false;
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    domain.feed.drain();
    await domain.retention.stop();
    await domain.autoResolve.stop();
    await domain.tokens.flushLastUsed();
    // Queued events are committed (and their senders answered) before the store closes.
    await domain.ingest.close();
    // After the last outcomes are counted, before the store closes: nothing counted is lost.
    await domain.statsAggregator.stop();
    // After the last commits: what is acknowledged is recorded and the lease let go.
    await exporter?.stop();
    await rateLimiter.close();
    await notifier.close();
    await cache.close();
    // Once, after its three users.
    await redis?.close();
    await store.close();
    // Last: the spans of everything above are exported before the process goes.
    await tracer?.shutdown();
  }

  return {
    config,
    store,
    cache,
    rateLimiter,
    /** What is serving as the cache now (`memory` while a configured Redis is unreachable). */
    cacheServing,
    domain,
    /** The export to NATS JetStream; null when INTAKE_EXPORT_NATS_URL is unset. */
    exporter,
    impls,
    admission,
    gateway,
    /** What the domain and the listeners report to (the no-op one with INTAKE_METRICS=false). */
    observer,
    /** Every request of the main port, through the gateway (the edge's steps: gateway/edge.ts). */
    fetch: gateway.fetch,
    /**
     * Bun.serve `routes`: the operations declared `native` (the health probe, the hot reads,
     * ingest), through the same edge steps without Elysia's dispatch.
     */
    nativeRoutes: gateway.nativeRoutes(),
    /** serve.ts, once Bun.serve listens: live streams lift its idle timeout (gateway.ts). */
    listening: gateway.listening,
    /** Bun.serve `error`: whatever escapes the handlers is a 500 in the contract's shape. */
    onEscapedError: escapedErrorHandler(logger),
    listenGrpc: listenGrpcOn,
    /** Server drain: live feed streams send what is committed, then end (serve.ts calls it first). */
    drainStreams: () => domain.feed.drain(),
    close,
  };
}

export type App = Awaited<ReturnType<typeof createApp>>;
