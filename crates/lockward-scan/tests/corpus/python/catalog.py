import psycopg

from .locks import ADVISORY_LOCK_INVOICE_ROLLUP, ADVISORY_LOCK_RELOAD_BASE

_CATALOG_LOCK_KEY = 2_000_001  # site(2000001)


def write_catalog(conn, shard):
    """Serialises catalog writes with SELECT pg_advisory_lock(2000001); a docstring is no site."""
    with conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_lock(%s)", (_CATALOG_LOCK_KEY,))  # site(2000001)
        cur.execute(f"SELECT pg_advisory_xact_lock({_CATALOG_LOCK_KEY})")  # site(2000001)
        cur.execute("""
            SELECT pg_try_advisory_lock(2000001)  -- site(2000001)
        """)
        cur.execute("SELECT pg_advisory_lock(%s, %s)" % (ADVISORY_LOCK_RELOAD_BASE, shard))  # site(1001002)
        cur.execute(f"SELECT pg_advisory_lock({ADVISORY_LOCK_RELOAD_BASE}, {shard})")  # site(1001002)
        cur.execute("SELECT pg_advisory_unlock_all()")
        # cur.execute("SELECT pg_advisory_lock(2000001)") is commented out: not a site.
        run_worker(ADVISORY_LOCK_INVOICE_ROLLUP, advisory_lock_id=ADVISORY_LOCK_INVOICE_ROLLUP)  # site(1001001)
        run_worker(None, advisory_lock_id=4_242)  # expect(unregistered-id) site(4242)
        run_worker(None, timeout=2_000_001)


def run_worker(lock, advisory_lock_id: int = 0):
    return psycopg.sql.SQL("SELECT pg_try_advisory_lock({})").format(lock)  # expect(dynamic-key)


def test_release(conn):
    lock_id = 4_243  # a local variable: `*_LOCK_ID` wants a word before LOCK
    assert release(conn, lock_id)


def pg_advisory_lock(conn, key):  # a wrapper being defined is not a call
    return conn.execute("SELECT pg_advisory_lock(%s)", (key,))  # expect(dynamic-key)


def retry(conn):
    attempt = 1
    attempt = 2
    conn.execute("SELECT pg_advisory_lock(%s)", (attempt,))  # expect(dynamic-key): a variable, not a constant


async def write_catalog_async(conn, shard):
    await conn.execute("SELECT pg_advisory_lock($1::bigint)", _CATALOG_LOCK_KEY)  # site(2000001)
    await conn.execute("SELECT pg_advisory_lock($1::int4, $2::int4)", ADVISORY_LOCK_RELOAD_BASE, shard)  # site(1001002)


def write_catalog_in_parts(cur):
    cur.execute(
        "UPDATE catalog SET version = %s; "
        "SELECT pg_advisory_lock(%s)",  # site(2000001)
        (7, _CATALOG_LOCK_KEY),
    )
    cur.execute(f"SELECT pg_advisory_lock({_CATALOG_LOCK_KEY}::bigint)")  # site(2000001)
    cur.execute("SELECT pg_advisory_lock(%(key)s)", {"shard": 3, "key": _CATALOG_LOCK_KEY})  # site(2000001)
    cur.execute("SELECT pg_advisory_unlock(CAST(%s AS bigint))", (_CATALOG_LOCK_KEY,))  # site(2000001)


QUERIES = {
    "lock":
        "SELECT pg_advisory_lock(2000001)"  # site(2000001)
}
