//! Reloads one instance's configuration; each instance has its own key in the reload family.

use crate::locks::ADVISORY_LOCK_RELOAD_BASE;

pub async fn reload(client: &tokio_postgres::Client, instance: i32) -> Result<(), tokio_postgres::Error> {
    client
        .execute("SELECT pg_advisory_lock($1, $2)", &[&ADVISORY_LOCK_RELOAD_BASE, &instance])
        .await?;
    client.execute("CALL reload_instance($1)", &[&instance]).await?;
    client
        .execute("SELECT pg_advisory_unlock($1, $2)", &[&ADVISORY_LOCK_RELOAD_BASE, &instance])
        .await?;
    Ok(())
}
