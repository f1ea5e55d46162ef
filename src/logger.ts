/**
 * JSON-lines logger. Callers pass only non-secret fields; tokens, signing secrets, peppers
 * and keys are never handed to it (test/logging.test.ts captures the log of a whole session
 * of calls and checks).
 */
export type LogFields = Record<string, unknown>;

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /**
   * One access-log line (INTAKE_ACCESS_LOG, docs/operations.md). Written whatever the level:
   * the access log has its own switch, and the caller only calls this when it is on.
   */
  access(fields: LogFields): void;
}

export type LogSink = (line: string) => void;

const stdoutSink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

function describe(value: unknown): unknown {
  if (value instanceof Error) {
    // The name and message of an internal error, never a stack with request data.
    return {
      name: value.name,
      message: value.message,
      cause: value.cause === undefined ? undefined : describe(value.cause),
    };
  }
  return value;
}

export interface LoggerOptions {
  /** INTAKE_LOG_LEVEL: lines below it are dropped before anything is built (default info). */
  level?: LogLevel;
}

const noop = () => {};

export function createLogger(sink: LogSink = stdoutSink, options: LoggerOptions = {}): Logger {
  const threshold = LOG_LEVELS.indexOf(options.level ?? "info");
  const write = (level: string, message: string, fields?: LogFields) => {
    const entry: LogFields = { time: new Date().toISOString(), level, msg: message };
    if (fields) for (const [k, v] of Object.entries(fields)) entry[k] = describe(v);
    sink(JSON.stringify(entry));
  };
  const at = (level: LogLevel) =>
    LOG_LEVELS.indexOf(level) >= threshold ? (m: string, f?: LogFields) => write(level, m, f) : noop;
  return {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    access: (fields) => write("info", "access", fields),
  };
}

/** For tests that do not look at the log. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, access() {} };
