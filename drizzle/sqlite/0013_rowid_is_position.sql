-- An event's rowid becomes its feed position (the writer inserts rowid = position from now on),
-- so the export reads `rowid > ?` in rowid order and FTS5 returns matches in position order,
-- and events_position_idx, which cost every insert, goes (docs/export.md, "Indexes"). The rows
-- stored before are moved by the store's migrate() right after the migrations
-- (src/store/sqlite/event-rowids.ts), which also rebuilds the FTS5 index keyed by rowid.
DROP INDEX `events_position_idx`;
