import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, type Env, loadKeyMaterial, parseConfig } from "../src/config.ts";

const GOOD_KEY = Buffer.alloc(32, 7).toString("base64");
const GOOD_PEPPER = "p".repeat(32);

function problemsOf(env: Env): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "intake-config-"));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("parseConfig", () => {
  test("defaults: port 3000 on 127.0.0.1, gRPC 50051, SQLite in ./data, grace 86400, tolerance 300, 256 KiB events", () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: "127.0.0.1",
      grpcPort: 50051,
      redisUrl: null,
      tokenPepper: null,
      secretsKey: null,
      rotationGraceSeconds: 86400,
      signatureToleranceSeconds: 300,
      limits: { managementBodyBytes: 65536, eventBytes: 262144 },
    });
    expect(config.database).toEqual({ kind: "sqlite", path: join(config.dataDir, "intake.sqlite") });
    expect(config.dataDir.endsWith("/data")).toBe(true);
  });

  test("valid values are taken: ports, URLs, pepper, key, windows", () => {
    const config = parseConfig({
      PORT: "8080",
      HOST: "0.0.0.0",
      INTAKE_GRPC_PORT: "0",
      DATABASE_URL: "postgres://u:p@db:5432/intake",
      REDIS_URL: "rediss://cache:6380",
      INTAKE_TOKEN_PEPPER: GOOD_PEPPER,
      INTAKE_SECRETS_KEY: GOOD_KEY,
      INTAKE_ROTATION_GRACE_SECONDS: "0",
      INTAKE_SIGNATURE_TOLERANCE_SECONDS: "1",
      INTAKE_MAX_EVENT_BYTES: "1024",
    });
    expect(config).toMatchObject({
      port: 8080,
      host: "0.0.0.0",
      grpcPort: 0,
      database: { kind: "postgres", url: "postgres://u:p@db:5432/intake" },
      redisUrl: "rediss://cache:6380",
      tokenPepper: GOOD_PEPPER,
      rotationGraceSeconds: 0,
      signatureToleranceSeconds: 1,
      limits: { managementBodyBytes: 65536, eventBytes: 1024 },
    });
    expect(config.secretsKey).toEqual(new Uint8Array(Buffer.alloc(32, 7)));
  });

  const bad: Array<[string, string]> = [
    ["PORT", "abc"],
    ["PORT", "70000"],
    ["PORT", "-1"],
    ["PORT", "80.5"],
    ["INTAKE_GRPC_PORT", "grpc"],
    ["INTAKE_GRPC_PORT", "65536"],
    ["DATABASE_URL", "mysql://u:secretpw@db/intake"],
    ["DATABASE_URL", "sqlite:"],
    ["REDIS_URL", "http://:secretpw@cache:6379"],
    ["INTAKE_TOKEN_PEPPER", "too-short-pepper"],
    ["INTAKE_SECRETS_KEY", "not base64 at all!"],
    ["INTAKE_SECRETS_KEY", Buffer.alloc(31).toString("base64")],
    ["INTAKE_SECRETS_KEY", Buffer.alloc(33).toString("base64")],
    ["INTAKE_SECRETS_KEY", "a".repeat(32)],
    ["INTAKE_ROTATION_GRACE_SECONDS", "-5"],
    ["INTAKE_ROTATION_GRACE_SECONDS", "1.5"],
    ["INTAKE_ROTATION_GRACE_SECONDS", "one day"],
    ["INTAKE_SIGNATURE_TOLERANCE_SECONDS", "0"],
    ["INTAKE_SIGNATURE_TOLERANCE_SECONDS", "5m"],
    ["INTAKE_MAX_EVENT_BYTES", "0"],
    ["INTAKE_MAX_EVENT_BYTES", "lots"],
    ["INTAKE_AUDIT_RETENTION_DAYS", "0"],
    ["INTAKE_AUDIT_RETENTION_DAYS", "3651"],
    ["INTAKE_AUDIT_RETENTION_DAYS", "a year"],
    ["INTAKE_INCIDENT_RETENTION_DAYS", "0"],
    ["INTAKE_INCIDENT_RETENTION_DAYS", "3651"],
    ["INTAKE_INCIDENT_RETENTION_DAYS", "90d"],
    ["INTAKE_FEED_READERS_PER_TOKEN", "0"],
    ["INTAKE_FEED_READERS_PER_TOKEN", "ten"],
    ["INTAKE_FEED_READERS_PER_TENANT", "0"],
    ["INTAKE_FEED_READERS_PER_TENANT", "1000001"],
  ];
  test("INTAKE_INCIDENT_RETENTION_DAYS keeps resolved incidents unless set, and takes 1..3650", () => {
    expect(parseConfig({}).incidentRetentionDays).toBeNull();
    expect(parseConfig({ INTAKE_INCIDENT_RETENTION_DAYS: "" }).incidentRetentionDays).toBeNull();
    expect(parseConfig({ INTAKE_INCIDENT_RETENTION_DAYS: "1" }).incidentRetentionDays).toBe(1);
    expect(parseConfig({ INTAKE_INCIDENT_RETENTION_DAYS: "3650" }).incidentRetentionDays).toBe(3650);
  });
  test("INTAKE_FEED_READERS_PER_TOKEN / _PER_TENANT are 10 / 100 unless set", () => {
    expect(parseConfig({}).feedReaders).toEqual({ perToken: 10, perTenant: 100 });
    expect(
      parseConfig({ INTAKE_FEED_READERS_PER_TOKEN: "1", INTAKE_FEED_READERS_PER_TENANT: "1000000" }).feedReaders,
    ).toEqual({ perToken: 1, perTenant: 1_000_000 });
  });
  test("INTAKE_AUDIT_RETENTION_DAYS is 365 unless set, and takes 1..3650", () => {
    expect(parseConfig({}).auditRetentionDays).toBe(365);
    expect(parseConfig({ INTAKE_AUDIT_RETENTION_DAYS: "1" }).auditRetentionDays).toBe(1);
    expect(parseConfig({ INTAKE_AUDIT_RETENTION_DAYS: "3650" }).auditRetentionDays).toBe(3650);
  });

  for (const [name, value] of bad) {
    test(`${name}=${JSON.stringify(value.slice(0, 24))} fails with one line naming ${name}`, () => {
      const problems = problemsOf({ [name]: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(name);
      expect(problems[0]).not.toContain("\n");
    });
  }

  test("a bad pepper, key or URL is not echoed back in the error line", () => {
    const pepper = "short-secret-pepper";
    const key = "c2VjcmV0LWtleS1tYXRlcmlhbA==";
    const problems = problemsOf({
      INTAKE_TOKEN_PEPPER: pepper,
      INTAKE_SECRETS_KEY: key,
      DATABASE_URL: "mysql://u:hunter2@db/x",
      REDIS_URL: "http://:hunter3@cache",
    });
    expect(problems).toHaveLength(4);
    const text = problems.join("\n");
    for (const secret of [pepper, key, "hunter2", "hunter3"]) expect(text).not.toContain(secret);
  });

  test("several bad variables are reported together, one line each", () => {
    const problems = problemsOf({ PORT: "x", INTAKE_GRPC_PORT: "y", INTAKE_MAX_EVENT_BYTES: "z" });
    expect(problems).toHaveLength(3);
    expect(problems.map((p) => p.split(" ")[0])).toEqual(["PORT", "INTAKE_GRPC_PORT", "INTAKE_MAX_EVENT_BYTES"]);
  });

  test("a postgres DATABASE_URL without pepper and key fails naming each of them", () => {
    const problems = problemsOf({ DATABASE_URL: "postgres://db/intake" });
    expect(problems).toHaveLength(2);
    expect(problems.some((p) => p.startsWith("INTAKE_TOKEN_PEPPER"))).toBe(true);
    expect(problems.some((p) => p.startsWith("INTAKE_SECRETS_KEY"))).toBe(true);
  });

  test("a postgres DATABASE_URL with only the pepper fails naming INTAKE_SECRETS_KEY alone", () => {
    const problems = problemsOf({ DATABASE_URL: "postgresql://db/intake", INTAKE_TOKEN_PEPPER: GOOD_PEPPER });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toStartWith("INTAKE_SECRETS_KEY");
  });

  test("a postgres DATABASE_URL with only the key fails naming INTAKE_TOKEN_PEPPER alone", () => {
    const problems = problemsOf({ DATABASE_URL: "postgres://db/intake", INTAKE_SECRETS_KEY: GOOD_KEY });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toStartWith("INTAKE_TOKEN_PEPPER");
  });

  test("the pepper counts UTF-8 bytes: 11 three-byte characters (33 bytes) are enough", () => {
    expect(problemsOf({ INTAKE_TOKEN_PEPPER: "€".repeat(11) })).toEqual([]);
    expect(problemsOf({ INTAKE_TOKEN_PEPPER: "€".repeat(10) })).toHaveLength(1);
  });

  test("version is package.json's, plus +INTAKE_BUILD when set", () => {
    const base = parseConfig({}).version;
    expect(base).toMatch(/^\d+\.\d+\.\d+/);
    expect(parseConfig({ INTAKE_BUILD: "abc123" }).version).toBe(`${base}+abc123`);
  });
});

describe("key material", () => {
  test("for a SQLite file, pepper and key are generated into the data dir with mode 0600", () => {
    const dir = join(tempDir(), "data");
    const keys = loadKeyMaterial(parseConfig({ INTAKE_DATA_DIR: dir }));
    for (const name of ["token_pepper", "secrets_key"]) {
      const file = join(dir, name);
      expect(existsSync(file)).toBe(true);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    expect(Buffer.byteLength(keys.tokenPepper)).toBeGreaterThanOrEqual(32);
    expect(keys.secretsKey).toHaveLength(32);
    expect(Buffer.from(readFileSync(join(dir, "secrets_key"), "utf8").trim(), "base64")).toEqual(
      Buffer.from(keys.secretsKey),
    );
    // The data dir itself is not world-readable.
    expect(statSync(dir).mode & 0o077).toBe(0);
  });

  test("the generated files are reused on the next start, unchanged", () => {
    const dir = tempDir();
    const first = loadKeyMaterial(parseConfig({ INTAKE_DATA_DIR: dir }));
    const before = readFileSync(join(dir, "token_pepper"), "utf8") + readFileSync(join(dir, "secrets_key"), "utf8");
    const second = loadKeyMaterial(parseConfig({ INTAKE_DATA_DIR: dir }));
    expect(second).toEqual(first);
    const after = readFileSync(join(dir, "token_pepper"), "utf8") + readFileSync(join(dir, "secrets_key"), "utf8");
    expect(after).toBe(before);
  });

  test("two data dirs get different material", () => {
    const a = loadKeyMaterial(parseConfig({ INTAKE_DATA_DIR: tempDir() }));
    const b = loadKeyMaterial(parseConfig({ INTAKE_DATA_DIR: tempDir() }));
    expect(a.tokenPepper).not.toBe(b.tokenPepper);
    expect(Buffer.from(a.secretsKey).equals(Buffer.from(b.secretsKey))).toBe(false);
  });

  test("values from the environment win and nothing is written", () => {
    const dir = tempDir();
    const keys = loadKeyMaterial(
      parseConfig({ INTAKE_DATA_DIR: dir, INTAKE_TOKEN_PEPPER: GOOD_PEPPER, INTAKE_SECRETS_KEY: GOOD_KEY }),
    );
    expect(keys.tokenPepper).toBe(GOOD_PEPPER);
    expect(Buffer.from(keys.secretsKey).toString("base64")).toBe(GOOD_KEY);
    expect(existsSync(join(dir, "token_pepper"))).toBe(false);
    expect(existsSync(join(dir, "secrets_key"))).toBe(false);
  });

  test("a corrupt secrets_key file fails with one line naming the file", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "secrets_key"), "short\n", { mode: 0o600 });
    try {
      loadKeyMaterial(parseConfig({ INTAKE_DATA_DIR: dir }));
      throw new Error("expected a ConfigError");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toHaveLength(1);
      expect((error as ConfigError).problems[0]).toContain(join(dir, "secrets_key"));
    }
  });

  test("sqlite::memory: gets random material and writes nothing", () => {
    const dir = tempDir();
    const keys = loadKeyMaterial(parseConfig({ INTAKE_DATA_DIR: dir, DATABASE_URL: "sqlite::memory:" }));
    expect(keys.secretsKey).toHaveLength(32);
    expect(existsSync(join(dir, "token_pepper"))).toBe(false);
  });
});

describe("rate limits", () => {
  test("unset or empty: no limit", () => {
    const config = parseConfig({ INTAKE_RATE_LIMIT_INGEST: "" });
    expect(config.rateLimitApi).toBeNull();
    expect(config.rateLimitIngest).toBeNull();
  });

  test("<n>/<s>s is read as limit and window", () => {
    const config = parseConfig({ INTAKE_RATE_LIMIT_API: "1000/60s", INTAKE_RATE_LIMIT_INGEST: "1/86400s" });
    expect(config.rateLimitApi).toEqual({ limit: 1000, windowSeconds: 60 });
    expect(config.rateLimitIngest).toEqual({ limit: 1, windowSeconds: 86400 });
  });

  test("a bad value is one line naming the variable", () => {
    for (const raw of [
      "1000/60",
      "1000",
      "0/60s",
      "10/0s",
      "10/86401s",
      "1000000001/1s",
      "-1/5s",
      "10/1.5s",
      "ten/60s",
    ]) {
      let error: unknown;
      try {
        parseConfig({ INTAKE_RATE_LIMIT_API: raw });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(1);
      expect(problems[0]).toStartWith("INTAKE_RATE_LIMIT_API must be <requests>/<seconds>s");
      expect(problems[0]).toContain(`(got "${raw}")`);
    }
  });
});

describe("traces (OTEL_*)", () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };

  test("no OTLP endpoint: tracing is off, whatever the other OTEL variables say", () => {
    expect(parseConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_TRACES_SAMPLER: "nonsense" }).tracing).toBeNull();
  });

  test("an endpoint alone: http/protobuf, service intake, parentbased_always_on", () => {
    expect(parseConfig(endpoint).tracing).toEqual({
      protocol: "http/protobuf",
      serviceName: "intake",
      sampler: { kind: "parentbased_always_on", ratio: 1 },
    });
    expect(parseConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" }).tracing).not.toBeNull();
  });

  test("the standard variables are read: protocol (traces' own first), service name, sampler and its ratio", () => {
    const tracing = parseConfig({
      ...endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "intake-eu",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.01",
    }).tracing;
    expect(tracing).toEqual({
      protocol: "http/json",
      serviceName: "intake-eu",
      sampler: { kind: "parentbased_traceidratio", ratio: 0.01 },
    });
  });

  test("grpc, an unknown sampler and a ratio outside 0..1 fail at start naming each variable", () => {
    const problems = problemsOf({
      ...endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_TRACES_SAMPLER: "sometimes",
      OTEL_TRACES_SAMPLER_ARG: "2",
    });
    expect(problems.map((p) => p.split(" ")[0])).toEqual([
      "OTEL_EXPORTER_OTLP_PROTOCOL",
      "OTEL_TRACES_SAMPLER",
      "OTEL_TRACES_SAMPLER_ARG",
    ]);
  });
});

describe("INTAKE_EXPORT_NATS_*", () => {
  test("unset URL: no export, and the other export variables are not read", () => {
    expect(parseConfig({ INTAKE_EXPORT_NATS_MAX_IN_FLIGHT: "0" }).exportNats).toBeNull();
  });

  test("set: the stream defaults to INTAKE, 256 in flight, a 120 s duplicate window", () => {
    expect(parseConfig({ INTAKE_EXPORT_NATS_URL: "nats://a:4222,nats://b:4222" }).exportNats).toEqual({
      url: "nats://a:4222,nats://b:4222",
      stream: "INTAKE",
      maxInFlight: 256,
      duplicateWindowSeconds: 120,
    });
  });

  test("a URL that is not nats:// or tls://, a stream name NATS refuses, an out-of-range window: one line each", () => {
    const problems = problemsOf({
      INTAKE_EXPORT_NATS_URL: "http://nats:4222",
      INTAKE_EXPORT_NATS_STREAM: "in.take",
      INTAKE_EXPORT_NATS_MAX_IN_FLIGHT: "0",
      INTAKE_EXPORT_NATS_DUPLICATE_WINDOW_SECONDS: "5",
    });
    expect(problems.map((p) => p.split(" ")[0])).toEqual([
      "INTAKE_EXPORT_NATS_URL",
      "INTAKE_EXPORT_NATS_STREAM",
      "INTAKE_EXPORT_NATS_MAX_IN_FLIGHT",
      "INTAKE_EXPORT_NATS_DUPLICATE_WINDOW_SECONDS",
    ]);
  });
});
