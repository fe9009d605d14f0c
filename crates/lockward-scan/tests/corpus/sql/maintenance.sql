-- Nightly vacuum: SELECT pg_advisory_lock(1001001) in a comment is not a site.
SELECT pg_try_advisory_lock(2000004);  -- site(2000004)
SELECT pg_advisory_unlock(2000004::bigint);  -- site(2000004)
EXECUTE 'SELECT pg_advisory_unlock(2000004)';  -- site(2000004)
/* pg_advisory_lock(1001003) */
CREATE FUNCTION take_reload(shard int) RETURNS boolean AS $$
BEGIN
  RETURN pg_try_advisory_xact_lock(1001002, shard);  -- expect(undeclared-site) site(1001002)
END;
$$ LANGUAGE plpgsql;
SELECT pg_advisory_lock(:lock_id);  -- expect(dynamic-key)
SELECT PG_ADVISORY_LOCK(1001004);  -- expect(handover-in-core-code) site(1001004)
SELECT pg_advisory_unlock(CAST(2000004 AS bigint));  -- site(2000004)
