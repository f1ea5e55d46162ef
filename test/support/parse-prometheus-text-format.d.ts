/** Types for the parts of parse-prometheus-text-format the tests read (the package ships none). */
declare module "parse-prometheus-text-format" {
  export interface Sample {
    labels?: Record<string, string>;
    value?: string;
    /** Histograms: cumulative count by `le`. */
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface Family {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: Sample[];
  }
  // biome-ignore lint/style/noDefaultExport: the package's own export is a default one
  export default function parsePrometheusTextFormat(text: string): Family[];
}
