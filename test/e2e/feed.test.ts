/**
 * The feed's guarantee with real processes (docs/feed.md): senders ingest at full speed for a
 * few seconds while three readers follow the feed — one paging GET /v1/feed with a small
 * limit, one SSE stream cut and resumed with Last-Event-ID several times (switching
 * instances), one gRPC StreamFeed. Every reader must end with exactly the 202-acknowledged
 * events, each once, and all three in the same order. On two instances sharing PostgreSQL
 * and Redis, and on one instance with a SQLite file.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { EventFeedService } from "../../gen/intake/v1/feed_pb.ts";
import { createDeployment, type Deployment } from "../support/deployment.ts";
import { type IntakeProcess, runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { serviceAvailable } from "../support/services.ts";
import { sign } from "../support/signing.ts";

const INGEST_MS = 3_000;
const SENDERS_PER_INSTANCE = 6;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function until(condition: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await Bun.sleep(20);
  }
}

/** Pages GET /v1/feed with limit=7 (a long poll while running) until stopped and caught up, alternating instances. */
function pager(instances: IntakeProcess[], token: string) {
  const ids: string[] = [];
  let stop = false;
  const done = (async () => {
    let cursor: string | null = null;
    for (let round = 0; ; round++) {
      const finishing = stop;
      const on = instances[round % instances.length] as IntakeProcess;
      // Caught up: the feed's own long poll holds the next page until an event arrives.
      const wait = finishing ? "" : "&wait=1";
      const res = await on.fetch(`/v1/feed?limit=7${wait}${cursor ? `&after=${cursor}` : ""}`, { token });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { data: Array<{ id: string }>; next_cursor: string };
      for (const e of page.data) ids.push(e.id);
      cursor = page.next_cursor;
      if (finishing && page.data.length === 0) return;
    }
  })();
  return {
    ids,
    finish: () => {
      stop = true;
      return done;
    },
  };
}

/** SSE reader that hangs up after every `cutEvery` events and resumes with Last-Event-ID elsewhere. */
function sseReader(instances: IntakeProcess[], token: string, cutEvery: number) {
  const ids: string[] = [];
  let reconnects = 0;
  let stopped = false;
  let lastId: string | null = null;
  const done = (async () => {
    for (let round = 0; !stopped; round++) {
      const on = instances[round % instances.length] as IntakeProcess;
      const abort = new AbortController();
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (lastId) headers["last-event-id"] = lastId;
      const res = await fetch(`${on.base}/v1/feed/stream`, { headers, signal: abort.signal });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      let taken = 0;
      try {
        while (!stopped && taken < cutEvery) {
          const { done: ended, value } = await reader.read();
          if (ended) break;
          buffer += decoder.decode(value, { stream: true });
          for (let cut = buffer.indexOf("\n\n"); cut >= 0 && taken < cutEvery; cut = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            if (!block.includes("event: event")) continue;
            const id = /^id: (.*)$/m.exec(block)?.[1] ?? null;
            const data = /^data: (.*)$/m.exec(block)?.[1] ?? "{}";
            ids.push((JSON.parse(data) as { id: string }).id);
            lastId = id;
            taken++;
          }
        }
      } finally {
        // Hang up mid-stream: whatever was buffered but not taken must come again after resume.
        abort.abort();
        await reader.cancel().catch(() => undefined);
      }
      reconnects++;
    }
  })();
  return {
    ids,
    reconnects: () => reconnects,
    stop: () => {
      stopped = true;
      return done.catch(() => undefined);
    },
  };
}

/** gRPC StreamFeed on one instance's h2c port, from the beginning. */
function grpcReader(instance: IntakeProcess, token: string) {
  const ids: string[] = [];
  const abort = new AbortController();
  const client = createClient(
    EventFeedService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${instance.grpcPort}` }),
  );
  const done = (async () => {
    try {
      for await (const m of client.streamFeed(
        {},
        { headers: { authorization: `Bearer ${token}` }, signal: abort.signal },
      )) {
        ids.push(m.event?.id ?? "");
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  return {
    ids,
    stop: () => {
      abort.abort();
      return done;
    },
  };
}

/** Signed senders on every instance, at full speed, for INGEST_MS; the 202-acknowledged ids. */
async function ingestHard(instances: IntakeProcess[], service: { id: string; secret: string }) {
  const acknowledged: string[] = [];
  const failures: string[] = [];
  const until = Date.now() + INGEST_MS;
  let n = 0;
  await Promise.all(
    instances.flatMap((on) =>
      Array.from({ length: SENDERS_PER_INSTANCE }, async () => {
        while (Date.now() < until) {
          const body = JSON.stringify({ n: n++, pad: "x".repeat(200) });
          const res = await on.fetch(`/v1/ingest/${service.id}`, {
            method: "POST",
            body,
            headers: { "x-service-signature": sign(service.secret, body, Date.now()) },
          });
          if (res.status === 202) acknowledged.push(((await res.json()) as { id: string }).id);
          else failures.push(`${res.status} ${await res.text()}`);
        }
      }),
    ),
  );
  expect(failures).toEqual([]);
  return acknowledged;
}

async function runScenario(instances: IntakeProcess[], owner: string) {
  const created = await (instances[0] as IntakeProcess).fetch("/v1/services", {
    method: "POST",
    token: owner,
    body: JSON.stringify({ service_name: "busy" }),
    headers: { "content-type": "application/json" },
  });
  expect(created.status).toBe(201);
  const { id, signing_secret } = (await created.json()) as { id: string; signing_secret: string };
  const service = { id, secret: signing_secret };

  const paging = pager(instances, owner);
  // Cut every 29 events: with the 100+ acknowledged below, at least three resumes.
  const sse = sseReader([...instances].reverse(), owner, 29);
  const grpc = grpcReader(instances[instances.length - 1] as IntakeProcess, owner);

  const acknowledged = await ingestHard(instances, service);
  expect(acknowledged.length).toBeGreaterThan(100);

  const total = acknowledged.length;
  const state = () =>
    `acknowledged ${total}, pager ${paging.ids.length}, sse ${sse.ids.length}, grpc ${grpc.ids.length}`;
  await until(() => sse.ids.length >= total && grpc.ids.length >= total, 30_000, state);
  await paging.finish();
  await sse.stop();
  await grpc.stop();
  expect(sse.reconnects()).toBeGreaterThanOrEqual(3);
  for (const [name, ids] of [
    ["pager", paging.ids],
    ["sse", sse.ids],
    ["grpc", grpc.ids],
  ] as const) {
    expect({ name, unique: new Set(ids).size }).toEqual({ name, unique: ids.length });
    expect({ name, same: new Set(ids) }).toEqual({ name, same: new Set(acknowledged) });
  }
  expect(sse.ids).toEqual(paging.ids);
  expect(grpc.ids).toEqual(paging.ids);
}

afterAll(() => stopAll(), 30_000);

const pgOk = (await serviceAvailable("postgres")) && (await serviceAvailable("redis"));

describe.skipIf(!pgOk)("the feed on two instances sharing PostgreSQL and Redis", () => {
  let deployment: Deployment | undefined;
  afterAll(() => deployment?.close(), 30_000);

  test("every reader gets exactly the acknowledged events, once each, all in one order", async () => {
    deployment = await createDeployment({ tenantName: "Feed" });
    const [portA, portB] = [await freePort(), await freePort()];
    const instances = await Promise.all([
      deployment.start("A", { INTAKE_GRPC_PORT: String(portA) }),
      deployment.start("B", { INTAKE_GRPC_PORT: String(portB) }),
    ]);
    await runScenario(instances, deployment.owner.token);
  }, 90_000);
});

describe("the feed on one instance with a SQLite file", () => {
  const dir = mkdtempSync(join(tmpdir(), "intake-feed-e2e-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("every reader gets exactly the acknowledged events, once each, all in one order", async () => {
    const env = { INTAKE_DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}` };
    const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Feed", "--create", "--json"], env)) as {
      token: string;
    };
    const instance = await startIntake("S", { ...env, INTAKE_GRPC_PORT: String(await freePort()) });
    try {
      await runScenario([instance], boot.token);
    } finally {
      await stopAll();
    }
  }, 90_000);
});
