/**
 * Feed scenarios' clients (bench/run.ts 8–10): a paging reader, a live-latency probe and
 * stalled stream readers. They run in the bench process, so the same client cost falls on
 * Intake and on its floor.
 */
import { connect } from "node:net";
import { createIdGenerator } from "../../src/domain/ids.ts";
import type { NewEvent } from "../../src/domain/ports/store.ts";
import { createPostgresStore } from "../../src/store/postgres/store.ts";
import { createSqliteStore } from "../../src/store/sqlite/store.ts";
import { eventBody, signatureHeader } from "./pool.ts";
import { vacuumEvents } from "./postgres.ts";
import { spawnReady } from "./procs.ts";
import type { Sample } from "./report.ts";

/** Pages `GET <url>/v1/feed?limit=<limit>` for `durationS` with `readers` sequential clients; events/s as `rps`. */
export async function pageFeed(
  url: string,
  token: string | null,
  limit: number,
  readers: number,
  durationS: number,
): Promise<Sample> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const until = performance.now() + durationS * 1000;
  const latencies: number[] = [];
  let events = 0;
  let non2xx = 0;
  await Promise.all(
    Array.from({ length: readers }, async () => {
      let cursor = "";
      while (performance.now() < until) {
        const started = performance.now();
        const res = await fetch(`${url}/v1/feed?limit=${limit}${cursor ? `&after=${cursor}` : ""}`, { headers });
        const text = await res.text();
        latencies.push(performance.now() - started);
        if (res.status !== 200) {
          non2xx++;
          continue;
        }
        let n = 0;
        for (let at = text.indexOf('{"id":"evt_'); at >= 0; at = text.indexOf('{"id":"evt_', at + 1)) n++;
        events += n;
        // At the end of the feed, start over: the measurement is reading, not waiting.
        const next = /"next_cursor":"([^"]*)"}$/.exec(text)?.[1] ?? "";
        cursor = n < limit ? "" : next;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0) * 1000;
  return {
    rps: events / durationS,
    p50Us: pick(0.5),
    p99Us: pick(0.99),
    requests: latencies.length,
    non2xx,
    socketErrors: 0,
    timeouts: 0,
  };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/**
 * Live delivery latency: an SSE reader on `readerUrl` (from the current end) while one sender
 * posts `count` 1 KiB events to `senderUrl`, `intervalMs` apart. Latency = the event reaching
 * the reader minus its 202 reaching the sender (≈ commit; one clock, the bench process's);
 * an event that arrives before its 202 counts as 0.
 */
export async function liveLatency(opts: {
  senderUrl: string;
  readerUrl: string;
  token: string;
  service: { id: string; secret: string };
  count: number;
  intervalMs: number;
}): Promise<{ p50Ms: number; p99Ms: number; delivered: number; failed: number }> {
  const arrived = new Map<string, number>();
  const acked = new Map<string, number>();
  const abort = new AbortController();
  const res = await fetch(`${opts.readerUrl}/v1/feed/stream?start=latest`, {
    headers: { authorization: `Bearer ${opts.token}` },
    signal: abort.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`feed stream answered ${res.status}`);
  const reader = res.body.getReader();
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const now = performance.now();
        buffer += decoder.decode(value, { stream: true });
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          opened();
          const id = /"id":"(evt_[0-9a-f]{32})"/.exec(block)?.[1];
          if (id && block.includes("event: event")) arrived.set(id, now);
        }
      }
    } catch {
      // aborted
    }
  })();
  await open;
  let failed = 0;
  for (let i = 0; i < opts.count; i++) {
    const body = eventBody(i);
    const post = await fetch(`${opts.senderUrl}/v1/ingest/${opts.service.id}`, {
      method: "POST",
      body,
      headers: { "x-service-signature": signatureHeader(opts.service.secret, body, Math.floor(Date.now() / 1000)) },
    });
    const now = performance.now();
    if (post.status === 202) acked.set(((await post.json()) as { id: string }).id, now);
    else failed++;
    await Bun.sleep(opts.intervalMs);
  }
  const deadline = performance.now() + 10_000;
  while ([...acked.keys()].some((id) => !arrived.has(id)) && performance.now() < deadline) await Bun.sleep(10);
  abort.abort();
  await reading;
  const latencies = [...acked].map(([id, at]) => Math.max(0, (arrived.get(id) ?? Number.POSITIVE_INFINITY) - at));
  latencies.sort((a, b) => a - b);
  const delivered = [...acked.keys()].filter((id) => arrived.has(id)).length;
  return {
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    delivered,
    failed: failed + acked.size - delivered,
  };
}

/**
 * `count` SSE readers that send their request and then never read, held by a child process
 * (bench/stalled-readers.ts): paused sockets in the bench's own process would slow its
 * measuring clients. Resolves once every request is sent, with a closer.
 */
export async function stalledReaders(url: string, token: string, count: number): Promise<() => Promise<void>> {
  const { child } = await spawnReady("bench/stalled-readers.ts", {
    STALL_URL: url,
    STALL_TOKEN: token,
    STALL_COUNT: String(count),
  });
  return async () => {
    child.kill("SIGTERM");
    await child.exited;
  };
}

/** Whether something listens on 127.0.0.1:`port` (Redis for scenario 9). */
export function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * `count` 1 KiB events for one service, written through the store port (what ingest's group
 * commit writes, positions included) in batches of 1,000; returns the seconds it took.
 * `database` is a SQLite file or a `postgres://` URL (then `vacuumEvents`).
 */
export async function seedFeed(database: string, tenantId: string, serviceId: string, count: number): Promise<number> {
  const started = performance.now();
  const postgres = database.startsWith("postgres://") || database.startsWith("postgresql://");
  const store = postgres ? createPostgresStore({ url: database, max: 1 }) : createSqliteStore({ path: database });
  await store.migrate();
  const newId = createIdGenerator();
  const now = Date.now();
  try {
    for (let done = 0; done < count; done += 1_000) {
      const batch: NewEvent[] = Array.from({ length: Math.min(1_000, count - done) }, (_, i) => ({
        id: newId(),
        tenantId,
        serviceId,
        receivedAt: now,
        idempotencyKey: null,
        payload: new TextEncoder().encode(eventBody(done + i)),
      }));
      await store.events.insertBatch(batch);
    }
  } finally {
    await store.close();
  }
  if (postgres) await vacuumEvents(database);
  return (performance.now() - started) / 1000;
}
