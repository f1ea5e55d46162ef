/**
 * The export (SPEC §21, docs/export.md) across crashes, with real `intake serve` processes and
 * a `nats-server -js` of the test's own: Intake killed (-9) and restarted mid-run on a SQLite
 * file, and the exporting instance of two on PostgreSQL killed while the other goes on. Every
 * event the feed holds arrives once (JetStream's sequence has no gap: no re-publish was
 * stored twice), in the feed's order.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signPayload } from "../../src/domain/signing.ts";
import { type IntakeProcess, runCli, startIntake, stopAll } from "../support/intake-process.ts";
import { natsServerPresent, type PrivateNats, readStream, startPrivateNats } from "../support/nats.ts";
import { serviceAvailable } from "../support/services.ts";
import { createTestDatabase, randomKeyEnv, type TestDatabase } from "../support/stack.ts";

const present = natsServerPresent();
const postgres = present && (await serviceAvailable("postgres"));
const STREAM = "INTAKE_CRASH";
const EXPORTING = '"export: this instance exports"';

let nats: PrivateNats | undefined;
afterEach(async () => {
  await stopAll();
  await nats?.dispose();
  nats = undefined;
});
afterAll(stopAll);

interface Sender {
  service: { id: string; secret: string };
  acknowledged: string[];
}

async function createService(on: IntakeProcess, token: string): Promise<{ id: string; secret: string }> {
  const res = await on.fetch("/v1/services", {
    method: "POST",
    token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ service_name: "sender" }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { id: string; signing_secret: string };
  return { id: body.id, secret: body.signing_secret };
}

/** Posts `count` events through whichever instance `target()` names; keeps the ids answered 202. */
async function send(sender: Sender, target: () => IntakeProcess, from: number, count: number): Promise<void> {
  const lanes = [0, 1, 2, 3].map(async (lane) => {
    for (let i = from + lane; i < from + count; i += 4) {
      const body = JSON.stringify({ n: i });
      const signature = signPayload(body, sender.service.secret, Math.floor(Date.now() / 1000));
      try {
        const res = await target().fetch(`/v1/ingest/${sender.service.id}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-service-signature": signature },
          body,
        });
        if (res.status === 202) sender.acknowledged.push(((await res.json()) as { id: string }).id);
        else await res.body?.cancel();
      } catch {
        // The instance was killed under this request: not acknowledged, maybe committed.
      }
    }
  });
  await Promise.all(lanes);
}

/** The tenant's whole feed, oldest first, through the API. */
async function feedIds(on: IntakeProcess, token: string): Promise<string[]> {
  const ids: string[] = [];
  let query = "?limit=1000";
  for (;;) {
    const res = await on.fetch(`/v1/feed${query}`, { token });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: Array<{ id: string }>; next_cursor: string };
    if (page.data.length === 0) return ids;
    ids.push(...page.data.map((e) => e.id));
    query = `?limit=1000&after=${page.next_cursor}`;
  }
}

async function until(condition: () => boolean, ms: number, what: string): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(50);
  }
  return Date.now() - started;
}

async function expectExportedOnce(token: string, on: IntakeProcess, sender: Sender): Promise<void> {
  const feed = await feedIds(on, token);
  for (const id of sender.acknowledged) expect(feed).toContain(id);
  const { messages } = await readStream((nats as PrivateNats).url, STREAM, feed.length, 30_000);
  expect(messages.map((m) => m.id)).toEqual(feed);
  expect(messages.map((m) => m.seq)).toEqual(messages.map((_, i) => i + 1));
}

describe.skipIf(!present)("export across crashes", () => {
  test("Intake killed (-9) and restarted mid-run (SQLite file): every event arrives once, in feed order", async () => {
    nats = await startPrivateNats();
    const dir = mkdtempSync(join(tmpdir(), "intake-export-"));
    try {
      const env = {
        INTAKE_DATA_DIR: dir,
        INTAKE_EXPORT_NATS_URL: nats.url,
        INTAKE_EXPORT_NATS_STREAM: STREAM,
      };
      const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Acme", "--json", "--create"], env)) as {
        token: string;
      };
      let intake = await startIntake("first", env);
      const sender: Sender = { service: await createService(intake, boot.token), acknowledged: [] };
      await send(sender, () => intake, 0, 200);
      const sending = send(sender, () => intake, 200, 200);
      await Bun.sleep(100);
      intake.proc.kill("SIGKILL");
      await intake.proc.exited;
      await sending;
      intake = await startIntake("restarted", env);
      await send(sender, () => intake, 400, 200);
      expect(sender.acknowledged.length).toBeGreaterThanOrEqual(400);
      await expectExportedOnce(boot.token, intake, sender);
    } finally {
      await stopAll();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.drop();
  });

  test.skipIf(!postgres)(
    "the exporting instance of two killed (-9): the other takes over within 10 s, every event arrives once, in feed order",
    async () => {
      nats = await startPrivateNats();
      database = await createTestDatabase();
      const env = {
        DATABASE_URL: database.url,
        INTAKE_EXPORT_NATS_URL: nats.url,
        INTAKE_EXPORT_NATS_STREAM: STREAM,
        ...randomKeyEnv(),
      };
      const boot = JSON.parse(await runCli(["bootstrap", "--tenant-name", "Acme", "--json"], env)) as {
        token: string;
      };
      const [a, b] = await Promise.all([startIntake("A", env), startIntake("B", env)]);
      const both = [a, b];
      await until(() => both.some((p) => p.lines.some((l) => l.includes(EXPORTING))), 15_000, "an exporter");
      const exporting = both.filter((p) => p.lines.some((l) => l.includes(EXPORTING)));
      expect(exporting.length).toBe(1);
      const victim = exporting[0] as IntakeProcess;
      const survivor = victim === a ? b : a;

      const sender: Sender = { service: await createService(survivor, boot.token), acknowledged: [] };
      let turn = 0;
      let alive = both;
      const next = () => alive[turn++ % alive.length] as IntakeProcess;
      await send(sender, next, 0, 200);
      const sending = send(sender, next, 200, 200);
      await Bun.sleep(100);
      victim.proc.kill("SIGKILL");
      const killedAt = Date.now();
      const takeover = until(
        () => survivor.lines.some((l) => l.includes(EXPORTING)),
        15_000,
        "the survivor to export",
      ).then(() => Date.now() - killedAt);
      alive = [survivor];
      await victim.proc.exited;
      await sending;
      expect(await takeover).toBeLessThanOrEqual(10_000);
      await send(sender, next, 400, 200);
      await expectExportedOnce(boot.token, survivor, sender);
    },
    120_000,
  );
});
