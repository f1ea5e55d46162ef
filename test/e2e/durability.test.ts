/**
 * Zero acknowledged events lost: a real `intake serve` on a SQLite file takes concurrent
 * signed events, is SIGKILLed mid-stream (no drain, no close), restarts on the same data dir,
 * and every event that got a 202 is listed with its exact bytes.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { signPayload } from "../../src/domain/signing.ts";

const ROOT = join(import.meta.dir, "../..");
const dataDir = mkdtempSync(join(tmpdir(), "intake-durability-"));
const running: Subprocess[] = [];

afterAll(async () => {
  for (const proc of running) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/** PORT=0 would not tell us the port the child picked: ask the OS for a free one first. */
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

function childEnv(port: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // A developer's own settings must not point the child elsewhere.
    if (v !== undefined && !k.startsWith("INTAKE_") && k !== "DATABASE_URL" && k !== "REDIS_URL") env[k] = v;
  }
  return { ...env, INTAKE_DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", INTAKE_GRPC_PORT: "0" };
}

async function startServer(port: number): Promise<{ proc: Subprocess; base: string }> {
  const proc = Bun.spawn(["bun", "src/cli.ts", "serve"], {
    cwd: ROOT,
    env: childEnv(port),
    stdout: "ignore",
    stderr: "pipe",
  });
  running.push(proc);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/v1/health`)).ok) return { proc, base };
    } catch {
      // not listening yet
    }
    await Bun.sleep(25);
  }
  proc.kill("SIGKILL");
  throw new Error(`intake serve did not come up: ${await new Response(proc.stderr as ReadableStream).text()}`);
}

async function listAll(base: string, token: string, serviceId: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${cursor}` : "";
    const res = await fetch(`${base}/v1/services/${serviceId}/events?limit=100${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: Array<{ id: string; payload: unknown }>; next_cursor: string | null };
    for (const event of page.data) found.set(event.id, JSON.stringify(event.payload));
    cursor = page.next_cursor;
  } while (cursor);
  return found;
}

test("every event acknowledged with 202 before a SIGKILL is there after the restart (zero lost)", async () => {
  const boot = Bun.spawnSync(["bun", "src/cli.ts", "bootstrap", "--tenant-name", "durability", "--json", "--create"], {
    cwd: ROOT,
    env: childEnv(0),
  });
  expect(boot.exitCode).toBe(0);
  const { token } = JSON.parse(boot.stdout.toString()) as { token: string };

  const first = await startServer(await freePort());
  const created = await fetch(`${first.base}/v1/services`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ service_name: "durable" }),
  });
  expect(created.status).toBe(201);
  const service = (await created.json()) as { id: string; signing_secret: string };

  const acked = new Map<string, string>();
  let sent = 0;
  let killed = false;
  async function sender(worker: number) {
    for (let i = 0; !killed; i++) {
      const body = JSON.stringify({ worker, i, note: "durable ✓" });
      sent++;
      try {
        const res = await fetch(`${first.base}/v1/ingest/${service.id}`, {
          method: "POST",
          headers: { "x-service-signature": signPayload(body, service.signing_secret, Math.floor(Date.now() / 1000)) },
          body,
        });
        if (res.status === 202) acked.set(((await res.json()) as { id: string }).id, body);
        else await res.arrayBuffer();
      } catch {
        return; // the server died under us: this request was never acknowledged
      }
    }
  }
  const senders = Array.from({ length: 16 }, (_, w) => sender(w));

  // Kill while requests are in flight, once a good number has been acknowledged.
  const deadline = Date.now() + 5_000;
  while (acked.size < 400 && Date.now() < deadline) await Bun.sleep(10);
  first.proc.kill("SIGKILL");
  killed = true;
  await first.proc.exited;
  await Promise.all(senders);
  expect(acked.size).toBeGreaterThan(0);

  const second = await startServer(await freePort());
  const stored = await listAll(second.base, token, service.id);
  const lost = [...acked.keys()].filter((id) => !stored.has(id));
  expect(lost).toEqual([]);
  for (const [id, body] of acked) expect(stored.get(id)).toBe(JSON.stringify(JSON.parse(body)));
  console.log(`durability: ${acked.size} acknowledged, ${stored.size} stored, ${sent} sent, 0 lost`);
}, 30_000);
