//! The indexer. `pg_advisory_lock(2000002)` in a doc comment is not a site.

pub const ADVISORY_LOCK_INDEXER: i64 = 2_000_002i64; // site(2000002)
const BLOCK_KEY_SIZE: usize = 2_000_002;
static LOOKUP_LOCK_KEY: i64 = 0x1E_8499; // expect(unregistered-id) site(2000025)

/* A block comment: pg_advisory_lock(1001003) */
pub async fn index(client: &tokio_postgres::Client, shard: i32) -> Result<(), tokio_postgres::Error> {
    client.execute("SELECT pg_advisory_lock($1)", &[&ADVISORY_LOCK_INDEXER]).await?; // site(2000002)
    client.execute(r#"SELECT pg_try_advisory_lock(2000002)"#, &[]).await?; // site(2000002)
    let label = 'x';
    let _ = sqlx::query!("SELECT pg_advisory_unlock(1001003)"); // expect(retired-id-in-use) site(1001003)
    let _ = format!("SELECT pg_advisory_xact_lock({}, {shard})", crate::locks::ADVISORY_LOCK_RELOAD_BASE); // site(1001002)
    let _worker = Worker { advisory_lock_id: 2_000_002, name: "indexer" }; // site(2000002)
    sqlx::query("SELECT pg_advisory_lock($1)").bind(ADVISORY_LOCK_INDEXER).execute(pool).await?; // site(2000002)
    sqlx::query("SELECT pg_advisory_lock($1, $2)") // site(1001002)
        .bind(crate::locks::ADVISORY_LOCK_RELOAD_BASE)
        .bind(shard)
        .execute(pool)
        .await?;
    let (lock, next) = ("SELECT pg_try_advisory_lock($1::int8)", 2); // expect(dynamic-key)
    Ok(())
}
