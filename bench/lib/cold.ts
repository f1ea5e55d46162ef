/**
 * Cold-cache auth: each request carries a token this process has not seen yet, so every one
 * takes the miss path (HMAC, cache miss, store lookup by digest, tenant lookup). wrk runs for
 * a duration and would wrap around a finite token list into warm hits, so this client sends
 * each token exactly once, `concurrency` at a time, over keep-alive connections.
 */
export interface ColdResult {
  requests: number;
  rps: number;
  p50Us: number;
  p99Us: number;
  non2xx: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export async function coldRun(opts: {
  url: string;
  tokens: string[];
  concurrency: number;
  timeoutMs: number;
}): Promise<ColdResult> {
  const latencies: number[] = [];
  let non2xx = 0;
  let next = 0;
  const deadline = Date.now() + opts.timeoutMs;
  const worker = async () => {
    // Bounded by the token list and by the deadline.
    while (next < opts.tokens.length && Date.now() < deadline) {
      const token = opts.tokens[next++] as string;
      const started = performance.now();
      const res = await fetch(opts.url, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      latencies.push((performance.now() - started) * 1000);
      if (res.status < 200 || res.status > 299) non2xx++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: latencies.length / seconds,
    p50Us: percentile(latencies, 50),
    p99Us: percentile(latencies, 99),
    non2xx,
  };
}
