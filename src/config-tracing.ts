/** The tracing settings: OpenTelemetry's standard variables (SPEC §21, docs/tracing.md). */
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
export function tracingConfig(env: Record<string, string | undefined>, problems: string[]): TracingConfig | null {
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
