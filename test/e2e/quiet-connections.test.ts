/**
 * Quiet answers on a real `serve` (Bun.serve's idle timeout is 10 s unless set): a long poll
 * held longer than that is answered, not reset; an SSE stream and a Connect StreamFeed on the
 * main port stay open through a quiet spell longer than it and then deliver the next event
 * (SPEC §10: `wait` up to 30 s; streams end only on their own end conditions).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { EventFeedService, FeedStart } from "../../gen/intake/v1/feed_pb.ts";
import { runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { sign } from "../support/signing.ts";

/** Longer than Bun.serve's default idle timeout (10 s). */
const QUIET_MS = 12_000;
const dir = mkdtempSync(join(tmpdir(), "intake-quiet-"));
afterAll(async () => {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
});

test("a 12 s long poll is answered 200; an SSE stream and a Connect StreamFeed quiet for 12 s stay open and deliver the next event", async () => {
  const env = { INTAKE_DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}`, INTAKE_GRPC_PORT: "0" };
  const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Quiet", "--create", "--json"], env)) as {
    token: string;
  };
  const intake = await startIntake("Q", env);
  const created = await intake.fetch("/v1/services", {
    method: "POST",
    token: boot.token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ service_name: "quiet" }),
  });
  expect(created.status).toBe(201);
  const service = (await created.json()) as { id: string; signing_secret: string };

  // Without the helper's 10 s abort: these answers are meant to take longer.
  const get = (path: string) => fetch(`${intake.base}${path}`, { headers: { authorization: `Bearer ${boot.token}` } });
  // The SSE stream: read its opening, then nothing for QUIET_MS.
  const sse = await get("/v1/feed/stream?start=latest");
  expect(sse.status).toBe(200);
  const reader = (sse.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let sseText = "";
  const sseRead = (async () => {
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      sseText += decoder.decode(next.value, { stream: true });
      if (sseText.includes("event: event")) return;
    }
  })();

  // The Connect stream on the main port (HTTP/1.1: no pings of its own).
  const client = createClient(
    EventFeedService,
    createConnectTransport({ baseUrl: intake.base, httpVersion: "1.1", useBinaryFormat: true }),
  );
  const connectIds: string[] = [];
  const connectRead = (async () => {
    for await (const message of client.streamFeed(
      { start: FeedStart.LATEST },
      { headers: { authorization: `Bearer ${boot.token}` } },
    )) {
      if (message.event) connectIds.push(message.event.id);
      if (connectIds.length > 0) return;
    }
  })();

  const began = performance.now();
  const poll = await get("/v1/feed?start=latest&wait=12");
  expect(poll.status).toBe(200);
  expect(performance.now() - began).toBeGreaterThanOrEqual(QUIET_MS - 500);
  expect(((await poll.json()) as { data: unknown[] }).data).toEqual([]);

  const body = JSON.stringify({ type: "quiet.over" });
  const sent = await intake.fetch(`/v1/ingest/${service.id}`, {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "x-service-signature": sign(service.signing_secret, body, Date.now()),
    },
  });
  expect(sent.status).toBe(202);
  const { id } = (await sent.json()) as { id: string };
  await Promise.all([sseRead, connectRead]);
  expect(sseText).toContain(id);
  expect(connectIds).toEqual([id]);
}, 60_000);
