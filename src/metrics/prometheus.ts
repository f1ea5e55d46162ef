/**
 * The Prometheus adapter of the Observer port (docs/operations.md): the only module that
 * imports prom-client.
 *
 * prom-client provides the registry, the text exposition (names, HELP/TYPE, label escaping)
 * and the gauges read at scrape time. The series recorded on every request are kept here as
 * pre-resolved cells instead of prom-client Counters/Histograms: prom-client hashes and
 * validates the label set on every `inc`/`observe`, children from `labels()` included, and a
 * request records several of them on the hottest paths (bench scenarios 2 and 3;
 * docs/operations.md, "Cost"). A cell is found through a Map per label and updated in place;
 * the registry turns the cells into the exposition only when /metrics is scraped.
 */
import { readdirSync } from "node:fs";
import { Counter, Gauge, type Metric, Registry } from "prom-client";
import { SEVERITIES, type Severity, STREAM_CHANGES } from "../domain/incident-types.ts";
import type {
  CacheLookupResult,
  IngestOutcome,
  Observer,
  RateLimitPolicy,
  SignatureFailureReason,
} from "../domain/ports/observer.ts";

/**
 * Request durations: from an authenticated GET answered from the cache (sub-millisecond, bench
 * scenario 2) to a signed ingest waiting for its group commit (bench scenario 3), and slow outliers.
 */
export const REQUEST_SECONDS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** One commit (one fsync on SQLite, one round trip on PostgreSQL), and an overloaded store's slower ones. */
export const COMMIT_SECONDS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Events per commit: powers of two up to the group committer's cap of 256. */
export const BATCH_SIZES = [1, 2, 4, 8, 16, 32, 64, 128, 256];

const INGEST_OUTCOMES: readonly IngestOutcome[] = [
  "accepted",
  "duplicate",
  "invalid_signature",
  "paused",
  "invalid_request",
  "payload_too_large",
  "rate_limited",
  "unavailable",
  "internal_error",
];
const SIGNATURE_FAILURES: readonly SignatureFailureReason[] = [
  "unknown_service",
  "malformed_signature_header",
  "timestamp_outside_tolerance",
  "no_matching_signature",
];
const CACHE_RESULTS: readonly CacheLookupResult[] = ["hit", "negative_hit", "shared_hit", "miss"];
const POLICIES: readonly RateLimitPolicy[] = ["api", "ingest", "feed"];
/** Any other method a client sends is counted as `other`: the method is input, its label a closed set. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/**
 * The edges pass route templates from the code, a few dozen; past this bound a route is
 * counted as `unmatched`, so a bug that passed raw paths could not grow the series without end.
 */
const MAX_ROUTES = 512;

type Labels = Record<string, string>;

interface CounterCell {
  readonly labels: Labels;
  value: number;
}

interface HistogramCell {
  readonly labels: Labels;
  /** Per bucket (not cumulative), the last one is +Inf. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** What prom-client's Registry reads of a metric: its name, type and `get()`. */
interface ExposedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  get(): Promise<{
    name: string;
    help: string;
    type: string;
    values: Array<{ labels: Labels; value: number; metricName?: string }>;
    aggregator: "sum";
  }>;
}

class CellCounter implements ExposedMetric {
  readonly type = "counter";
  private readonly cells: CounterCell[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  cell(labels: Labels): CounterCell {
    const made = { labels, value: 0 };
    this.cells.push(made);
    return made;
  }

  async get() {
    const values = this.cells.map((c) => ({ labels: c.labels, value: c.value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: "sum" as const };
  }
}

class CellHistogram implements ExposedMetric {
  readonly type = "histogram";
  private readonly cells: HistogramCell[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  cell(labels: Labels): HistogramCell {
    const made = { labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.cells.push(made);
    return made;
  }

  observe(cell: HistogramCell, value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    cell.counts[i] = (cell.counts[i] as number) + 1;
    cell.sum += value;
    cell.count += 1;
  }

  async get() {
    const values: Array<{ labels: Labels; value: number; metricName: string }> = [];
    for (const cell of this.cells) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += cell.counts[i] as number;
        const le = i < this.bounds.length ? String(this.bounds[i]) : "+Inf";
        values.push({ metricName: `${this.name}_bucket`, labels: { ...cell.labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: cell.labels, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels: cell.labels, value: cell.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: "sum" as const };
  }
}

function register(registry: Registry, metric: ExposedMetric): void {
  // The Registry formats any object with name, type and get() (it is typed as its own classes).
  registry.registerMetric(metric as unknown as Metric);
}

/** A cell per value of a closed label set, all present (at 0) from the start so rate() works at once. */
function closedSet<K extends string>(counter: CellCounter, label: string, keys: readonly K[]): Map<K, CounterCell> {
  return new Map(keys.map((k) => [k, counter.cell({ [label]: k })]));
}

/** process_* series in the Prometheus client conventions, read at scrape time only. */
function processMetrics(registry: Registry): void {
  const registers = [registry];
  // Each counter reads the CPU time itself: the Registry collects all metrics at once, so one
  // collect setting the others would show them a scrape late.
  const cpu = (name: string, help: string, seconds: (usage: NodeJS.CpuUsage) => number) => {
    let counted = 0;
    new Counter({
      name,
      help,
      registers,
      collect() {
        const now = seconds(process.cpuUsage()) / 1e6;
        if (now > counted) this.inc(now - counted);
        counted = Math.max(counted, now);
      },
    });
  };
  cpu("process_cpu_user_seconds_total", "User CPU time spent, in seconds.", (u) => u.user);
  cpu("process_cpu_system_seconds_total", "System CPU time spent, in seconds.", (u) => u.system);
  cpu("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", (u) => u.user + u.system);
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size, in bytes.",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: "process_heap_used_bytes",
    help: "JavaScript heap in use, in bytes.",
    registers,
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
  new Gauge({
    name: "process_heap_total_bytes",
    help: "JavaScript heap size, in bytes.",
    registers,
    collect() {
      this.set(process.memoryUsage().heapTotal);
    },
  });
  new Gauge({ name: "process_start_time_seconds", help: "Start time of the process, in Unix seconds.", registers }).set(
    Math.round((Date.now() - process.uptime() * 1000) / 1000),
  );
  if (process.platform === "linux") {
    new Gauge({
      name: "process_open_fds",
      help: "Open file descriptors.",
      registers,
      collect() {
        try {
          this.set(readdirSync("/proc/self/fd").length);
        } catch {
          // /proc unreadable: the series keeps its last value.
        }
      },
    });
  }
}

export interface PrometheusMetrics {
  /** What the domain and the edges report to. */
  readonly observer: Observer;
  /** Where `intake_incidents_open{severity}` is read from at each scrape (the store's countOpen). */
  readIncidentsOpenFrom(read: () => Promise<Record<Severity, number>>): void;
  /** The Content-Type of the exposition (text format 0.0.4). */
  readonly contentType: string;
  /** The text exposition of every series, for GET /metrics. */
  exposition(): Promise<string>;
}

/** One registry per app: two apps in one process (as the tests run them) share no series. */
export function createPrometheusMetrics(options: { version: string }): PrometheusMetrics {
  const registry = new Registry();

  const requests = new CellCounter(
    "intake_http_requests_total",
    "HTTP requests answered, by route template, method and status.",
  );
  const durations = new CellHistogram(
    "intake_http_request_duration_seconds",
    "Time from a request's arrival to its response headers, less the time a long poll held its answer waiting for an event, by route template and method.",
    REQUEST_SECONDS,
  );
  const ingestEvents = new CellCounter("intake_ingest_events_total", "Ingest attempts, by outcome.");
  const signatureFailures = new CellCounter(
    "intake_ingest_signature_failures_total",
    "Ingest 401 invalid_signature answers, by the server-side reason (never sent to the sender).",
  );
  const batchSize = new CellHistogram(
    "intake_ingest_commit_batch_size",
    "Events per committed ingest transaction (group commit).",
    BATCH_SIZES,
  );
  const commitSeconds = new CellHistogram(
    "intake_ingest_commit_duration_seconds",
    "Wall time of one committed ingest transaction.",
    COMMIT_SECONDS,
  );
  const cacheLookups = new CellCounter(
    "intake_cache_lookups_total",
    "Cache lookups, by namespace and where they were answered (hit, negative_hit, shared_hit, miss).",
  );
  const rateLimited = new CellCounter("intake_rate_limited_total", "Requests refused with 429, by policy.");
  const limiterFallback = new CellCounter(
    "intake_rate_limiter_fallback_total",
    "Rate-limit decisions taken in process because the shared limiter (Redis) was unreachable, by policy.",
  );
  const incidentChanges = new CellCounter(
    "intake_incident_changes_total",
    "Committed incident changes (opened, acknowledged, resolved, severity_raised), by change.",
  );
  for (const metric of [
    incidentChanges,
    requests,
    durations,
    ingestEvents,
    signatureFailures,
    batchSize,
    commitSeconds,
    cacheLookups,
    rateLimited,
    limiterFallback,
  ]) {
    register(registry, metric);
  }
  const exportPublished = new CellCounter(
    "intake_export_published_total",
    "Messages the export's stream acknowledged, by result (stored, duplicate: it already held the id).",
  );
  register(registry, exportPublished);
  const exportLag = new Gauge({
    name: "intake_export_lag_events",
    help: "Feed positions (events and incident changes) committed and not yet acknowledged by the export's stream; set by the exporting instance.",
    registers: [registry],
  });
  const feedStreams = new Gauge({
    name: "intake_feed_streams",
    help: "Live feed streams (SSE and StreamFeed).",
    registers: [registry],
  });
  new Gauge({
    name: "intake_build_info",
    help: "The running version; always 1.",
    labelNames: ["version"],
    registers: [registry],
  }).set({ version: options.version }, 1);
  processMetrics(registry);

  const outcomeCells = closedSet(ingestEvents, "outcome", INGEST_OUTCOMES);
  const reasonCells = closedSet(signatureFailures, "reason", SIGNATURE_FAILURES);
  const limitedCells = closedSet(rateLimited, "policy", POLICIES);
  const fallbackCells = closedSet(limiterFallback, "policy", POLICIES);
  const changeCells = closedSet(incidentChanges, "change", STREAM_CHANGES);
  // Read from the store at scrape time (deployment-wide); set once the store is open.
  let readOpenIncidents: (() => Promise<Record<Severity, number>>) | null = null;
  new Gauge({
    name: "intake_incidents_open",
    help: "Open (triggered or acknowledged) incidents across the deployment, by severity, read at scrape time.",
    labelNames: ["severity"],
    registers: [registry],
    async collect() {
      if (readOpenIncidents === null) return;
      // A store that cannot answer leaves the last values: the scrape itself still succeeds.
      const counts = await readOpenIncidents().catch(() => null);
      if (counts === null) return;
      for (const severity of SEVERITIES) this.set({ severity }, counts[severity]);
    },
  });
  const publishedCells = closedSet(exportPublished, "result", ["stored", "duplicate"] as const);
  const batchCell = batchSize.cell({});
  const commitCell = commitSeconds.cell({});
  const cacheCells = new Map<string, Record<CacheLookupResult, CounterCell>>();
  /** A namespace's four series, made together on its first lookup (so all four are exposed from then on). */
  function lookupCells(namespace: string): Record<CacheLookupResult, CounterCell> {
    let cells = cacheCells.get(namespace);
    if (cells === undefined) {
      const made = Object.fromEntries(CACHE_RESULTS.map((r) => [r, cacheLookups.cell({ namespace, result: r })]));
      cells = made as Record<CacheLookupResult, CounterCell>;
      cacheCells.set(namespace, cells);
    }
    return cells;
  }

  interface MethodCells {
    duration: HistogramCell;
    statuses: Map<number, CounterCell>;
  }
  const routes = new Map<string, Map<string, MethodCells>>();

  function methodCells(route: string, method: string): MethodCells {
    let byMethod = routes.get(route);
    if (byMethod === undefined) {
      if (routes.size >= MAX_ROUTES) return methodCells("unmatched", method);
      byMethod = new Map();
      routes.set(route, byMethod);
    }
    let cells = byMethod.get(method);
    if (cells === undefined) {
      const label = METHODS.has(method) ? method : "other";
      if (label !== method) return methodCells(route, label);
      cells = { duration: durations.cell({ route, method }), statuses: new Map() };
      byMethod.set(method, cells);
    }
    return cells;
  }

  function statusCell(cells: MethodCells, status: number): CounterCell {
    let counter = cells.statuses.get(status);
    if (counter === undefined) {
      const { route: r, method: m } = cells.duration.labels;
      counter = requests.cell({ route: r as string, method: m as string, status: String(status) });
      cells.statuses.set(status, counter);
    }
    return counter;
  }

  const observer: Observer = {
    httpRequest(route, method, status, durationSeconds) {
      const cells = methodCells(route, method);
      statusCell(cells, status).value += 1;
      durations.observe(cells.duration, durationSeconds);
    },
    ingestOutcome(outcome) {
      const cell = outcomeCells.get(outcome);
      if (cell) cell.value += 1;
    },
    signatureFailure(reason) {
      const cell = reasonCells.get(reason);
      if (cell) cell.value += 1;
    },
    commitBatch(size, durationSeconds) {
      batchSize.observe(batchCell, size);
      commitSeconds.observe(commitCell, durationSeconds);
    },
    cacheLookups(namespace) {
      let cells: Record<CacheLookupResult, CounterCell> | undefined;
      const counter = (result: CacheLookupResult) => () => {
        cells ??= lookupCells(namespace);
        cells[result].value += 1;
      };
      return {
        hit: counter("hit"),
        negative_hit: counter("negative_hit"),
        shared_hit: counter("shared_hit"),
        miss: counter("miss"),
      };
    },
    feedStreams(delta) {
      feedStreams.inc(delta);
    },
    rateLimited(policy) {
      const cell = limitedCells.get(policy);
      if (cell) cell.value += 1;
    },
    rateLimiterFallback(policy) {
      const cell = fallbackCells.get(policy);
      if (cell) cell.value += 1;
    },
    incidentChange(change) {
      const cell = changeCells.get(change);
      if (cell) cell.value += 1;
    },
    exportPublished(result) {
      const cell = publishedCells.get(result);
      if (cell) cell.value += 1;
    },
    exportLag(positions) {
      exportLag.set(positions);
    },
  };

  return {
    observer,
    readIncidentsOpenFrom(read) {
      readOpenIncidents = read;
    },
    contentType: registry.contentType,
    exposition: () => registry.metrics(),
  };
}
