/**
 * Background signed ingest at a steady rate (bench scenario 9), held by a child process
 * (bench/paced-ingest.ts) like the stalled readers: sending from the bench's own process would
 * delay the clock that times each delivery.
 */
import { spawnReady } from "./procs.ts";

export interface PacedResult {
  sent: number;
  accepted: number;
  seconds: number;
}

/** Starts sending `rate` events/s from the pool file to `url`; resolves once sending, with a stopper. */
export async function pacedIngest(url: string, poolFile: string, rate: number): Promise<() => Promise<PacedResult>> {
  const { child, stdout } = await spawnReady("bench/paced-ingest.ts", {
    PACE_URL: url,
    PACE_POOL: poolFile,
    PACE_RATE: String(rate),
  });
  const decoder = new TextDecoder();
  return async () => {
    child.kill("SIGTERM");
    let out = "";
    for (;;) {
      const { done, value: chunk } = await stdout.read();
      if (done) break;
      out += decoder.decode(chunk, { stream: true });
    }
    await child.exited;
    const line = out.trim().split("\n").pop() ?? "";
    if (!line.startsWith("{")) throw new Error(`paced ingest ended without its tally: ${out}`);
    return JSON.parse(line) as PacedResult;
  };
}
