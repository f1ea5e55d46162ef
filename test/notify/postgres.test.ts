/**
 * Feed wake-ups over PostgreSQL LISTEN/NOTIFY (src/notify/postgres.ts), two notifiers on one
 * database standing for two instances: what a reader on the other instance notices, and how
 * many NOTIFYs a burst of committed batches costs the server.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { FeedNotifier } from "../../src/domain/ports/notifier.ts";
import { createLogger } from "../../src/logger.ts";
import { createPostgresNotifier, NOTIFY_SPACING_MS } from "../../src/notify/postgres.ts";
import { serviceAvailable } from "../support/services.ts";
import { createTestDatabase, type TestDatabase } from "../support/stack.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";

const pgOk = await serviceAvailable("postgres");

const tenant = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

/** Resolves once `done()` is true, polling; fails the test after `ms`. */
async function until(done: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await Bun.sleep(5);
  }
}

describe.skipIf(!pgOk)("PostgreSQL LISTEN/NOTIFY feed wake-ups", () => {
  let database: TestDatabase | undefined;
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const closable of open.splice(0).reverse()) await closable.close().catch(() => {});
    await database?.drop();
    database = undefined;
  });

  async function instance(): Promise<FeedNotifier> {
    const notifier = await createPostgresNotifier({
      url: (database as TestDatabase).url,
      logger: createLogger(() => {}),
    });
    open.push(notifier);
    return notifier;
  }

  /** Every message on the channel, as a third session sees it. */
  async function tap(): Promise<Array<{ from: string; tenants: string[] }>> {
    const seen: Array<{ from: string; tenants: string[] }> = [];
    const sql = new SQL((database as TestDatabase).url, { max: 1 });
    open.push(sql);
    await sql.listen("intake_feed", (text) => seen.push(JSON.parse(text)));
    return seen;
  }

  test("a publish wakes this instance's readers and the other instance's readers of that tenant only", async () => {
    database = await createTestDatabase();
    const a = await instance();
    const b = await instance();
    const woken: string[] = [];
    a.subscribe(tenant(1), () => woken.push("a1"));
    b.subscribe(tenant(1), () => woken.push("b1"));
    b.subscribe(tenant(2), () => woken.push("b2"));
    a.publish([tenant(1)]);
    await until(() => woken.includes("a1") && woken.includes("b1"));
    await Bun.sleep(100);
    expect(woken.sort()).toEqual(["a1", "b1"]);
  });

  test("a burst of publishes costs a few NOTIFYs that carry every tenant, and wakes every reader elsewhere", async () => {
    database = await createTestDatabase();
    const seen = await tap();
    const a = await instance();
    const b = await instance();
    const woken = new Set<string>();
    for (let i = 0; i < 30; i++) b.subscribe(tenant(i), () => woken.add(tenant(i)));
    const started = performance.now();
    // 30 committed batches, about a millisecond apart: one NOTIFY each before.
    for (let i = 0; i < 30; i++) {
      a.publish([tenant(i)]);
      await Bun.sleep(1);
    }
    const elapsed = performance.now() - started;
    await until(() => woken.size === 30);
    await Bun.sleep(2 * NOTIFY_SPACING_MS);
    const fromA = seen.filter((m) => m.tenants.length > 0);
    // One at once, then at most one per spacing interval (the last one after the burst).
    expect(fromA.length).toBeLessThanOrEqual(Math.ceil(elapsed / NOTIFY_SPACING_MS) + 1);
    expect(fromA.length).toBeLessThan(30);
    expect(new Set(fromA.flatMap((m) => m.tenants))).toEqual(new Set(Array.from({ length: 30 }, (_, i) => tenant(i))));
  });

  test("the first publish after a quiet spell is sent at once; close sends what still waits for its turn", async () => {
    database = await createTestDatabase();
    const seen = await tap();
    const a = await instance();
    await Bun.sleep(2 * NOTIFY_SPACING_MS);
    a.publish([tenant(1)]);
    a.publish([tenant(2)]); // inside the spacing: waits for its turn
    await until(() => seen.length >= 1);
    expect(seen[0]?.tenants).toEqual([tenant(1)]);
    await a.close();
    await until(() => seen.some((m) => m.tenants.includes(tenant(2))));
  });

  test("close ends within about a second while a NOTIFY never answers (the database silently unreachable)", async () => {
    database = await createTestDatabase();
    const upstream = new URL(database.url);
    const proxy = await startTcpProxy({ hostname: upstream.hostname, port: Number(upstream.port || 5432) });
    open.push({ close: async () => proxy.close() });
    const viaProxy = new URL(database.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    const a = await createPostgresNotifier({ url: viaProxy.href, logger: createLogger(() => {}) });
    await Bun.sleep(2 * NOTIFY_SPACING_MS);
    proxy.blackhole();
    a.publish([tenant(1)]); // in flight, never answered
    a.publish([tenant(2)]); // waiting for its turn behind it
    const started = performance.now();
    await a.close();
    // A drain waits for this close: it must not hang on the unanswered NOTIFY.
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});
