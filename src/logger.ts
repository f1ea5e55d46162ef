/**
 * JSON-lines logger. Callers pass only non-secret fields; tokens, signing secrets, peppers
 * and keys are never handed to it (test/logging.test.ts captures the log of a whole session
 * of calls and checks).
 */
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
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

export function createLogger(sink: LogSink = stdoutSink): Logger {
  const write = (level: string, message: string, fields?: LogFields) => {
    const entry: LogFields = { time: new Date().toISOString(), level, msg: message };
    if (fields) for (const [k, v] of Object.entries(fields)) entry[k] = describe(v);
    sink(JSON.stringify(entry));
  };
  return {
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

/** For tests that do not look at the log. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
