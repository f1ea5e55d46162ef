/**
 * The composition root's openers (app.ts is their one caller, and cli.ts for the store): each
 * picks the concrete adapter a setting names — the SQLite or PostgreSQL store, the Redis
 * connection and what shares it (cache, limiter, notifier), the OTLP tracer, the NATS
 * exporter — importing it only when it is used, and turns a failure to open it into one line
 * naming the variable.
 */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { type Config, ConfigError, describeStore, rootCause } from "./config.ts";
import type { Exporter } from "./domain/export.ts";
import type { Cache } from "./domain/ports/cache.ts";
import type { FeedNotifier } from "./domain/ports/notifier.ts";
import type { Observer } from "./domain/ports/observer.ts";
import type { RateLimiter } from "./domain/ports/rate-limiter.ts";
import type { Store } from "./domain/ports/store.ts";
import type { Tracer } from "./domain/ports/tracer.ts";
import type { Clock } from "./domain/types.ts";
import type { Logger } from "./logger.ts";
import { createLocalNotifier } from "./notify/local.ts";
import type { RedisConnection } from "./redis/connection.ts";

/**
 * Opens the store and applies migrations. A store that cannot be opened stops the start with
 * one line naming the variable, the place (never a password) and the driver's reason.
 */
export async function openStore(config: Config): Promise<Store> {
  let store: Store | undefined;
  try {
    store =
      config.database.kind === "postgres"
        ? (await import("./store/postgres/store.ts")).createPostgresStore({
            url: config.database.url,
            timeoutMs: config.databaseTimeoutMs,
            eventSearch: config.eventSearch,
          })
        : (await import("./store/sqlite/store.ts")).createSqliteStore({
            path: config.database.path,
            eventSearch: config.eventSearch,
          });
    await store.migrate();
    return store;
  } catch (error) {
    await store?.close().catch(() => {});
    let cause = rootCause(error);
    const { database } = config;
    if (database.kind === "sqlite" && database.path !== ":memory:" && !existsSync(dirname(database.path)))
      cause += `; the directory ${dirname(database.path)} does not exist`;
    if (config.database.kind === "postgres") {
      const password = URL.canParse(config.database.url) ? new URL(config.database.url).password : "";
      if (password) cause = cause.replaceAll(password, "***").replaceAll(decodeURIComponent(password), "***");
    }
    throw new ConfigError([
      `${config.databaseVariable}: cannot open the store (${describeStore(config.database)}): ${cause}`,
    ]);
  }
}

/**
 * The instance's Redis connections (REDIS_URL set): one for commands and one subscriber,
 * shared by the cache, the rate limiter and the feed notifier, and closed after them.
 */
export async function openRedis(config: Config, logger: Logger): Promise<RedisConnection | null> {
  if (!config.redisUrl) return null;
  const [{ openRedisConnection }, { redisHeartbeatMs }] = await Promise.all([
    import("./redis/connection.ts"),
    import("./cache/redis.ts"),
  ]);
  return openRedisConnection({
    url: config.redisUrl,
    keyPrefix: config.redisKeyPrefix,
    logger,
    heartbeatMs: redisHeartbeatMs(config.cacheMaxAgeMs),
  });
}

/** The cache, and what is serving right now (the startup log line reports it, not the configuration). */
export async function openCache(
  config: Config,
  redis: RedisConnection | null,
  logger: Logger,
  clock: Clock,
  observer: Observer,
): Promise<{ cache: Cache; serving: () => { cache: "memory" | "redis"; redis?: string } }> {
  if (redis) {
    const { createRedisCache } = await import("./cache/redis.ts");
    const cache = await createRedisCache({
      redis,
      keyPrefix: config.redisKeyPrefix,
      maxAgeMs: config.cacheMaxAgeMs,
      logger,
      now: () => clock.now(),
      observer,
    });
    return {
      cache,
      serving: () =>
        cache.sharedTierUp()
          ? { cache: "redis" }
          : { cache: "memory", redis: "unreachable; in-process tier only, reconnecting in the background" },
    };
  }
  const { createMemoryCache } = await import("./cache/memory.ts");
  return { cache: createMemoryCache({ now: () => clock.now(), observer }), serving: () => ({ cache: "memory" }) };
}

/**
 * The rate limiter (docs/rate-limits.md): shared through Redis when there is one, so instances
 * admit at most a limit between them; in process otherwise. Always built: a service's own
 * `rate_limit` can be set at run time even when no deployment default is configured.
 */
export async function openRateLimiter(
  config: Config,
  redis: RedisConnection | null,
  logger: Logger,
  clock: Clock,
  observer: Observer,
): Promise<RateLimiter> {
  if (redis) {
    const { createRedisRateLimiter } = await import("./cache/rate-limiter-redis.ts");
    return createRedisRateLimiter({
      redis,
      keyPrefix: config.redisKeyPrefix,
      logger,
      observer,
      now: () => clock.now(),
    });
  }
  const { createMemoryRateLimiter } = await import("./cache/rate-limiter-memory.ts");
  return createMemoryRateLimiter({ now: () => clock.now() });
}

/**
 * Feed wake-ups: Redis pub/sub when there is a Redis, else LISTEN/NOTIFY on PostgreSQL, else
 * in process (SQLite is one instance). docs/feed.md.
 */
export async function openNotifier(
  config: Config,
  redis: RedisConnection | null,
  logger: Logger,
): Promise<FeedNotifier> {
  if (redis) {
    const { createRedisNotifier } = await import("./notify/redis.ts");
    return createRedisNotifier({ redis, keyPrefix: config.redisKeyPrefix, logger });
  }
  if (config.database.kind === "postgres") {
    const { createPostgresNotifier } = await import("./notify/postgres.ts");
    return createPostgresNotifier({ url: config.database.url, logger });
  }
  return createLocalNotifier();
}

/**
 * Traces (SPEC §21, docs/tracing.md): OpenTelemetry is imported only when an OTLP endpoint is
 * configured; otherwise there is no tracer and nothing of it is loaded.
 */
export async function openTracer(config: Config): Promise<Tracer | null> {
  if (!config.tracing) return null;
  const { createOtelTracer } = await import("./tracing/otel.ts");
  return createOtelTracer(config.tracing, config.version);
}

/**
 * The export to NATS JetStream (SPEC §21, docs/export.md), when INTAKE_EXPORT_NATS_URL is set:
 * the NATS client and the exporter are imported only then.
 */
export async function openExporter(
  config: Config,
  deps: { store: Store; notifier: FeedNotifier; observer: Observer; logger: Logger },
): Promise<Exporter | null> {
  const nats = config.exportNats;
  if (!nats) return null;
  const [{ createExporter }, { createNatsPublisher }, { exportMessage }] = await Promise.all([
    import("./domain/export.ts"),
    import("./export/nats.ts"),
    import("./export/messages.ts"),
  ]);
  return createExporter({
    ...deps,
    publisher: createNatsPublisher({
      url: nats.url,
      stream: nats.stream,
      duplicateWindowMs: nats.duplicateWindowSeconds * 1000,
      publishTimeoutMs: 5_000,
      logger: deps.logger,
    }),
    encode: exportMessage,
    options: { maxInFlight: nats.maxInFlight },
  });
}
