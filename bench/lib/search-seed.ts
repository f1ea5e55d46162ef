/**
 * Scenario 17's data: `count` events of ~1 KiB for one tenant, written through the store port
 * (on SQLite its own insert, in-thread and unsynced, in batches of 10,000; positions, types and
 * ids as ingest writes them), received over the last `days` days in order
 * (each id made at its event's received time, as ingest makes it). Each payload is JSON with a
 * `type` (one of TYPES), a customer id, an e-mail and an invoice of random hex, so the trigram
 * index sees text of realistic variety. Each of RARE_TERMS occurs in exactly `rareHits` events,
 * spread over the whole range. The store is opened with its payload index off while seeding and then
 * once with it on, which builds the index over the stored events in one pass (what an operator's
 * restart with INTAKE_EVENT_SEARCH=true does), so the Intake started on it finds it built.
 */

import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { createIdGenerator } from "../../src/domain/ids.ts";
import type { NewEvent } from "../../src/domain/ports/store.ts";
import { createPostgresStore } from "../../src/store/postgres/store.ts";
import { createEventInsert } from "../../src/store/sqlite/event-insert.ts";
import { createSqliteStore } from "../../src/store/sqlite/store.ts";
import { vacuumEvents } from "./postgres.ts";

export const TYPES = Array.from({ length: 20 }, (_, i) => `bench.kind${String(i).padStart(2, "0")}`);
export const RARE_TERMS = Array.from({ length: 10 }, (_, j) => `zqrare${j}x`);
const DAY_MS = 86_400_000;
const BATCH = 10_000;

function hex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

function payload(seq: number, type: string, rare: string | null): Uint8Array {
  const head = {
    type,
    seq,
    customer: `cus_${hex(7)}`,
    email: `user${seq}@example${seq % 97}.com`,
    invoice: `in_${hex(12)}`,
    ...(rare !== null && { note: `customer flagged ${rare}` }),
  };
  const text = JSON.stringify(head);
  // Lines of random hex up to ~1 KiB: many distinct trigrams, as real payloads have.
  const pad = hex(Math.max(0, Math.floor((1_000 - text.length) / 2)));
  return new TextEncoder().encode(`${text.slice(0, -1)},"detail":"${pad}"}`);
}

export interface SearchSeed {
  /** The received-time span the events cover: [from, to). */
  from: number;
  to: number;
  seconds: number;
}

export async function seedSearchEvents(opts: {
  database: string;
  tenantId: string;
  /** Raw service ids (no `svc_`): events go round-robin to them. */
  serviceIds: string[];
  count: number;
  rareHits: number;
  days: number;
}): Promise<SearchSeed> {
  const started = performance.now();
  const postgres = opts.database.startsWith("postgres://") || opts.database.startsWith("postgresql://");
  const open = (eventSearch: boolean) =>
    postgres
      ? createPostgresStore({ url: opts.database, max: 1, eventSearch })
      : createSqliteStore({ path: opts.database, eventSearch });
  const to = Date.now();
  const from = to - opts.days * DAY_MS;
  const step = (to - from) / opts.count;
  const every = Math.floor(opts.count / (opts.rareHits * RARE_TERMS.length));
  let at = from;
  const newId = createIdGenerator(() => Math.floor(at));
  const store = open(false);
  await store.migrate();
  let write = (batch: NewEvent[]) => store.events.insertBatch(batch).then(() => {});
  let unsynced: Database | null = null;
  if (!postgres) {
    // The store's own insert on a connection of the seed's, without a sync per batch: the
    // writer worker's fsyncs are what ingest pays, not what a seed needs to measure reads.
    await store.close();
    unsynced = new Database(opts.database);
    unsynced.exec("PRAGMA synchronous = OFF");
    const insert = createEventInsert(unsynced);
    write = async (batch) => {
      insert(batch);
    };
  }
  try {
    for (let done = 0; done < opts.count; done += BATCH) {
      const batch: NewEvent[] = [];
      for (let i = done; i < Math.min(opts.count, done + BATCH); i++) {
        at = from + i * step;
        const type = TYPES[i % TYPES.length] as string;
        // Every `every`-th event carries one rare term, each in turn: rareHits events per term.
        const k = i / every;
        const rare =
          i % every === 0 && k < opts.rareHits * RARE_TERMS.length
            ? (RARE_TERMS[k % RARE_TERMS.length] as string)
            : null;
        batch.push({
          id: newId(),
          tenantId: opts.tenantId,
          serviceId: opts.serviceIds[i % opts.serviceIds.length] as string,
          receivedAt: Math.floor(at),
          idempotencyKey: null,
          payload: payload(i, type, rare),
          type,
        });
      }
      await write(batch);
    }
  } finally {
    if (unsynced) unsynced.close();
    else await store.close();
  }
  if (postgres) {
    await vacuumEvents(opts.database);
    // The index build below runs on the store's connection: give it room to sort in memory.
    const sql = new SQL(opts.database);
    const name = new URL(opts.database).pathname.slice(1);
    await sql.unsafe(`ALTER DATABASE "${name}" SET maintenance_work_mem = '1GB'`);
    await sql.close();
  }
  // Opened once with the index on: it is built over everything stored, then kept by ingest.
  const indexed = open(true);
  await indexed.migrate();
  await indexed.close();
  return { from, to, seconds: (performance.now() - started) / 1000 };
}
