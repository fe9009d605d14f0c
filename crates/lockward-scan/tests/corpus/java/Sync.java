package billing;

/** The billing sync. {@code pg_advisory_lock(2000007)} in Javadoc is not a site. */
/* Serves /billing/* (a Java comment ends at its first close). */
public final class Sync {
    public static final long BILLING_SYNC_LOCK_ID = 2_000_007L; // site(2000007)
    private static final long BLOCK_KEY_SIZE = 2_000_007L;
    static final long AUDIT_LOCK_ID = 2_000_007L; // expect(duplicate-definition) site(2000007)
    private static final char QUOTE = '"';

    void run(Connection conn) throws SQLException {
        conn.prepareStatement("SELECT pg_try_advisory_lock(" + BILLING_SYNC_LOCK_ID + ")"); // site(2000007)
        jdbc.update("SELECT pg_advisory_unlock(?)", BILLING_SYNC_LOCK_ID); // site(2000007)
        jdbc.update("SELECT pg_advisory_lock(?, ?)", BILLING_SYNC_LOCK_ID, shard); // expect(key-shape-mismatch) site(2000007)
        jdbc.update("SELECT pg_advisory_lock(?) " + "AS locked", BILLING_SYNC_LOCK_ID); // site(2000007)
        conn.prepareStatement("""
            SELECT pg_advisory_unlock(2000007) -- site(2000007)
            """);
    }
}
