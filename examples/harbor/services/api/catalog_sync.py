"""Nightly catalog sync from the supplier feed; takes the same lock as catalog writes."""

_CATALOG_LOCK_KEY = 8_675_309


def sync(conn, feed):
    with conn.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s)", (_CATALOG_LOCK_KEY,))
        if not cur.fetchone()[0]:
            return False
        try:
            for item in feed:
                cur.execute("INSERT INTO catalog_staging VALUES (%s, %s)", (item.sku, item.price))
            cur.execute("CALL merge_catalog_staging()")
        finally:
            cur.execute("SELECT pg_advisory_unlock(%s)", (_CATALOG_LOCK_KEY,))
    return True
