/**
 * An event's rowid is its feed position on SQLite (docs/export.md, "Indexes"): the writer
 * inserts both (event-insert.ts), so the export reads a rowid range and FTS5 returns its
 * matches in position order with no index on position. Rows stored before migration 0013, or
 * renumbered since (SQLite's `VACUUM` may renumber the rowids of a table without an INTEGER
 * PRIMARY KEY), are moved here at start, in migrate(), before the search index is applied.
 */
import type { Database } from "bun:sqlite";

/**
 * Rows are inserted in position order with rowids never above their position, so a first and
 * a last row that agree mean every row does (docs/export.md says why); two primary-key reads.
 */
function aligned(client: Database): boolean {
  const ends = client
    .query<{ ok: number | null }, []>(
      "SELECT (SELECT rowid = position FROM events ORDER BY rowid LIMIT 1) AND " +
        "(SELECT rowid = position FROM events ORDER BY rowid DESC LIMIT 1) AS ok",
    )
    .get();
  return ends?.ok !== 0;
}

/**
 * Moves every row to rowid = position (negative first, so no new rowid meets an old one). The
 * FTS5 index is keyed by rowid: its triggers go and it is emptied, so applySearchIndex then
 * finds them missing and, with search on, recreates them and rebuilds the index.
 */
export function alignEventRowids(client: Database): void {
  if (aligned(client)) return;
  client
    .transaction(() => {
      for (const name of ["events_fts_insert", "events_fts_delete", "events_fts_update"]) {
        client.run(`DROP TRIGGER IF EXISTS ${name}`);
      }
      client.run("INSERT INTO events_fts (events_fts) VALUES ('delete-all')");
      client.run("UPDATE events SET rowid = -position");
      client.run("UPDATE events SET rowid = -rowid");
    })
    .immediate();
}
