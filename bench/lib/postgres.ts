/**
 * A throwaway PostgreSQL database for the PostgreSQL ingest scenario: created fresh on the
 * local server, dropped at the end (also when the scenario fails).
 */
import { SQL } from "bun";

export const PG_SERVER = "postgres://postgres@127.0.0.1:5432";

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * Null (with the reason) when the server cannot be reached. With `template` (another scratch
 * database's url, nobody connected to it), a copy of that database: the same seeded rows
 * without seeding twice.
 */
export async function createScratchDatabase(template?: string): Promise<ScratchDatabase | { unreachable: string }> {
  const admin = new SQL({ url: `${PG_SERVER}/postgres`, max: 1, connectionTimeout: 3, idleTimeout: 1 });
  const name = `intake_bench_${process.pid}_${Date.now()}`;
  const from = template ? ` TEMPLATE ${new URL(template).pathname.slice(1)}` : "";
  try {
    await admin.unsafe(`CREATE DATABASE ${name}${from}`);
  } catch (error) {
    await admin.close().catch(() => {});
    return { unreachable: error instanceof Error ? error.message : String(error) };
  }
  return {
    url: `${PG_SERVER}/${name}`,
    async drop() {
      try {
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.close().catch(() => {});
      }
    },
  };
}

/**
 * `vacuum analyze events` on a freshly seeded database: fresh statistics and visibility map, as
 * autovacuum would leave them at some point of the measurement anyway.
 */
export async function vacuumEvents(url: string): Promise<void> {
  const sql = new SQL({ url, max: 1 });
  try {
    await sql.unsafe("vacuum analyze events");
  } finally {
    await sql.close();
  }
}

/**
 * Reads the `events` table and its indexes through the OS page cache (pg_prewarm's `read`
 * mode; contrib's extension, created in the scratch database): as on a server whose memory
 * holds them, not as after this VM paged them out.
 */
export async function prewarmEvents(url: string): Promise<void> {
  const sql = new SQL({ url, max: 1 });
  try {
    await sql.unsafe("create extension if not exists pg_prewarm");
    await sql.unsafe(
      "select pg_prewarm(c.oid::regclass, 'read') from pg_class c " +
        "where c.relname = 'events' or c.oid in (select indexrelid from pg_index where indrelid = 'events'::regclass)",
    );
  } finally {
    await sql.close();
  }
}
