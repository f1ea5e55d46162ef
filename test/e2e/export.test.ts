/**
 * The export to NATS JetStream (SPEC §21, docs/export.md) against a real `nats-server -js` of
 * the test's own (test/support/nats.ts), on the test stack (SQLite in memory, or PostgreSQL +
 * Redis with INTAKE_TEST_STACK=postgres-redis). The stream is read as a consumer reads it.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createExporter } from "../../src/domain/export.ts";
import { formatId } from "../../src/domain/ids.ts";
import { noopObserver } from "../../src/domain/ports/observer.ts";
import type { ExportMessage, ExportPublisher, PublishAck } from "../../src/domain/ports/publisher.ts";
import { signPayload } from "../../src/domain/signing.ts";
import { exportMessage } from "../../src/export/messages.ts";
import { createLogger } from "../../src/logger.ts";
import { createLocalNotifier } from "../../src/notify/local.ts";
import { createWorld, type World } from "../support/harness.ts";
import { cleanEnv } from "../support/intake-process.ts";
import { natsServerPresent, type PrivateNats, readStream, startPrivateNats } from "../support/nats.ts";

const present = natsServerPresent();

let world: World | undefined;
let nats: PrivateNats | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
  await nats?.dispose();
  nats = undefined;
});

const STREAM = "INTAKE_TEST";

async function exportingWorld(): Promise<{ w: World; n: PrivateNats }> {
  nats = await startPrivateNats();
  world = await createWorld({ env: { INTAKE_EXPORT_NATS_URL: nats.url, INTAKE_EXPORT_NATS_STREAM: STREAM } });
  return { w: world, n: nats };
}

async function ingest(w: World, service: { id: string; secret: string }, body: string): Promise<string> {
  const headers = { "x-service-signature": signPayload(body, service.secret, Math.floor(w.clock.now() / 1000)) };
  const res = await w.request("POST", `/v1/ingest/${service.id}`, { token: null, body, headers });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** Ingests an alert event: ingest applies its incident effect in the event's own commit (docs/incidents.md). */
async function alert(w: World, service: { id: string; secret: string }, body: object) {
  await ingest(w, service, JSON.stringify(body));
}

/** What the stream must hold: every tenant's events and changes, each tenant in its feed order. */
async function expectedIds(w: World, tenantIds: string[]): Promise<Array<{ position: number; id: string }>> {
  const all: Array<{ position: number; id: string }> = [];
  for (const tenantId of tenantIds) {
    for (const e of await w.app.store.events.feed(tenantId, { after: 0, limit: 100_000 }))
      all.push({ position: e.position, id: formatId("evt", e.id) });
    for (const c of await w.app.store.incidents.changes(tenantId, { after: 0, limit: 100_000 }))
      all.push({ position: c.position, id: `change:${tenantId}:${c.position}` });
  }
  return all.sort((a, b) => a.position - b.position);
}

describe.skipIf(!present)("export to NATS JetStream", () => {
  test("every event and incident change arrives once, in feed order, on its subject, with its id and body", async () => {
    const { w, n } = await exportingWorld();
    const other = await w.otherTenant();
    const a = await w.createService("a");
    const b = await w.createService("b");
    const otherService = await w.request("POST", "/v1/services", { token: other.token, body: { service_name: "o" } });
    const o = { id: otherService.body.id as string, secret: otherService.body.signing_secret as string };
    const trigger = (key: string, severity: string) => ({
      event_action: "trigger",
      dedup_key: key,
      payload: { summary: `disk ${key}`, source: "db-1", severity },
    });
    for (let i = 0; i < 40; i++) {
      await ingest(w, i % 2 ? a : b, JSON.stringify({ n: i, text: "line\nbreak" }));
      if (i % 7 === 0) await ingest(w, o, JSON.stringify({ other: i }));
      if (i === 10) await alert(w, a, trigger("k1", "warning"));
      if (i === 20) await alert(w, a, trigger("k1", "critical"));
      if (i === 30) await alert(w, a, { event_action: "resolve", dedup_key: "k1" });
      if (i === 35) await alert(w, o, trigger("k2", "info"));
    }
    const expected = await expectedIds(w, [w.tenantId, other.tenantId]);
    const { messages, info } = await readStream(n.url, STREAM, expected.length);

    expect(messages.length).toBe(expected.length);
    const seen = messages.map((m) => {
      if (!m.subject.endsWith(".incidents")) return m.id;
      const tenantId = m.subject.split(".")[1] as string;
      const position = Number(Buffer.from(m.id, "base64url").toString("latin1").split(".")[1]);
      return `change:${tenantId}:${position}`;
    });
    expect(seen).toEqual(expected.map((e) => e.id));

    // Subjects, and bodies: an event is the §10 object byte for byte; a change is {change, incident}.
    const first = messages[0] as (typeof messages)[number];
    const one = await w.request("GET", `/v1/events/${first.id}`);
    expect(first.body).toBe(one.text);
    expect(first.subject).toBe(`intake.${w.tenantId}.events.${one.body.service_id}`);
    const changes = messages.filter((m) => m.subject.endsWith(".incidents"));
    expect(changes.map((m) => [m.subject.split(".")[1], JSON.parse(m.body).change])).toEqual([
      [w.tenantId, "opened"],
      [w.tenantId, "severity_raised"],
      [w.tenantId, "resolved"],
      [other.tenantId, "opened"],
    ]);
    const resolved = JSON.parse((changes[2] as (typeof changes)[number]).body);
    expect(resolved.incident).toMatchObject({
      status: "resolved",
      severity: "critical",
      dedup_key: "k1",
      alert_count: 3,
    });
    expect(resolved.incident.id).toMatch(/^inc_[0-9a-f]{32}$/);
    expect(resolved.incident.resolved_by.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(JSON.stringify(resolved)).not.toContain(w.tenantId);

    // The stream Intake created: file storage, every subject under intake.>, a duplicate window.
    expect(info.config.subjects).toEqual(["intake.>"]);
    expect(info.config.storage).toBe("file");
    expect(info.config.duplicate_window).toBe(120_000_000_000);

    const metrics = await w.request("GET", "/metrics");
    expect(metrics.text).toContain(`intake_export_published_total{result="stored"} ${expected.length}`);
    expect(metrics.text).toMatch(/^intake_export_lag_events 0$/m);
  }, 60_000);

  test("NATS stopped and restarted mid-run: every event arrives once, in feed order", async () => {
    const { w, n } = await exportingWorld();
    const a = await w.createService("a");
    const b = await w.createService("b");
    const burst = async (from: number, count: number) => {
      // Four senders at once, so batches commit while publishes are in flight.
      const lanes = [0, 1, 2, 3].map(async (lane) => {
        for (let i = from + lane; i < from + count; i += 4) await ingest(w, i % 2 ? a : b, JSON.stringify({ n: i }));
      });
      await Promise.all(lanes);
    };
    await burst(0, 120);
    await n.stop();
    await burst(120, 120);
    await n.start();
    await burst(240, 120);

    const expected = await expectedIds(w, [w.tenantId]);
    expect(expected.length).toBe(360);
    const { messages } = await readStream(n.url, STREAM, expected.length, 30_000);
    expect(messages.map((m) => m.id)).toEqual(expected.map((e) => e.id));
    // JetStream's own sequence has no gap: nothing was stored twice.
    expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i + 1));
    expect(w.logs.some((l) => l.includes("resuming from the last acknowledged position"))).toBe(true);
  }, 90_000);

  test("docs/export.md's consumer, run as pasted, prints every exported event", async () => {
    const { w, n } = await exportingWorld();
    const a = await w.createService("a");
    const ids = [await ingest(w, a, '{"amount":1}'), await ingest(w, a, '{"amount":2}')];
    const doc = readFileSync(join(import.meta.dir, "../../docs/export.md"), "utf8");
    const section = doc.slice(doc.indexOf("## A consumer\n"));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    if (!block) throw new Error('docs/export.md has no ```ts block under "## A consumer"');
    const dir = mkdtempSync(join(tmpdir(), "intake-export-consumer-"));
    try {
      writeFileSync(join(dir, "consumer.ts"), block);
      // As in a project of its own that ran `bun add @nats-io/jetstream @nats-io/transport-node`.
      symlinkSync(join(import.meta.dir, "../../node_modules"), join(dir, "node_modules"));
      const proc = Bun.spawn(["bun", "consumer.ts"], {
        cwd: dir,
        env: { ...cleanEnv(), NATS_URL: n.url, INTAKE_EXPORT_NATS_STREAM: STREAM },
        stdout: "pipe",
        stderr: "pipe",
      });
      let stdout = "";
      void (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of proc.stdout) stdout += decoder.decode(chunk, { stream: true });
      })();
      const deadline = Date.now() + 20_000;
      while (!ids.every((id) => stdout.includes(id)) && proc.exitCode === null && Date.now() < deadline)
        await Bun.sleep(50);
      proc.kill("SIGKILL");
      await proc.exited;
      if (!ids.every((id) => stdout.includes(id)))
        throw new Error(`consumer printed:\n${stdout}\n${await new Response(proc.stderr).text()}`);
      expect(stdout).toContain(`${ids[1]} ${a.id} {"amount":2}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("the lease: one holder at a time, taken over once expired, and a former holder can no longer move the position", async () => {
    world = await createWorld();
    const exports = world.app.store.exports;
    expect(await exports.claim("t", "A", 60_000)).toBe(0);
    expect(await exports.claim("t", "B", 60_000)).toBeNull();
    expect(await exports.advance("t", "A", 42, 60_000)).toBe(true);
    expect(await exports.claim("t", "A", 60_000)).toBe(42);
    // A lease left to expire goes to the next claimant, with the position A recorded.
    expect(await exports.advance("t", "A", 43, 1)).toBe(true);
    await Bun.sleep(20);
    expect(await exports.claim("t", "B", 60_000)).toBe(43);
    expect(await exports.advance("t", "A", 99, 60_000)).toBe(false);
    expect(await exports.claim("t", "A", 60_000)).toBeNull();
    // A release hands it over at once.
    await exports.release("t", "B");
    expect(await exports.claim("t", "A", 60_000)).toBe(43);
  });

  test("unset INTAKE_EXPORT_NATS_URL: no exporter, and no module of NATS or of the export is loaded", async () => {
    world = await createWorld();
    expect(world.app.exporter).toBeNull();
    expect(world.app.config.exportNats).toBeNull();
    // A process of its own (this one imports the NATS client for its assertions).
    const root = join(import.meta.dir, "../..");
    const script = [
      `import { createApp } from "${root}/src/app.ts";`,
      `import { loadKeyMaterial, parseConfig } from "${root}/src/config.ts";`,
      `import { createLogger } from "${root}/src/logger.ts";`,
      `const config = parseConfig({ ...process.env, DATABASE_URL: "sqlite::memory:", INTAKE_GRPC_PORT: "0" });`,
      "const app = await createApp({ config, keys: loadKeyMaterial(config), logger: createLogger(() => {}) });",
      'console.log(Object.keys(require.cache).filter((k) => k.includes("@nats-io") || k.includes("/src/export/")).length);',
      "await app.close();",
    ].join("\n");
    const loaded = async (env: Record<string, string>) => {
      const proc = Bun.spawn(["bun", "-e", script], { env: { ...cleanEnv(), ...env }, stdout: "pipe", stderr: "pipe" });
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      expect(code).toBe(0);
      return Number(out.trim());
    };
    expect(await loaded({})).toBe(0);
    // The same check sees them when the export is configured (so the 0 above is not blind).
    expect(await loaded({ INTAKE_EXPORT_NATS_URL: "nats://127.0.0.1:9" })).toBeGreaterThan(0);
  }, 30_000);
});

/**
 * A stream that behaves as JetStream does for the exporter: it decides each message in the
 * order it is sent (one connection), de-duplicates by id first, then checks the expected last
 * id, and answers later. `lose` drops the first publish of those ids (a message lost on the
 * way: the publish times out) while the ones sent after it still reach the stream.
 */
function fakeStream(lose: Set<string>): ExportPublisher & { stored: string[] } {
  const stored: string[] = [];
  const held = new Set<string>();
  return {
    stored,
    ensureStream: async () => {},
    publish(message: ExportMessage, after: string | null): Promise<PublishAck> {
      let outcome: PublishAck | Error;
      if (lose.delete(message.id)) outcome = new Error("timed out");
      else if (held.has(message.id)) outcome = "duplicate";
      else if (after !== null && stored[stored.length - 1] !== after) outcome = new Error("wrong last msg ID");
      else {
        stored.push(message.id);
        held.add(message.id);
        outcome = "stored";
      }
      return Bun.sleep(1).then(() => {
        if (outcome instanceof Error) throw outcome;
        return outcome;
      });
    },
    close: async () => {},
  };
}

describe("the exporter's order", () => {
  test("a message lost mid-window is published again, and none sent after it lands before it", async () => {
    world = await createWorld();
    const w = world;
    const a = await w.createService("a");
    for (let i = 0; i < 60; i++) await ingest(w, a, JSON.stringify({ n: i }));
    const feed = (await w.app.store.events.feed(w.tenantId, { after: 0, limit: 1000 })).map((e) => `evt_${e.id}`);
    const stream = fakeStream(new Set([feed[10] as string, feed[37] as string]));
    const exporter = createExporter({
      store: w.app.store,
      publisher: stream,
      encode: exportMessage,
      notifier: createLocalNotifier(),
      observer: noopObserver,
      logger: createLogger(() => {}),
      options: { maxInFlight: 16, pageSize: 25, pollMs: 50 },
    });
    exporter.start();
    const deadline = Date.now() + 20_000;
    while (stream.stored.length < feed.length && Date.now() < deadline) await Bun.sleep(20);
    await exporter.stop();
    expect(stream.stored).toEqual(feed);
  }, 30_000);
});
