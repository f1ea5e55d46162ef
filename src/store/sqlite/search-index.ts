/**
 * §18's payload index on SQLite (docs/search.md): `events_fts`, an FTS5 table with the trigram
 * tokenizer over `events.payload` as external content (migration 0009), kept by triggers on
 * `events`. The triggers write the index in the event's own transaction, so neither the event
 * insert (event-insert.ts, which runs in the writer worker) nor anything else that writes
 * events needs to know about it, and a cascade or retention delete removes its entries too.
 *
 * INTAKE_EVENT_SEARCH=false: no triggers and an empty index, so ingest pays nothing for it.
 * Turning it back on creates the triggers and rebuilds the index from every stored payload in
 * one transaction at start (migrate()).
 */
import type { Database } from "bun:sqlite";

const TRIGGERS = ["events_fts_insert", "events_fts_delete", "events_fts_update"] as const;

const CREATE_TRIGGERS = [
  "CREATE TRIGGER events_fts_insert AFTER INSERT ON events BEGIN " +
    "INSERT INTO events_fts (rowid, payload) VALUES (new.rowid, new.payload); END",
  // External content: the index forgets a row by being told the values it indexed.
  "CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN " +
    "INSERT INTO events_fts (events_fts, rowid, payload) VALUES ('delete', old.rowid, old.payload); END",
  // Payloads are never updated (the exact bytes received); kept right should that change.
  "CREATE TRIGGER events_fts_update AFTER UPDATE OF payload ON events BEGIN " +
    "INSERT INTO events_fts (events_fts, rowid, payload) VALUES ('delete', old.rowid, old.payload); " +
    "INSERT INTO events_fts (rowid, payload) VALUES (new.rowid, new.payload); END",
];

/** Makes the index match the setting; a no-op when it already does. Call after the migrations. */
export function applySearchIndex(client: Database, enabled: boolean): void {
  const present = client
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'events_fts_%'")
    .all()
    .map((row) => row.name);
  const complete = TRIGGERS.every((name) => present.includes(name));
  if (enabled && complete) return;
  if (!enabled && present.length === 0) return;
  client
    .transaction(() => {
      for (const name of present) client.run(`DROP TRIGGER ${name}`);
      if (enabled) {
        for (const statement of CREATE_TRIGGERS) client.run(statement);
        client.run("INSERT INTO events_fts (events_fts) VALUES ('rebuild')");
      } else {
        client.run("INSERT INTO events_fts (events_fts) VALUES ('delete-all')");
      }
    })
    .immediate();
}
