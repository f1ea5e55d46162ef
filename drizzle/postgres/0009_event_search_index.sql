-- SPEC §18: the payload text index is pg_trgm's GIN index over the payload as text. convert_from
-- is STABLE (it depends on the encoding tables), so an index expression needs this IMMUTABLE
-- wrapper. The store keeps any bytes (ingest admits only UTF-8 JSON, but the store does not
-- judge): bytes that are not valid UTF-8 (or hold a NUL, which text cannot) index as NULL, found
-- by no search, instead of failing their insert. The handler's block writes nothing, so it
-- takes no subtransaction id.
-- The index itself is the store's (src/store/postgres/search-index.ts): it exists only while
-- INTAKE_EVENT_SEARCH is true (docs/search.md).
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE OR REPLACE FUNCTION intake_payload_text(payload bytea) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
BEGIN
  RETURN convert_from(payload, 'UTF8');
EXCEPTION WHEN character_not_in_repertoire OR untranslatable_character THEN
  RETURN NULL;
END
$$;
