/**
 * Scenario 14's floor: what publishing the feed onto JetStream costs this machine when nothing
 * but a bare publisher does it. It starts a `nats-server -js` of its own (a free port, a store
 * directory under the temp dir; the shared one stays untouched), creates a stream as Intake
 * does (file storage, subjects `intake.>`, a duplicate window), and publishes N messages of the
 * size the export sends for a 1 KiB event (the §10 event object around a 1 KiB payload), each
 * with `Nats-Msg-Id` (and, with `--expected-last`, `Nats-Expected-Last-Msg-Id` as Intake sends
 * for its order), at most `--window` awaiting their acknowledgement, paced at `--rate`
 * messages/s in 2-ms ticks (as commits come) or unpaced. It speaks JetStream's publish protocol
 * as src/export/nats.ts does (core publishes whose reply subject is one inbox), the cheapest
 * way the client offers; `--client` uses the client's `js.publish` instead.
 *
 * It prints the CPU time per message of the publisher (this process, every thread) and of
 * nats-server (`/proc/<pid>/task/*\/schedstat`), after a warm-up of a tenth of N: the export's
 * least cost per event on this machine, to hold against Intake's CPU per ingested event
 * (`bun bench/pair-resolution.ts --nats`, docs in bench/README.md, scenario 14).
 *
 * Usage: bun bench/floor-export.ts [--n 100000] [--rate 15000 | --rate 0 (unpaced)]
 *   [--window 256] [--expected-last] [--client] [--memory-store]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connect, createInbox, headers, type Msg, nanos } from "@nats-io/transport-node";
import { eventBody } from "./lib/pool.ts";
import { freePort, installCleanup, processCpuNs, sleep, stop, track } from "./lib/procs.ts";

const { values: flags } = parseArgs({
  options: {
    n: { type: "string", default: "100000" },
    rate: { type: "string", default: "15000" },
    window: { type: "string", default: "256" },
    "expected-last": { type: "boolean", default: false },
    client: { type: "boolean", default: false },
    "memory-store": { type: "boolean", default: false },
  },
});
const total = Number(flags.n);
const rate = Number(flags.rate);
const windowSize = Number(flags.window);
const NATS_SERVER = process.env.INTAKE_NATS_SERVER ?? "/usr/sbin/nats-server";

installCleanup();
const dir = mkdtempSync(join(tmpdir(), "intake-floor-export-"));
const port = freePort();
const server = track(
  Bun.spawn([NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir], {
    stdout: "ignore",
    stderr: "ignore",
  }),
);
const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
try {
  let nc: Awaited<ReturnType<typeof connect>> | null = null;
  for (let tries = 0; nc === null; tries++) {
    try {
      nc = await connect({ servers: `nats://127.0.0.1:${port}`, timeout: 1_000 });
    } catch (error) {
      if (tries > 100) throw error;
      await sleep(100);
    }
  }
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: "FLOOR",
    subjects: ["intake.>"],
    storage: flags["memory-store"] ? StorageType.Memory : StorageType.File,
    duplicate_window: nanos(120_000),
  });
  const js = jetstream(nc);

  // What the export sends for a 1 KiB event: the §10 event object with the payload embedded.
  const tenant = crypto.randomUUID();
  const subject = `intake.${tenant}.events.svc_${hex(16)}`;
  const bodies = Array.from({ length: 1000 }, (_, i) =>
    Buffer.from(
      `{"id":"evt_${hex(16)}","service_id":"svc_${hex(16)}","received_at":"${new Date().toISOString()}","idempotency_key":null,"payload":${eventBody(i)}}`,
    ),
  );
  const ids = Array.from({ length: total }, () => `evt_${hex(16)}`);

  // The inbox protocol (src/export/nats.ts): one subscription, a token per publish.
  const inbox = createInbox();
  const waiting = new Map<string, (ok: boolean) => void>();
  const decoder = new TextDecoder();
  nc.subscribe(`${inbox}.*`, {
    callback: (_error, message: Msg) => {
      const settle = waiting.get(message.subject.slice(inbox.length + 1));
      if (!settle) return;
      waiting.delete(message.subject.slice(inbox.length + 1));
      const ack = JSON.parse(decoder.decode(message.data)) as { seq?: number };
      settle(!message.headers?.hasError && typeof ack.seq === "number");
    },
  });
  let token = 0;
  const publish = (i: number): Promise<boolean> => {
    const header = headers();
    header.set("Nats-Msg-Id", ids[i] as string);
    if (flags["expected-last"] && i > 0) header.set("Nats-Expected-Last-Msg-Id", ids[i - 1] as string);
    const body = bodies[i % bodies.length] as Uint8Array;
    if (flags.client)
      return js.publish(subject, body, { headers: header }).then(
        () => true,
        () => false,
      );
    const key = String(++token);
    const acked = new Promise<boolean>((resolve) => waiting.set(key, resolve));
    (nc as NonNullable<typeof nc>).publish(subject, body, { reply: `${inbox}.${key}`, headers: header });
    return acked;
  };

  const warmup = Math.floor(total / 10);
  let sent = 0;
  let failed = 0;
  // Each publish and, once acknowledged, its outcome. A full window waits for its oldest, then
  // takes every later one already acknowledged, so it refills in a burst (one socket write).
  const inFlight: { done: Promise<boolean>; ok?: boolean }[] = [];
  const settleOldest = async () => {
    if (!(await (inFlight.shift() as (typeof inFlight)[number]).done)) failed++;
    while (inFlight[0]?.ok !== undefined) if (!inFlight.shift()?.ok) failed++;
  };
  let cpuSelf = 0;
  let cpuServer = 0;
  let started = 0;
  const tickMs = 2;
  // Paced: the messages due by now since `paceFrom` (sent `paceBase` then), a tick's worth at a time.
  let paceFrom = performance.now();
  let paceBase = 0;
  while (sent < total) {
    if (sent === warmup && started === 0) {
      while (inFlight.length > 0) await settleOldest();
      cpuSelf = processCpuNs(process.pid);
      cpuServer = processCpuNs(server.pid);
      started = performance.now();
      paceFrom = started;
      paceBase = sent;
    }
    if (rate > 0 && sent >= paceBase + Math.floor(((performance.now() - paceFrom) * rate) / 1000)) {
      await sleep(tickMs);
      continue;
    }
    if (inFlight.length >= windowSize) await settleOldest();
    const entry: (typeof inFlight)[number] = { done: publish(sent++) };
    entry.done = entry.done.then((ok) => {
      entry.ok = ok;
      return ok;
    });
    inFlight.push(entry);
  }
  while (inFlight.length > 0) await settleOldest();
  const seconds = (performance.now() - started) / 1000;
  const measured = total - warmup;
  const selfUs = (processCpuNs(process.pid) - cpuSelf) / 1000 / measured;
  const serverUs = (processCpuNs(server.pid) - cpuServer) / 1000 / measured;
  const info = await jsm.streams.info("FLOOR");
  console.log(
    `${measured} messages of ${bodies[0]?.length} bytes in ${seconds.toFixed(2)} s (${Math.round(measured / seconds)}/s; asked ${rate > 0 ? `${rate}/s` : "unpaced"}), window ${windowSize}, ${flags.client ? "js.publish" : "inbox protocol"}${flags["expected-last"] ? ", expected last id" : ""}, ${flags["memory-store"] ? "memory" : "file"} store; ${failed} not acknowledged; stream holds ${info.state.messages}`,
  );
  console.log(
    `CPU per message: publisher ${selfUs.toFixed(2)} µs, nats-server ${serverUs.toFixed(2)} µs, both ${(selfUs + serverUs).toFixed(2)} µs`,
  );
  await nc.close();
} finally {
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
