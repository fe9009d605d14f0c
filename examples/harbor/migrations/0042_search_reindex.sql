-- The search reindex job, run by pg_cron on one host only.
CREATE OR REPLACE FUNCTION reindex_search() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock(1001006) THEN
        RETURN;
    END IF;
    REINDEX TABLE CONCURRENTLY search_documents;
END;
$$;
