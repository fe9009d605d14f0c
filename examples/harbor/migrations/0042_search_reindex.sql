-- The search reindex job, run by pg_cron on one host only. SQL cannot import the Rust
-- constant, so the line says it is the same worker's lock (ADVISORY_LOCK_SEARCH_REINDEX).
CREATE OR REPLACE FUNCTION reindex_search() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(1001006) THEN  -- lockward: allow(undeclared-site)
        RETURN;
    END IF;
    REINDEX TABLE CONCURRENTLY search_documents;
END;
$$;
