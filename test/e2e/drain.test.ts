/**
 * SIGTERM on a real `serve` (docs/operations.md, "Stopping: the drain"): live readers that
 * stopped reading (their TCP windows full) do not hold the stop, readers that read get their
 * ending (`event: end`, the `unavailable` status), and a waiting long poll is answered, all
 * before the process exits within the drain's bound; a request stuck in flight is cut at DRAIN_MS.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { EventFeedService, FeedStart } from "../../gen/intake/v1/feed_pb.ts";
import { FEED_DRAIN_GRACE_MS } from "../../src/domain/feed-live.ts";
import { STALLED_END_GRACE_MS } from "../../src/rpc/grpc-server.ts";
import { DRAIN_MS } from "../../src/serve.ts";
import { runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { sign } from "../support/signing.ts";

/** Near the default INTAKE_MAX_EVENT_BYTES: a few dozen fill any loopback socket's buffers. */
const EVENT = 250_000;
const EVENTS = 32;
/**
 * The drain's bound with stalled readers (docs/operations.md, "Stopping"): the streams' grace,
 * then their end path's reset; the rest (the store closing, the process going) within a second.
 */
const EXIT_BOUND_MS = FEED_DRAIN_GRACE_MS + STALLED_END_GRACE_MS + 1_000;

const dir = mkdtempSync(join(tmpdir(), "intake-drain-"));
const sockets: Socket[] = [];
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** A JSON payload of exactly `bytes` bytes. */
function payloadOf(bytes: number, tag: number): string {
  const head = `{"n":${tag},"p":"`;
  return `${head}${"x".repeat(bytes - head.length - 2)}"}`;
}

/** A raw HTTP/1.1 request on its own connection whose answer is never read. */
async function stalled(port: number, head: string, body: Uint8Array = new Uint8Array()): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(head);
  if (body.length > 0) socket.write(body);
  socket.pause(); // never reads: its receive window fills, then the server's send buffer
  return socket;
}

/** A Connect streaming request body: one enveloped JSON message. */
function envelope(message: unknown): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(message));
  const out = new Uint8Array(5 + json.length);
  new DataView(out.buffer).setUint32(1, json.length);
  out.set(json, 5);
  return out;
}

test("SIGTERM with stalled SSE and Connect StreamFeed readers: readers that read get their ending, a waiting long poll is answered, and the process exits within the drain bound", async () => {
  const env = { INTAKE_DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}`, INTAKE_GRPC_PORT: "0" };
  const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Drain", "--create", "--json"], env)) as {
    token: string;
  };
  const intake = await startIntake("D", env);
  const port = Number(new URL(intake.base).port);
  const auth = { authorization: `Bearer ${boot.token}` };
  const created = await intake.fetch("/v1/services", {
    method: "POST",
    token: boot.token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ service_name: "drain" }),
  });
  expect(created.status).toBe(201);
  const service = (await created.json()) as { id: string; signing_secret: string };

  // Two readers that never read, from the start of the feed.
  await stalled(
    port,
    `GET /v1/feed/stream?start=earliest HTTP/1.1\r\nHost: intake\r\nAuthorization: Bearer ${boot.token}\r\n\r\n`,
  );
  const streamBody = envelope({ start: "FEED_START_EARLIEST" });
  await stalled(
    port,
    "POST /intake.v1.EventFeedService/StreamFeed HTTP/1.1\r\nHost: intake\r\n" +
      `Authorization: Bearer ${boot.token}\r\nContent-Type: application/connect+json\r\n` +
      `Content-Length: ${streamBody.length}\r\n\r\n`,
    streamBody,
  );

  // Far more than the socket buffers take: both stalled streams are parked on a write.
  for (let i = 0; i < EVENTS; i++) {
    const body = payloadOf(EVENT, i);
    const sent = await intake.fetch(`/v1/ingest/${service.id}`, {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "x-service-signature": sign(service.signing_secret, body, Date.now()),
      },
    });
    expect(sent.status).toBe(202);
  }

  // Readers that read: an SSE stream and a Connect StreamFeed from the start, and a long poll.
  const sse = await fetch(`${intake.base}/v1/feed/stream?start=earliest`, { headers: auth });
  expect(sse.status).toBe(200);
  const sseText = sse.text().then((text) => ({ text, at: performance.now() }));
  const client = createClient(
    EventFeedService,
    createConnectTransport({ baseUrl: intake.base, httpVersion: "1.1", useBinaryFormat: true }),
  );
  let connectEvents = 0;
  const connectEnd = (async () => {
    try {
      for await (const message of client.streamFeed({ start: FeedStart.EARLIEST }, { headers: auth })) {
        if (message.event) connectEvents++;
      }
      return { code: null, at: performance.now() };
    } catch (error) {
      return { code: ConnectError.from(error).code, at: performance.now() };
    }
  })();
  const poll = fetch(`${intake.base}/v1/feed?start=latest&wait=30`, { headers: auth }).then(async (res) => ({
    status: res.status,
    body: (await res.json()) as unknown,
    at: performance.now(),
  }));
  await Bun.sleep(1_000);

  const exited = intake.proc.exited.then(() => performance.now());
  const sigterm = performance.now();
  intake.proc.kill("SIGTERM");
  const exitedAt = await Promise.race([exited, Bun.sleep(30_000).then(() => null)]);
  expect(exitedAt, `still running 30 s after SIGTERM:\n${intake.lines.join("\n")}`).not.toBeNull();
  expect((exitedAt as number) - sigterm).toBeLessThan(EXIT_BOUND_MS);
  expect(intake.proc.exitCode).toBe(0);

  // The long poll is answered at once (an empty page), not at its 30 s or the streams' grace.
  const answer = await poll;
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ data: [], next_cursor: expect.any(String) });
  expect(answer.at - sigterm).toBeLessThan(1_000);

  // The readers that read got every event and then their ending, without waiting for the grace.
  const sseEnd = await sseText;
  expect(sseEnd.text.split("\nevent: event\n").length - 1).toBe(EVENTS);
  expect(sseEnd.text).toContain('event: end\ndata: {"error":{"code":"unavailable"');
  expect(sseEnd.at - sigterm).toBeLessThan(FEED_DRAIN_GRACE_MS);
  const ending = await connectEnd;
  expect(connectEvents).toBe(EVENTS);
  expect(ending.code).toBe(Code.Unavailable);
  expect(ending.at - sigterm).toBeLessThan(FEED_DRAIN_GRACE_MS);
}, 60_000);

test("SIGTERM with a request whose body never finishes arriving: its connection is closed at the drain's bound (DRAIN_MS) and the process exits", async () => {
  const own = join(dir, "upload");
  const env = { INTAKE_DATA_DIR: own, DATABASE_URL: `sqlite:${join(own, "intake.sqlite")}`, INTAKE_GRPC_PORT: "0" };
  const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Upload", "--create", "--json"], env)) as {
    token: string;
  };
  const intake = await startIntake("U", env);
  const port = Number(new URL(intake.base).port);
  // A service creation that announces 1,000 bytes and sends 10: its handler waits for the rest.
  await stalled(
    port,
    `POST /v1/services HTTP/1.1\r\nHost: intake\r\nAuthorization: Bearer ${boot.token}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
    new TextEncoder().encode('{"service_'),
  );
  await Bun.sleep(300);
  const exited = intake.proc.exited.then(() => performance.now());
  const sigterm = performance.now();
  intake.proc.kill("SIGTERM");
  const exitedAt = await Promise.race([exited, Bun.sleep(30_000).then(() => null)]);
  expect(exitedAt, `still running 30 s after SIGTERM:\n${intake.lines.join("\n")}`).not.toBeNull();
  // Not before the bound (in-flight requests are waited for), and soon after it.
  const took = (exitedAt as number) - sigterm;
  expect(took).toBeGreaterThanOrEqual(DRAIN_MS - 100);
  expect(took).toBeLessThan(DRAIN_MS + 1_000);
  expect(intake.proc.exitCode).toBe(0);
}, 60_000);
