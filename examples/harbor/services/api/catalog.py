"""Catalog writes: one writer at a time across every API host."""

from contextlib import contextmanager

# Registered in lockward.toml as an external: the API predates the registry.
_CATALOG_LOCK_KEY = 8_675_309


@contextmanager
def catalog_write_lock(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_lock(%s)", (_CATALOG_LOCK_KEY,))
    try:
        yield
    finally:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", (_CATALOG_LOCK_KEY,))
