use std::time::Duration;

use lockward_pg::Outcome;
use lockward_pg::testing::TestDb;

use crate::support::{Log, rollup, start, wait_for};

/// Runs a ledger worker on `url` until it led a cycle, or reports what it saw instead.
async fn leads_with_the_ledger(url: &str) -> Result<(), Vec<Outcome>> {
    let log = Log::default();
    let worker = start(
        rollup(url, Duration::from_millis(200)).ledger(true),
        &log,
        0,
        Duration::from_millis(10),
    );
    wait_for("three cycles", Duration::from_secs(10), || {
        log.reports().len() >= 3
    })
    .await;
    worker.shut_down().await;
    if log.led().is_empty() {
        Err(log.reports().into_iter().map(|(_, r)| r.outcome).collect())
    } else {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_that_may_not_create_tables_uses_a_ledger_created_before_it() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    leads_with_the_ledger(&db.url())
        .await
        .expect("the first worker creates the ledger and leads");
    let role = format!("{}_app", db.name());
    admin
        .batch_execute(&format!(
            "REVOKE CREATE ON SCHEMA public FROM PUBLIC; CREATE ROLE {role} LOGIN; \
             GRANT SELECT, INSERT, UPDATE ON lockward_ledger TO {role}; \
             GRANT USAGE ON SEQUENCE lockward_fencing_token TO {role}"
        ))
        .await
        .unwrap();
    let url = format!("postgres://{role}@{}/{}", db.server_addr(), db.name());
    let led = leads_with_the_ledger(&url).await;
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}"))
        .await
        .unwrap();
    led.expect("the worker without CREATE leads with the existing ledger");
}
