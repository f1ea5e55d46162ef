/**
 * A private `nats-server -js` for the export's tests (docs/export.md): on a free port with its
 * own store directory, so a test may stop and restart it without touching the shared server
 * (127.0.0.1:4222). Every wait is bounded; `stop` ends it with SIGTERM (JetStream flushes).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { Subprocess } from "bun";

export const NATS_SERVER = process.env.INTAKE_NATS_SERVER ?? "/usr/sbin/nats-server";

/**
 * Whether the nats-server binary is there (CI installs it: .ci/run). Absent, the export's
 * suites are skipped with one printed line, or fail with INTAKE_REQUIRE_SERVICES=1 (CI).
 */
export function natsServerPresent(): boolean {
  const present = Bun.which(NATS_SERVER) !== null || Bun.file(NATS_SERVER).size > 0;
  if (!present && process.env.INTAKE_REQUIRE_SERVICES === "1")
    throw new Error(`INTAKE_REQUIRE_SERVICES=1 but there is no nats-server at ${NATS_SERVER}`);
  if (!present) console.log(`SKIP: export suites: no nats-server at ${NATS_SERVER} (apt-get install nats-server)`);
  return present;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function answering(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

export interface PrivateNats {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and removes its store directory. */
  dispose(): Promise<void>;
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const dir = mkdtempSync(join(tmpdir(), "intake-nats-"));
  const port = await freePort();
  let proc: Subprocess | null = null;
  const handle: PrivateNats = {
    url: `nats://127.0.0.1:${port}`,
    port,
    async start() {
      proc = Bun.spawn([NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir], {
        stdout: "ignore",
        stderr: "ignore",
      });
      const deadline = Date.now() + 10_000;
      while (!(await answering(port))) {
        if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port}`);
        await Bun.sleep(50);
      }
    },
    async stop() {
      const running = proc;
      proc = null;
      if (!running || running.exitCode !== null) return;
      running.kill("SIGTERM");
      const exited = await Promise.race([running.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!exited) {
        running.kill("SIGKILL");
        await running.exited;
      }
    },
    async dispose() {
      await handle.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await handle.start();
  return handle;
}

export interface StreamMessage {
  subject: string;
  id: string;
  seq: number;
  body: string;
}

/**
 * Every message of the stream, oldest first, as a consumer sees it (an ephemeral ordered
 * read from the first message), once the stream holds at least `atLeast` (bounded wait).
 */
export async function readStream(url: string, stream: string, atLeast: number, timeoutMs = 20_000) {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const deadline = Date.now() + timeoutMs;
    let count = 0;
    while (Date.now() < deadline) {
      count = await jsm.streams
        .info(stream)
        .then((info) => info.state.messages)
        .catch(() => 0);
      if (count >= atLeast) break;
      await Bun.sleep(100);
    }
    if (count < atLeast) throw new Error(`stream ${stream} holds ${count} messages, expected at least ${atLeast}`);
    const js = jetstream(nc);
    // An ordered consumer (no name): from the first message, in stream order.
    const consumer = await js.consumers.get(stream);
    const messages: StreamMessage[] = [];
    while (messages.length < count) {
      const batch = await consumer.fetch({ max_messages: Math.min(500, count - messages.length), expires: 5_000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        messages.push({ subject: m.subject, id: m.headers?.get("Nats-Msg-Id") ?? "", seq: m.seq, body: m.string() });
      }
      if (got === 0) throw new Error(`read ${messages.length} of ${count} messages, then nothing`);
    }
    return { messages, info: await jsm.streams.info(stream) };
  } finally {
    await nc.close();
  }
}
