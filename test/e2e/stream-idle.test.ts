/**
 * `intake serve` keeps an idle Server-Sent Events stream open: the feed's and the incident
 * change stream's `: keep-alive` comment comes every 15 s (src/domain/feed.ts), and the
 * server's idle timeout must be longer than that, or Bun (whose default is 10 s) resets the
 * connection before the first keep-alive and every idle browser tab reconnects with an error.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startIntake, stopAll } from "../support/intake-process.ts";

const dir = mkdtempSync(join(tmpdir(), "intake-idle-e2e-"));
afterAll(async () => {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
});

test("an idle SSE stream stays open past Bun's default 10 s idle timeout and gets its keep-alive", async () => {
  const env = { INTAKE_DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, "intake.sqlite")}` };
  const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Idle", "--create", "--json"], env)) as {
    token: string;
  };
  const intake = await startIntake("idle", env);
  const res = await fetch(`${intake.base}/v1/incidents/stream?start=latest`, {
    headers: { authorization: `Bearer ${boot.token}` },
    signal: AbortSignal.timeout(25_000),
  });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes(": keep-alive")) {
    const next = await reader.read();
    if (next.done) throw new Error(`the stream ended after: ${JSON.stringify(text)}`);
    text += decoder.decode(next.value, { stream: true });
  }
  await reader.cancel();
}, 40_000);
