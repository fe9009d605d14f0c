package jobs

// Kotlin jobs. A negative id is still an id.
const val JobsLockKey: Long = -2_000_008L // site(-2000008)
val blockKeySize = -2_000_008L
const val INVOICE_LOCK_KEY = 1_001_001L // expect(undeclared-site) site(1001001)

fun run(conn: Connection) {
    conn.execute("SELECT pg_advisory_lock(${JobsLockKey})") // site(-2000008)
    conn.execute("SELECT pg_advisory_lock(-2000008)") // site(-2000008)
    conn.execute("SELECT pg_advisory_lock(${ADVISORY_LOCK_INVOICE_ROLLUP})") // site(1001001)
    Worker(name = "jobs", advisoryLockId = -2_000_008L) // site(-2000008)
    conn.execute("SELECT pg_advisory_lock(42)") // lockward: allow(unregistered-id) site(42)
    conn.execute("SELECT pg_advisory_unlock($JobsLockKey)") // site(-2000008)
}
