/**
 * Configuration from the environment (README.md). `parseConfig` is pure and reports every bad
 * variable as one line naming it; `loadKeyMaterial` then fills in the pepper and secrets key
 * (generated into the data dir for a SQLite file, required for PostgreSQL).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { type TracingConfig, tracingConfig } from "./config-tracing.ts";
import { type Limits, MANAGEMENT_BODY_BYTES } from "./domain/limits.ts";
import type { RateLimit } from "./domain/ports/rate-limiter.ts";
import { MAX_LIMIT, MAX_WINDOW_SECONDS, parseRateLimitText } from "./domain/rate-limits.ts";
import { LOG_LEVELS, type LogLevel } from "./logger.ts";

export type DatabaseConfig = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export interface Config {
  port: number;
  host: string;
  /** 0 disables the gRPC listener. */
  grpcPort: number;
  dataDir: string;
  database: DatabaseConfig;
  /** The variable the store's location came from, for messages that must name it. */
  databaseVariable: "DATABASE_URL" | "INTAKE_DATA_DIR";
  redisUrl: string | null;
  /**
   * Prefix of every Redis key and channel (INTAKE_REDIS_KEY_PREFIX): deployments sharing one
   * Redis must use different ones, instances of one deployment the same one.
   */
  redisKeyPrefix: string;
  /** Supplied by the environment; null means "generate/read from the data dir". */
  tokenPepper: string | null;
  secretsKey: Uint8Array | null;
  rotationGraceSeconds: number;
  signatureToleranceSeconds: number;
  /** Size limits; app.ts hands this one object to every layer that enforces one. */
  limits: Limits;
  /**
   * INTAKE_INGEST_COMMIT: `group` (default) lets concurrent events share one commit;
   * `per_request` commits each event alone (the benchmark's baseline). Both ack after commit.
   */
  ingestCommit: "group" | "per_request";
  /** `GET /openapi.json` and `GET /docs`. */
  apiDocs: boolean;
  /** INTAKE_CONSOLE: the web console at `/console` (and `GET /` redirecting there). */
  console: boolean;
  /** INTAKE_METRICS: `GET /metrics` and the recording behind it (docs/operations.md). */
  metrics: boolean;
  /** INTAKE_ACCESS_LOG: one JSON line per request. */
  accessLog: boolean;
  /**
   * Traces (SPEC §21, docs/tracing.md): on when OTEL_EXPORTER_OTLP_ENDPOINT or
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; null (nothing loaded) otherwise.
   */
  tracing: TracingConfig | null;
  /** INTAKE_LOG_LEVEL. */
  logLevel: LogLevel;
  /**
   * INTAKE_CORS_ORIGINS: the exact origins (scheme://host[:port]) whose pages may call the
   * bearer routes, the feed streams and Connect from a browser (docs/api.md, "CORS"); empty =
   * no CORS headers at all.
   */
  corsOrigins: readonly string[];
  /** INTAKE_RATE_LIMIT_API: per bearer token across its bearer routes; null = none. */
  rateLimitApi: RateLimit | null;
  /** INTAKE_RATE_LIMIT_INGEST: per service, for services without their own `rate_limit`; null = none. */
  rateLimitIngest: RateLimit | null;
  /**
   * INTAKE_AUDIT_RETENTION_DAYS (1..3650, default 365): audit events older than this are
   * deleted in the background (store.audit.deleteOlderThan, in batches).
   */
  auditRetentionDays: number;
  version: string;
  /**
   * INTAKE_DATABASE_TIMEOUT_MS: bound on every PostgreSQL call (connect, statement,
   * transaction); past it the call is a 503 and the pool is replaced (docs/store.md).
   */
  databaseTimeoutMs: number;
  /**
   * INTAKE_CACHE_MAX_AGE_MS (Redis cache): no cached entry is served longer than this after
   * it was read from the store, whatever the network does (docs/cache.md).
   */
  cacheMaxAgeMs: number;
  /**
   * INTAKE_FEED_READERS_PER_TOKEN / _PER_TENANT: live feed reads (streams and waiting long
   * polls) one instance holds at once per token and per tenant; past them, 429 (docs/feed.md).
   */
  feedReaders: { perToken: number; perTenant: number };
  /** INTAKE_EVENT_RETENTION_DAYS: null keeps events forever (docs/feed.md). */
  eventRetentionDays: number | null;
  /**
   * INTAKE_INCIDENT_RETENTION_DAYS (1..3650): resolved incidents resolved longer ago are
   * deleted in the background; null keeps them forever (docs/incidents.md).
   */
  incidentRetentionDays: number | null;
  /**
   * INTAKE_EVENT_SEARCH (default false until the index meets §18's ingest cost goal,
   * docs/search.md): true keeps §18's payload index and `q` searches it; false drops the index
   * at start and `q` is 400 search_disabled.
   */
  eventSearch: boolean;
  /**
   * INTAKE_SERVICE_STATS (default true): §22's per-service ingest outcome counts. False records
   * none (the stats routes then answer what the store already holds), so their cost can be
   * measured against nothing (bench scenario 18, docs/search.md "Service stats").
   */
  serviceStats: boolean;
  /** The export to NATS JetStream (SPEC §21, docs/export.md); null when INTAKE_EXPORT_NATS_URL is unset. */
  exportNats: ExportNatsConfig | null;
}

export interface ExportNatsConfig {
  /** INTAKE_EXPORT_NATS_URL: one or more comma-separated nats:// or tls:// URLs. */
  url: string;
  /** INTAKE_EXPORT_NATS_STREAM (default INTAKE). */
  stream: string;
  /** INTAKE_EXPORT_NATS_MAX_IN_FLIGHT (1..10000, default 256): publishes awaiting their acknowledgement. */
  maxInFlight: number;
  /** INTAKE_EXPORT_NATS_DUPLICATE_WINDOW_SECONDS (10..604800, default 120): of a stream Intake creates. */
  duplicateWindowSeconds: number;
}

/** The export's variables; null (nothing else read or loaded) when the URL is unset. */
function exportNats(env: Env, problems: string[]): ExportNatsConfig | null {
  const url = env.INTAKE_EXPORT_NATS_URL;
  if (url === undefined || url === "") return null;
  const servers = url.split(",").map((s) => s.trim());
  if (servers.some((s) => !/^(nats|tls):\/\/[^\s/]+\/?$/.test(s)))
    problems.push("INTAKE_EXPORT_NATS_URL must be one or more comma-separated nats:// or tls:// URLs");
  const stream = env.INTAKE_EXPORT_NATS_STREAM || "INTAKE";
  // A JetStream stream name: no whitespace, dots, wildcards or path separators.
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stream))
    problems.push(`INTAKE_EXPORT_NATS_STREAM must be 1 to 64 of A-Z a-z 0-9 _ - (got "${stream}")`);
  return {
    url,
    stream,
    maxInFlight: integer(env, "INTAKE_EXPORT_NATS_MAX_IN_FLIGHT", 256, 1, 10_000, problems),
    duplicateWindowSeconds: integer(env, "INTAKE_EXPORT_NATS_DUPLICATE_WINDOW_SECONDS", 120, 10, 604_800, problems),
  };
}

export interface KeyMaterial {
  tokenPepper: string;
  secretsKey: Uint8Array;
}

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

function integer(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
    return fallback;
  }
  return value;
}

/** `<n>/<s>s`, e.g. `1000/60s`; unset or empty = no limit. */
/**
 * INTAKE_CORS_ORIGINS: comma-separated exact origins, each what a browser sends as `Origin`
 * (scheme, host, port when not the default; no path, no trailing slash). `*` is refused: a
 * listed origin is one whose pages are trusted with a bearer token's answers.
 */
function corsOrigins(raw: string | undefined, problems: string[]): readonly string[] {
  if (raw === undefined || raw.trim() === "") return [];
  const origins: string[] = [];
  for (const item of raw.split(",")) {
    const origin = item.trim();
    if (origin === "") continue;
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = null;
    }
    if (origin === "*" || parsed === null || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
      problems.push(
        `INTAKE_CORS_ORIGINS: "${origin}" is not an exact origin (scheme://host[:port], no path or trailing slash; never *)`,
      );
      continue;
    }
    origins.push(origin);
  }
  return origins;
}

function rateLimit(env: Env, name: string, problems: string[]): RateLimit | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  const parsed = parseRateLimitText(raw);
  if (!parsed) {
    problems.push(
      `${name} must be <requests>/<seconds>s with 1..${MAX_LIMIT} requests and 1..${MAX_WINDOW_SECONDS} seconds, e.g. 1000/60s (got "${raw}")`,
    );
  }
  return parsed;
}

function database(env: Env, dataDir: string, problems: string[]): DatabaseConfig {
  const url = env.DATABASE_URL;
  if (url === undefined || url === "") return { kind: "sqlite", path: join(dataDir, "intake.sqlite") };
  if (url === "sqlite::memory:") return { kind: "sqlite", path: ":memory:" };
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length);
    if (path === "") problems.push("DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/intake.sqlite");
    return { kind: "sqlite", path: isAbsolute(path) ? path : resolve(path) };
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return { kind: "postgres", url };
  problems.push("DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://...");
  return { kind: "sqlite", path: ":memory:" };
}

/**
 * Where the store is, for people: the SQLite file's path, or PostgreSQL's user@host:port/db.
 * Never the password.
 */
export function describeStore(db: DatabaseConfig): string {
  if (db.kind === "sqlite") return db.path === ":memory:" ? "SQLite in memory" : `SQLite file ${db.path}`;
  try {
    const url = new URL(db.url);
    const user = url.username ? `${decodeURIComponent(url.username)}@` : "";
    return `PostgreSQL ${user}${url.hostname || "localhost"}:${url.port || "5432"}${url.pathname || "/"}`;
  } catch {
    return "PostgreSQL (the URL does not parse)";
  }
}

/** The innermost cause's message: what the driver or the OS said. */
export function rootCause(error: unknown): string {
  let e: unknown = error;
  for (let depth = 0; e instanceof Error && e.cause instanceof Error && depth < 5; depth++) e = e.cause;
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
}

/**
 * The command as the operator typed it, for help and messages that tell them what to run: the
 * one-file build's own path as invoked (`./intake`, or `intake` found on PATH), `bun run intake`
 * under Bun. A compiled executable's modules live in Bun's embedded file system (`/$bunfs/`,
 * `B:/~BUN/` on Windows), which is how the two are told apart.
 */
export function invokedAs(): string {
  const compiled = Bun.main.startsWith("/$bunfs/") || /^[A-Z]:[\\/]~BUN[\\/]/.test(Bun.main);
  return compiled ? process.argv0 : "bun run intake";
}

export function version(env: Env): string {
  return env.INTAKE_BUILD ? `${pkg.version}+${env.INTAKE_BUILD}` : pkg.version;
}

export function parsePepper(raw: string, source: string): string {
  if (Buffer.byteLength(raw, "utf8") < 32) throw new ConfigError([`${source} must be at least 32 bytes`]);
  return raw;
}

export function parseSecretsKey(raw: string, source: string): Uint8Array {
  const trimmed = raw.trim();
  const key = Buffer.from(trimmed, "base64");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || key.length !== 32) {
    throw new ConfigError([`${source} must be the base64 of exactly 32 bytes (openssl rand -base64 32)`]);
  }
  return new Uint8Array(key);
}

function optional<T>(problems: string[], parse: () => T): T | null {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) problems.push(...error.problems);
    else throw error;
    return null;
  }
}

/** Every bad variable at once, one line each. */
export function parseConfig(env: Env): Config {
  const problems: string[] = [];
  const dataDir = resolve(env.INTAKE_DATA_DIR || "./data");
  const db = database(env, dataDir, problems);
  const pepperRaw = env.INTAKE_TOKEN_PEPPER;
  const keyRaw = env.INTAKE_SECRETS_KEY;
  const tokenPepper = pepperRaw ? optional(problems, () => parsePepper(pepperRaw, "INTAKE_TOKEN_PEPPER")) : null;
  const secretsKey = keyRaw ? optional(problems, () => parseSecretsKey(keyRaw, "INTAKE_SECRETS_KEY")) : null;
  if (db.kind === "postgres") {
    // Instances sharing one database must share these; generating them per box would split the fleet.
    if (!pepperRaw)
      problems.push(
        "INTAKE_TOKEN_PEPPER is required with a postgres DATABASE_URL (at least 32 bytes, the same on every instance)",
      );
    if (!keyRaw)
      problems.push(
        "INTAKE_SECRETS_KEY is required with a postgres DATABASE_URL (base64 of 32 bytes, the same on every instance)",
      );
  }
  const redisUrl = env.REDIS_URL || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push("REDIS_URL must start with redis:// or rediss://");
  const redisKeyPrefix = env.INTAKE_REDIS_KEY_PREFIX || "intake";
  // It becomes part of keys and channel names: no spaces or glob characters (SCAN/PSUBSCRIBE).
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(redisKeyPrefix))
    problems.push("INTAKE_REDIS_KEY_PREFIX must be 1 to 64 of A-Z a-z 0-9 _ . : -");
  const ingestCommitRaw = env.INTAKE_INGEST_COMMIT || "group";
  if (ingestCommitRaw !== "group" && ingestCommitRaw !== "per_request")
    problems.push(`INTAKE_INGEST_COMMIT must be group or per_request (got "${ingestCommitRaw}")`);
  const apiDocsRaw = env.INTAKE_API_DOCS ?? "true";
  if (apiDocsRaw !== "true" && apiDocsRaw !== "false") problems.push("INTAKE_API_DOCS must be true or false");
  const consoleRaw = env.INTAKE_CONSOLE ?? "true";
  if (consoleRaw !== "true" && consoleRaw !== "false") problems.push("INTAKE_CONSOLE must be true or false");
  const flag = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (raw === "true" || raw === "false") return raw === "true";
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const logLevelRaw = env.INTAKE_LOG_LEVEL || "info";
  const logLevel = LOG_LEVELS.find((l) => l === logLevelRaw);
  if (!logLevel) problems.push(`INTAKE_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")} (got "${logLevelRaw}")`);
  const config: Config = {
    port: integer(env, "PORT", 3000, 0, 65535, problems),
    host: env.HOST || "127.0.0.1",
    grpcPort: integer(env, "INTAKE_GRPC_PORT", 50051, 0, 65535, problems),
    dataDir,
    database: db,
    databaseVariable: env.DATABASE_URL ? "DATABASE_URL" : "INTAKE_DATA_DIR",
    redisUrl,
    redisKeyPrefix,
    tokenPepper,
    secretsKey,
    rotationGraceSeconds: integer(env, "INTAKE_ROTATION_GRACE_SECONDS", 86400, 0, 31_536_000, problems),
    signatureToleranceSeconds: integer(env, "INTAKE_SIGNATURE_TOLERANCE_SECONDS", 300, 1, 86_400, problems),
    limits: {
      managementBodyBytes: MANAGEMENT_BODY_BYTES,
      eventBytes: integer(env, "INTAKE_MAX_EVENT_BYTES", 262144, 2, 64 * 1024 * 1024, problems),
    },
    ingestCommit: ingestCommitRaw === "per_request" ? "per_request" : "group",
    apiDocs: apiDocsRaw !== "false",
    console: consoleRaw !== "false",
    metrics: flag("INTAKE_METRICS", true),
    accessLog: flag("INTAKE_ACCESS_LOG", false),
    tracing: tracingConfig(env, problems),
    logLevel: logLevel ?? "info",
    corsOrigins: corsOrigins(env.INTAKE_CORS_ORIGINS, problems),
    rateLimitApi: rateLimit(env, "INTAKE_RATE_LIMIT_API", problems),
    rateLimitIngest: rateLimit(env, "INTAKE_RATE_LIMIT_INGEST", problems),
    auditRetentionDays: integer(env, "INTAKE_AUDIT_RETENTION_DAYS", 365, 1, 3650, problems),
    version: version(env),
    databaseTimeoutMs: integer(env, "INTAKE_DATABASE_TIMEOUT_MS", 5000, 100, 600_000, problems),
    cacheMaxAgeMs: integer(env, "INTAKE_CACHE_MAX_AGE_MS", 2000, 100, 60_000, problems),
    feedReaders: {
      perToken: integer(env, "INTAKE_FEED_READERS_PER_TOKEN", 10, 1, 100_000, problems),
      perTenant: integer(env, "INTAKE_FEED_READERS_PER_TENANT", 100, 1, 1_000_000, problems),
    },
    eventRetentionDays:
      env.INTAKE_EVENT_RETENTION_DAYS === undefined || env.INTAKE_EVENT_RETENTION_DAYS === ""
        ? null
        : integer(env, "INTAKE_EVENT_RETENTION_DAYS", 0, 1, 3650, problems),
    incidentRetentionDays:
      env.INTAKE_INCIDENT_RETENTION_DAYS === undefined || env.INTAKE_INCIDENT_RETENTION_DAYS === ""
        ? null
        : integer(env, "INTAKE_INCIDENT_RETENTION_DAYS", 0, 1, 3650, problems),
    eventSearch: flag("INTAKE_EVENT_SEARCH", false),
    serviceStats: flag("INTAKE_SERVICE_STATS", true),
    exportNats: exportNats(env, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function readOrCreate(path: string, make: () => string): string {
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  writeFileSync(path, `${make()}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  return readFileSync(path, "utf8").trim();
}

/**
 * Pepper and secrets key: from the environment when set; for a SQLite file, generated once
 * into the data dir (mode 0600) and reused; for sqlite::memory:, random for this process.
 */
export function loadKeyMaterial(config: Config): KeyMaterial {
  const random = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
  if (config.database.kind === "sqlite" && config.database.path === ":memory:") {
    return {
      tokenPepper: config.tokenPepper ?? random(),
      secretsKey: config.secretsKey ?? parseSecretsKey(random(), "generated key"),
    };
  }
  if (config.tokenPepper && config.secretsKey)
    return { tokenPepper: config.tokenPepper, secretsKey: config.secretsKey };
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const pepperFile = join(config.dataDir, "token_pepper");
  const keyFile = join(config.dataDir, "secrets_key");
  return {
    tokenPepper: config.tokenPepper ?? parsePepper(readOrCreate(pepperFile, random), pepperFile),
    secretsKey: config.secretsKey ?? parseSecretsKey(readOrCreate(keyFile, random), keyFile),
  };
}
