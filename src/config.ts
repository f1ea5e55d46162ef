/**
 * Configuration from the environment (README.md). `parseConfig` is pure and reports every bad
 * variable as one line naming it; `loadKeyMaterial` then fills in the pepper and secrets key
 * (generated into the data dir for a SQLite file, required for PostgreSQL).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
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
    exportNats: exportNats(env, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

export const TRACE_SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;

/** What the OpenTelemetry adapter is built from; the exporter reads its own variables (headers, timeout). */
export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL (default http/protobuf). */
  protocol: "http/protobuf" | "http/json";
  /** OTEL_SERVICE_NAME (default `intake`). */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER (default parentbased_always_on) and OTEL_TRACES_SAMPLER_ARG (a ratio, default 1). */
  sampler: { kind: (typeof TRACE_SAMPLERS)[number]; ratio: number };
}

/** OpenTelemetry's standard variables, read only when an OTLP endpoint is set (SPEC §21). */
function tracingConfig(env: Record<string, string | undefined>, problems: string[]): TracingConfig | null {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = env[protocolVariable] || "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json")
    problems.push(`${protocolVariable} must be http/protobuf or http/json (got "${protocol}"; grpc is not offered)`);
  const kind = env.OTEL_TRACES_SAMPLER || "parentbased_always_on";
  const known = TRACE_SAMPLERS.find((s) => s === kind);
  if (!known) problems.push(`OTEL_TRACES_SAMPLER must be one of ${TRACE_SAMPLERS.join(", ")} (got "${kind}")`);
  const argRaw = env.OTEL_TRACES_SAMPLER_ARG;
  let ratio = 1;
  if (argRaw !== undefined && argRaw !== "") {
    ratio = Number(argRaw);
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
      problems.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "${argRaw}")`);
      ratio = 1;
    }
  }
  return {
    protocol: protocol === "http/json" ? "http/json" : "http/protobuf",
    serviceName: env.OTEL_SERVICE_NAME || "intake",
    sampler: { kind: known ?? "parentbased_always_on", ratio },
  };
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

/**
 * Every variable Intake reads, as `bun run intake help` prints them. Keep it in step with
 * README.md's configuration table (test/e2e/cli-usage.test.ts compares the two).
 */
export const ENVIRONMENT: ReadonlyArray<{ name: string; fallback: string; meaning: string }> = [
  { name: "PORT", fallback: "3000", meaning: "HTTP listener port (REST, Connect, gRPC-Web)" },
  { name: "HOST", fallback: "127.0.0.1", meaning: "address both listeners bind" },
  { name: "INTAKE_GRPC_PORT", fallback: "50051", meaning: "gRPC (h2c) listener port; 0 disables" },
  { name: "INTAKE_DATA_DIR", fallback: "./data", meaning: "SQLite file and generated key material" },
  {
    name: "DATABASE_URL",
    fallback: "sqlite:<data dir>/intake.sqlite",
    meaning: "sqlite:<path>, sqlite::memory: (tests) or postgres://...",
  },
  { name: "REDIS_URL", fallback: "unset", meaning: "unset: in-process cache; set: Redis cache" },
  { name: "INTAKE_REDIS_KEY_PREFIX", fallback: "intake", meaning: "prefix of every Redis key and channel" },
  {
    name: "INTAKE_DATABASE_TIMEOUT_MS",
    fallback: "5000",
    meaning: "PostgreSQL: bound on every store call; past it 503 unavailable",
  },
  {
    name: "INTAKE_CACHE_MAX_AGE_MS",
    fallback: "2000",
    meaning: "Redis cache: no entry is served longer than this after its store read",
  },
  {
    name: "INTAKE_TOKEN_PEPPER",
    fallback: "generated (SQLite)",
    meaning: "HMAC pepper for token digests, >= 32 bytes; required for PostgreSQL",
  },
  {
    name: "INTAKE_SECRETS_KEY",
    fallback: "generated (SQLite)",
    meaning: "base64 of 32 bytes, key for signing secrets at rest; required for PostgreSQL",
  },
  { name: "INTAKE_ROTATION_GRACE_SECONDS", fallback: "86400", meaning: "how long a rotated-out secret verifies" },
  { name: "INTAKE_SIGNATURE_TOLERANCE_SECONDS", fallback: "300", meaning: "ingest timestamp tolerance" },
  { name: "INTAKE_MAX_EVENT_BYTES", fallback: "262144", meaning: "ingest body limit" },
  { name: "INTAKE_INGEST_COMMIT", fallback: "group", meaning: "group or per_request" },
  { name: "INTAKE_API_DOCS", fallback: "true", meaning: "serve GET /openapi.json and GET /docs" },
  { name: "INTAKE_CONSOLE", fallback: "true", meaning: "serve the web console at /console (GET / redirects there)" },
  {
    name: "INTAKE_CORS_ORIGINS",
    fallback: "unset (no CORS)",
    meaning: "comma-separated exact origins whose pages may call the bearer routes, feed streams and Connect",
  },
  {
    name: "INTAKE_AUDIT_RETENTION_DAYS",
    fallback: "365",
    meaning: "1..3650: audit events older than this are deleted in the background",
  },
  { name: "INTAKE_BUILD", fallback: "unset", meaning: "appended to the health version as +<build>" },
  { name: "INTAKE_METRICS", fallback: "true", meaning: "serve GET /metrics (Prometheus text format)" },
  { name: "INTAKE_ACCESS_LOG", fallback: "false", meaning: "one JSON log line per request" },
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    fallback: "unset (no traces)",
    meaning: "OTLP/HTTP collector: traces exported (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json)",
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    fallback: "unset",
    meaning: "the traces endpoint itself (wins over OTEL_EXPORTER_OTLP_ENDPOINT)",
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    fallback: "OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf",
    meaning: "http/protobuf or http/json",
  },
  { name: "OTEL_SERVICE_NAME", fallback: "intake", meaning: "the service.name of every span" },
  { name: "OTEL_TRACES_SAMPLER", fallback: "parentbased_always_on", meaning: "the trace sampler" },
  { name: "OTEL_TRACES_SAMPLER_ARG", fallback: "1", meaning: "the ratio of the *traceidratio samplers, 0..1" },
  { name: "INTAKE_LOG_LEVEL", fallback: "info", meaning: "debug, info, warn or error" },
  {
    name: "INTAKE_RATE_LIMIT_API",
    fallback: "unset (none)",
    meaning: "<n>/<seconds>s per bearer token across its routes, e.g. 1000/60s",
  },
  {
    name: "INTAKE_RATE_LIMIT_INGEST",
    fallback: "unset (none)",
    meaning: "<n>/<seconds>s per service's signed ingest (services without their own rate_limit)",
  },
  {
    name: "INTAKE_FEED_READERS_PER_TOKEN",
    fallback: "10",
    meaning: "1..100000: feed streams and long polls open at once per token on one instance",
  },
  {
    name: "INTAKE_FEED_READERS_PER_TENANT",
    fallback: "100",
    meaning: "1..1000000: feed streams and long polls open at once per tenant on one instance",
  },
  {
    name: "INTAKE_EVENT_RETENTION_DAYS",
    fallback: "unset (kept)",
    meaning: "1..3650: older events are deleted in the background",
  },
  {
    name: "INTAKE_INCIDENT_RETENTION_DAYS",
    fallback: "unset (kept)",
    meaning: "1..3650: incidents resolved longer ago are deleted in the background",
  },
  {
    name: "INTAKE_EVENT_SEARCH",
    fallback: "false",
    meaning: "true keeps the payload search index; false drops it and q answers 400 search_disabled",
  },
  {
    name: "INTAKE_EXPORT_NATS_URL",
    fallback: "unset (no export)",
    meaning: "nats:// URL(s): export every event and incident change to NATS JetStream",
  },
  { name: "INTAKE_EXPORT_NATS_STREAM", fallback: "INTAKE", meaning: "the JetStream stream (created when missing)" },
  {
    name: "INTAKE_EXPORT_NATS_MAX_IN_FLIGHT",
    fallback: "256",
    meaning: "1..10000: export publishes awaiting their acknowledgement",
  },
  {
    name: "INTAKE_EXPORT_NATS_DUPLICATE_WINDOW_SECONDS",
    fallback: "120",
    meaning: "10..604800: duplicate window of a stream Intake creates",
  },
];
