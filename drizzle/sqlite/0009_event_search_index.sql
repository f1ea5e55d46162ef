-- SPEC §18: the payload text index, an FTS5 table with the trigram tokenizer over events.payload
-- (external content: it stores the index, not a second copy of the payloads). The triggers that
-- keep it, and its first fill, are the store's (src/store/sqlite/search-index.ts): they exist
-- only while INTAKE_EVENT_SEARCH is true (docs/search.md).
CREATE VIRTUAL TABLE `events_fts` USING fts5(payload, content='events', content_rowid='rowid', tokenize='trigram case_sensitive 0');
