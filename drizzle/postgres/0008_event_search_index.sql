-- SPEC §18: the payload text index is pg_trgm's GIN index over the payload as text. convert_from
-- is STABLE (it depends on the encoding tables), so an index expression needs this IMMUTABLE
-- wrapper; payloads are valid UTF-8 by the ingest rule. The index itself is the store's
-- (src/store/postgres/search-index.ts): it exists only while INTAKE_EVENT_SEARCH is true
-- (docs/search.md).
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE OR REPLACE FUNCTION intake_payload_text(bytea) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT convert_from($1, 'UTF8') $$;
