# The billing plugin holds the id core handed over to it.
BILLING_LOCK_ID = 1_001_004  # site(1001004)


def run(cur):
    cur.execute("SELECT pg_try_advisory_lock(%s)" % BILLING_LOCK_ID)  # site(1001004)
    cur.execute(f"SELECT pg_advisory_unlock({BILLING_LOCK_ID})")  # site(1001004)


def release(cur, key):
    cur.execute("SELECT pg_advisory_unlock(%s)", (key,))  # expect(dynamic-key)
