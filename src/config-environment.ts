/** The help table of the environment (`intake help`, README.md's configuration table). */
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
    name: "INTAKE_SERVICE_STATS",
    fallback: "true",
    meaning: "false stops counting ingest outcomes per service (the console's outcome chart then stays empty)",
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
