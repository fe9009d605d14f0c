"""Shipping labels: the label printer queue and the carrier sync each have one leader."""

SHIPPING_LABEL_QUEUE_LOCK_ID = 7_300_001
SHIPPING_CARRIER_SYNC_LOCK_ID = 7_300_002


def drain_label_queue(cur):
    cur.execute("SELECT pg_try_advisory_lock(%s)", (SHIPPING_LABEL_QUEUE_LOCK_ID,))
    if not cur.fetchone()[0]:
        return
    try:
        cur.execute("CALL print_pending_labels()")
    finally:
        cur.execute("SELECT pg_advisory_unlock(%s)", (SHIPPING_LABEL_QUEUE_LOCK_ID,))
