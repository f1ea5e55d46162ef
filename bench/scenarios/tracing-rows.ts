/**
 * The tracing rows of scenarios 2 and 3 (SPEC §21, docs/tracing.md, bench/README.md): Intake
 * with tracing unset against the absent code path (a copy without the hooks,
 * bench/lib/absent-tracing.ts; goal ≥ 0.98×), on at sampler ratio 0.01 against unset (≥ 0.95×),
 * and on at 1.0 against unset (the cost, reported). Each variant is an Intake of its own
 * (bootstrapped on its own data: GET /v1/tenant and signed ingest do not depend on what else is
 * stored), measured side by side as the scenario's other variant pairs. Traces go over
 * OTLP/HTTP protobuf to a sink in the harness process that answers every export and keeps
 * nothing.
 */
import { join } from "node:path";
import { absentTracingCheckout } from "../lib/absent-tracing.ts";
import type { Harness, Target } from "../lib/harness.ts";
import { bootstrap, type IntakeSpec, type RunningIntake } from "../lib/intake.ts";
import { writePool } from "../lib/pool.ts";
import type { Series } from "../lib/report.ts";

const UNSET = "tracing unset";
const RATIO = (ratio: string) => ({
  OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
  OTEL_TRACES_SAMPLER_ARG: ratio,
});

export async function tracingRows(h: Harness, scenario: 2 | 3): Promise<void> {
  const { rows, log, spec, start, stopIntake, sideBySide, besideRow, serviceOf } = h;
  const what = scenario === 2 ? "GET /v1/tenant" : "signed ingest, group commit";
  const absent = absentTracingCheckout(h.workDir);
  if ("refused" in absent) {
    log(`  SKIPPED (tracing rows): ${absent.refused}`);
    rows.push({
      scenario,
      title: `… tracing unset vs the absent code path, ${what}`,
      goal: "≥ 0.98×",
      measured: absent.refused,
      status: "skipped",
    });
    return;
  }
  const sink = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(new Uint8Array()) });
  const on = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
  };
  const base: Record<string, string> = scenario === 3 ? { INTAKE_INGEST_COMMIT: "group" } : {};
  const variants: Array<[string, IntakeSpec]> = [
    [UNSET, spec(`tracing-unset-${scenario}`, base)],
    ["the absent code path", { ...spec(`tracing-absent-${scenario}`, base), checkout: absent.root }],
    ["tracing on, ratio 0.01", spec(`tracing-001-${scenario}`, { ...base, ...on, ...RATIO("0.01") })],
    ["tracing on, ratio 1.0", spec(`tracing-1-${scenario}`, { ...base, ...on, ...RATIO("1.0") })],
  ];
  const running: RunningIntake[] = [];
  try {
    const targets = new Map<string, (beside: string) => Target>();
    for (const [name, s] of variants) {
      const boot = await bootstrap(s);
      if (scenario === 2) {
        const intake = await start(s);
        running.push(intake);
        targets.set(name, (beside) =>
          h.bearerGet(`${what}, ${name}, beside ${beside}`, `${intake.url}/v1/tenant`, boot.token),
        );
      } else {
        const svc = await serviceOf(s, boot, "bench-tracing");
        const pool = join(h.workDir, `${s.name}.pool`);
        writePool(pool, `/v1/ingest/${svc.id}`, svc.secret, h.settings.poolSize);
        const intake = await start(s);
        running.push(intake);
        targets.set(name, (beside) => h.ingestTarget(`${what}, ${name}, beside ${beside}`, intake.url, pool));
      }
    }
    const t = (name: string, beside: string) => (targets.get(name) as (b: string) => Target)(beside);
    const pairs: Array<[Target, Target]> = [
      [t(UNSET, "the absent code path"), t("the absent code path", UNSET)],
      [t("tracing on, ratio 0.01", UNSET), t(UNSET, "ratio 0.01")],
      [t("tracing on, ratio 1.0", UNSET), t(UNSET, "ratio 1.0")],
    ];
    log(`  tracing rows (${what}): unset vs absent, ratio 0.01 and 1.0 vs unset`);
    const plan = scenario === 2 ? h.pairPlan : h.ingestPairPlan;
    const run = () => sideBySide(scenario, pairs, plan);
    const series = (await (scenario === 2
      ? h.pinned(
          running.map((r) => r.pid),
          run,
        )
      : run())) as Array<[Series, Series]>;
    const [[unset, absentSeries], [low, unsetLow], [full, unsetFull]] = series as [
      [Series, Series],
      [Series, Series],
      [Series, Series],
    ];
    rows.push(
      besideRow(
        scenario,
        `… tracing unset vs the absent code path (bench/lib/absent-tracing.ts), ${what}`,
        0.98,
        unset,
        absentSeries,
      ),
    );
    rows.push(besideRow(scenario, `… tracing on, sampler ratio 0.01 vs unset, ${what}`, 0.95, low, unsetLow));
    const cost = besideRow(
      scenario,
      `… tracing on, sampler ratio 1.0 vs unset, ${what} (the cost)`,
      0,
      full,
      unsetFull,
    );
    rows.push({ ...cost, goal: "(reported)", status: "reported" });
  } finally {
    for (const intake of running) await stopIntake(intake);
    sink.stop(true);
  }
}
