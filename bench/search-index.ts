/**
 * What §18's payload index costs ingest, and what its pages cost (docs/search.md, "Measured"):
 * `bun bench/search-index.ts [events per variant, default 60000] [batch, default 64] [varied|pad]`.
 *
 * Per store (a SQLite file, a scratch PostgreSQL database), two stores side by side in the same
 * run: one opened with INTAKE_EVENT_SEARCH on, one off. Batches of ~1 KiB JSON events of varied
 * text (ids, e-mails, words; not one repeated character, which would index to almost nothing)
 * go through the real `events.insertBatch` — on a SQLite file that is the writer worker, on
 * PostgreSQL the group-commit statement — alternating between the two stores batch by batch,
 * so the busy machine's noise falls on both alike. Then, on the indexed store: a one-term `q`
 * matching 50 events, and a `service_id` + `type` + time-range page (types set by UPDATE as
 * the ingest wiring will set them at insert), each timed over repeated runs (p50 / p99).
 * This is the store's share of ingest, not an HTTP benchmark: the ratio is of commit throughput.
 */

import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { createIdGenerator } from "../src/domain/ids.ts";
import type { NewEvent, Store } from "../src/domain/ports/store.ts";
import { createPostgresStore } from "../src/store/postgres/store.ts";
import { createSqliteStore } from "../src/store/sqlite/store.ts";
import { eventBody } from "./lib/pool.ts";
import { createScratchDatabase } from "./lib/postgres.ts";

const perVariant = Number(process.argv[2] ?? 60_000);
const batchSize = Number(process.argv[3] ?? 64);
/** `varied` (default): ids, e-mails, words; `pad`: the benchmark's own 1 KiB body (bench/lib/pool.ts), mostly one repeated character. */
const bodies = process.argv[4] === "pad" ? "pad" : "varied";
const log = (line: string) => process.stdout.write(`${line}\n`);
const newId = createIdGenerator();
const WORDS =
  "invoice payment customer charge refund subscription renewal failed succeeded pending dispute payout account balance transfer webhook order shipped delivered cancelled".split(
    " ",
  );
const TYPES = Array.from({ length: 20 }, (_, i) => `type.${i}`);
const encoder = new TextEncoder();
const hex = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString("hex");
const pick = <T>(a: readonly T[]) => a[Math.floor(Math.random() * a.length)] as T;

function payload(seq: number, extra = ""): Uint8Array {
  if (bodies === "pad") {
    const body = eventBody(seq);
    return encoder.encode(extra ? body.replace('"pad":"', `"pad":"${extra} `) : body);
  }
  const words: string[] = [];
  const head = {
    type: TYPES[seq % TYPES.length],
    id: `evt_${hex(12)}`,
    customer: `cus_${hex(7)}`,
    email: `${pick(WORDS)}.${hex(3)}@example.com`,
    amount: Math.floor(Math.random() * 100_000),
    extra,
  };
  let body = JSON.stringify({ ...head, description: "" });
  while (body.length < 1000) {
    words.push(`${pick(WORDS)}-${hex(2)}`);
    body = JSON.stringify({ ...head, description: words.join(" ") });
  }
  return encoder.encode(body);
}

interface Side {
  name: string;
  store: Store;
  tenantId: string;
  serviceId: string;
  ms: number;
  events: number;
}

async function seed(store: Store, name: string): Promise<Side> {
  await store.migrate();
  const tenantId = crypto.randomUUID();
  const tokenId = newId();
  await store.createTenant(
    { id: tenantId, name: "bench", permissionMode: "flat", createdAt: Date.now() },
    {
      id: tokenId,
      tenantId,
      name: "t",
      scope: "read_write",
      role: "owner",
      prefix: `service_live_${hex(4)}`,
      digest: hex(32),
      createdAt: Date.now(),
      createdBy: null,
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
    },
    [],
  );
  const serviceId = newId();
  await store.services.insert(
    {
      id: serviceId,
      tenantId,
      serviceName: "bench",
      isMonitored: true,
      secretCiphertext: "x",
      signingSecretPrefix: "whsec_abcd",
      previousSecretCiphertext: null,
      previousSecretExpiresAt: null,
      secretRotatedAt: null,
      createdAt: Date.now(),
      updatedAt: Date.now(),
      rateLimitLimit: null,
      rateLimitWindowSeconds: null,
      incidentAutoResolveSeconds: null,
      signatureScheme: "stripe",
    },
    {
      id: newId(),
      tenantId,
      occurredAt: Date.now(),
      action: "service.create",
      actor: { type: "operator" },
      target: { type: "service", id: serviceId },
      requestId: null,
      changes: null,
    },
  );
  return { name, store, tenantId, serviceId, ms: 0, events: 0 };
}

function batchFor(side: Side, seq: number, needle: (i: number) => string): NewEvent[] {
  return Array.from({ length: batchSize }, (_, i) => ({
    id: newId(),
    tenantId: side.tenantId,
    serviceId: side.serviceId,
    receivedAt: Date.now(),
    idempotencyKey: null,
    payload: payload(seq + i, needle(seq + i)),
  }));
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function timed(runs: number, call: () => Promise<unknown>): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return `p50 ${quantile(times, 0.5).toFixed(2)} ms, p99 ${quantile(times, 0.99).toFixed(2)} ms`;
}

async function measure(label: string, on: Side, off: Side, exec: (sql: string) => Promise<void>): Promise<void> {
  // One needle per ~1200 events: 50 matches in 60k.
  const every = Math.max(1, Math.floor(perVariant / 50));
  const needle = (seq: number) => (seq % every === 0 ? "needle-7f3a" : "");
  for (let seq = 0; seq < perVariant; seq += batchSize) {
    const order = (seq / batchSize) % 2 === 0 ? [on, off] : [off, on];
    for (const side of order) {
      const batch = batchFor(side, seq, needle);
      const started = performance.now();
      await side.store.events.insertBatch(batch);
      side.ms += performance.now() - started;
      side.events += batch.length;
    }
  }
  const rate = (s: Side) => (s.events / s.ms) * 1000;
  log(
    `${label} (${bodies} bodies): ${on.events} events per side, batches of ${batchSize}: index on ${rate(on).toFixed(0)} events/s, ` +
      `off ${rate(off).toFixed(0)} events/s, on/off ${(rate(on) / rate(off)).toFixed(2)}`,
  );
  await exec(`update events set type = 'type.' || (position % ${TYPES.length})`);
  const found = await on.store.events.search(on.tenantId, { terms: ["needle-7f3a"], limit: 21 });
  const all = await on.store.events.search(on.tenantId, { terms: ["needle-7f3a"], limit: 100 });
  log(`${label}: q=needle-7f3a matches ${all.length} (first page ${found.length})`);
  log(
    `${label}: one-term q, first page of 20: ${await timed(200, () => on.store.events.search(on.tenantId, { terms: ["needle-7f3a"], limit: 21 }))}`,
  );
  const now = Date.now();
  log(
    `${label}: service_id + type + last-hour page of 20: ${await timed(200, () =>
      on.store.events.search(on.tenantId, {
        serviceId: on.serviceId,
        type: "type.3",
        receivedAfter: now - 3_600_000,
        receivedBefore: now,
        limit: 21,
      }),
    )}`,
  );
}

const dir = join(tmpdir(), `intake-search-bench-${process.pid}`);
rmSync(dir, { recursive: true, force: true });
await Bun.write(join(dir, ".keep"), "");
try {
  const paths = { on: join(dir, "on.sqlite"), off: join(dir, "off.sqlite") };
  const on = await seed(createSqliteStore({ path: paths.on, eventSearch: true }), "on");
  const off = await seed(createSqliteStore({ path: paths.off, eventSearch: false }), "off");
  await measure("sqlite file", on, off, async (sql) => {
    const db = new Database(paths.on);
    db.run("PRAGMA busy_timeout = 5000");
    db.run(sql);
    db.close();
  });
  await on.store.close();
  await off.store.close();

  const dbOn = await createScratchDatabase();
  const dbOff = await createScratchDatabase();
  if ("unreachable" in dbOn || "unreachable" in dbOff) {
    log("postgres: unreachable, skipped");
  } else {
    try {
      const pOn = await seed(createPostgresStore({ url: dbOn.url, eventSearch: true }), "on");
      const pOff = await seed(createPostgresStore({ url: dbOff.url, eventSearch: false }), "off");
      await measure("postgres", pOn, pOff, async (sql) => {
        const client = new SQL(dbOn.url, { max: 1 });
        await client.unsafe(sql);
        await client.unsafe("vacuum analyze events");
        await client.close();
      });
      await pOn.store.close();
      await pOff.store.close();
    } finally {
      await dbOn.drop();
      await dbOff.drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
