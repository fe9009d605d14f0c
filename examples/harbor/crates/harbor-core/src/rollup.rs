//! The invoice rollup: one host per minute sums the day's invoices.

use crate::locks::ADVISORY_LOCK_INVOICE_ROLLUP;

pub async fn run_cycle(client: &tokio_postgres::Client) -> Result<(), tokio_postgres::Error> {
    let row = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&ADVISORY_LOCK_INVOICE_ROLLUP])
        .await?;
    if !row.get::<_, bool>(0) {
        return Ok(()); // another host leads this cycle
    }
    client.execute("CALL rollup_invoices()", &[]).await?;
    client
        .execute("SELECT pg_advisory_unlock($1)", &[&ADVISORY_LOCK_INVOICE_ROLLUP])
        .await?;
    Ok(())
}
