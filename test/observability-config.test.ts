/** INTAKE_METRICS, INTAKE_ACCESS_LOG and INTAKE_LOG_LEVEL (docs/operations.md, README). */
import { describe, expect, test } from "bun:test";
import { ConfigError, type Env, parseConfig } from "../src/config.ts";
import { createLogger } from "../src/logger.ts";

function problemsOf(env: Env): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("configuration", () => {
  test("defaults: metrics on, access log off, log level info", () => {
    expect(parseConfig({})).toMatchObject({ metrics: true, accessLog: false, logLevel: "info" });
  });

  test("valid values are taken", () => {
    expect(
      parseConfig({ INTAKE_METRICS: "false", INTAKE_ACCESS_LOG: "true", INTAKE_LOG_LEVEL: "debug" }),
    ).toMatchObject({ metrics: false, accessLog: true, logLevel: "debug" });
  });

  test("a bad value is one line naming the variable", () => {
    expect(problemsOf({ INTAKE_METRICS: "yes", INTAKE_ACCESS_LOG: "1", INTAKE_LOG_LEVEL: "verbose" })).toEqual([
      'INTAKE_LOG_LEVEL must be one of debug, info, warn, error (got "verbose")',
      'INTAKE_METRICS must be true or false (got "yes")',
      'INTAKE_ACCESS_LOG must be true or false (got "1")',
    ]);
  });
});

describe("logger levels", () => {
  const levels = (level: "debug" | "info" | "warn" | "error") => {
    const lines: string[] = [];
    const logger = createLogger((l) => lines.push(l), { level });
    logger.debug("d");
    logger.info("i");
    logger.warn("w");
    logger.error("e");
    logger.access({ route: "/v1/tenant" });
    return lines.map((l) => JSON.parse(l).msg);
  };

  test("each level writes itself and the levels above it", () => {
    expect(levels("debug")).toEqual(["d", "i", "w", "e", "access"]);
    expect(levels("info")).toEqual(["i", "w", "e", "access"]);
    expect(levels("warn")).toEqual(["w", "e", "access"]);
    // The access log has its own switch: a quiet level does not silence it.
    expect(levels("error")).toEqual(["e", "access"]);
  });

  test("the default level is info", () => {
    const lines: string[] = [];
    const logger = createLogger((l) => lines.push(l));
    logger.debug("d");
    logger.info("i");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["i"]);
  });
});
