/**
 * §18's payload index on PostgreSQL (docs/search.md): pg_trgm's GIN index over the payload as
 * text (`intake_payload_text`, migration 0009). An index, so it is written in the event's own
 * INSERT and commit, without the insert statement knowing about it, and retention or a cascade
 * removes its entries with the rows.
 *
 * INTAKE_EVENT_SEARCH=false: the index is dropped, so ingest pays nothing for it; true (again)
 * builds it over every stored event at start. Both happen at migrate(), under an advisory lock,
 * so instances starting together do it once.
 */
import type { PostgresPool } from "./pool.ts";

const INDEX = "events_payload_trgm_idx";
const LOCK_KEY = 0x1a7a4f;

export async function applySearchIndex(pool: PostgresPool, enabled: boolean): Promise<void> {
  const reserved = await pool.client().reserve();
  try {
    await reserved.unsafe("select pg_advisory_lock($1)", [LOCK_KEY]);
    try {
      const [row] = await reserved.unsafe("select count(*)::int as n from pg_indexes where indexname = $1", [INDEX]);
      const present = (row as { n: number }).n > 0;
      if (enabled && !present) {
        await reserved.unsafe(`create index ${INDEX} on events using gin (intake_payload_text(payload) gin_trgm_ops)`);
      } else if (!enabled && present) {
        await reserved.unsafe(`drop index ${INDEX}`);
      }
    } finally {
      await reserved.unsafe("select pg_advisory_unlock($1)", [LOCK_KEY]);
    }
  } finally {
    reserved.release();
  }
}
