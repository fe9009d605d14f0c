use std::time::Duration;

use lockward_pg::testing::TestDb;
use lockward_pg::{Error, Mode, Outcome};

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

/// The ledger as lockward created it before it recorded periods: no `period_ms`, no index on
/// `cycle_start`.
const OLD_LEDGER: &str = "\
CREATE SEQUENCE lockward_fencing_token;
CREATE TABLE lockward_ledger (
    lock_key         text        NOT NULL,
    cycle_start      timestamptz NOT NULL,
    fencing_token    bigint      NOT NULL,
    application_name text        NOT NULL,
    host             text        NOT NULL,
    pid              integer     NOT NULL,
    started_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at      timestamptz,
    outcome          text,
    PRIMARY KEY (lock_key, cycle_start)
);
INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, host, pid,
                             finished_at, outcome)
VALUES ('7000001', '2026-01-01T00:00:00Z', nextval('lockward_fencing_token'), 'old', 'old-host',
        1, '2026-01-01T00:00:01Z', 'done');";

/// Whether the ledger has the period column and an index led by `cycle_start`.
async fn upgraded(client: &tokio_postgres::Client) -> (bool, bool) {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT FROM information_schema.columns \
                            WHERE table_name = 'lockward_ledger' AND column_name = 'period_ms'), \
                    EXISTS (SELECT FROM pg_indexes WHERE tablename = 'lockward_ledger' \
                            AND indexdef LIKE '%(cycle_start)')",
            &[],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_an_older_lockward_created_is_upgraded_by_the_first_worker_and_keeps_its_rows() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    admin.batch_execute(OLD_LEDGER).await.unwrap();
    assert_eq!(upgraded(&admin).await, (false, false));
    leads_with_the_ledger(&db.url())
        .await
        .expect("the worker upgrades the ledger and leads");
    assert_eq!(upgraded(&admin).await, (true, true));
    let rows = admin
        .query(
            "SELECT host, period_ms FROM lockward_ledger ORDER BY cycle_start",
            &[],
        )
        .await
        .unwrap();
    let old: (String, Option<i64>) = (rows[0].get(0), rows[0].get(1));
    assert_eq!(old, ("old-host".to_owned(), None), "the old row is kept");
    assert!(rows.len() > 1);
    for row in &rows[1..] {
        assert_eq!(
            row.get::<_, Option<i64>>(1),
            Some(200),
            "new rows record the period"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_that_may_not_alter_an_old_ledger_is_told_the_sql_its_owner_must_run() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    admin.batch_execute(OLD_LEDGER).await.unwrap();
    let role = format!("{}_app", db.name());
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN; \
             GRANT SELECT, INSERT, UPDATE ON lockward_ledger TO {role}; \
             GRANT USAGE ON SEQUENCE lockward_fencing_token TO {role}"
        ))
        .await
        .unwrap();
    let url = format!("postgres://{role}@{}/{}", db.server_addr(), db.name());
    let worker = rollup(&url, Duration::from_millis(200))
        .ledger(true)
        .build()
        .unwrap();
    let refused = worker.preflight().await;
    // The owner runs what the error says; the worker then opens its session.
    let sql = match &refused {
        Err(Error::LedgerUpgrade { sql, .. }) => Some(*sql),
        _ => None,
    };
    if let Some(sql) = sql {
        admin.batch_execute(sql).await.unwrap();
    }
    let after = worker.preflight().await;
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}"))
        .await
        .unwrap();
    let error = refused.expect_err("a role that does not own the table cannot alter it");
    let message = error.to_string();
    assert!(matches!(error, Error::LedgerUpgrade { .. }), "{message}");
    assert!(message.contains("SQLSTATE 42501"), "{message}");
    assert!(message.contains(lockward_pg::ledger::UPGRADE), "{message}");
    assert!(
        message.contains("ALTER TABLE lockward_ledger ADD COLUMN IF NOT EXISTS period_ms bigint"),
        "{message}"
    );
    after.expect("the upgraded ledger is used by the role that could not upgrade it");
    assert_eq!(upgraded(&admin).await, (true, true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_claim_records_the_period_in_session_and_transaction_mode() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    for (mode, every) in [(Mode::Session, 200_i64), (Mode::Transaction, 250)] {
        let log = Log::default();
        let worker = start(
            rollup(&db.url(), Duration::from_millis(every.unsigned_abs()))
                .mode(mode)
                .ledger(true),
            &log,
            0,
            Duration::from_millis(10),
        );
        wait_for("two led cycles", Duration::from_secs(10), || {
            log.led().len() >= 2
        })
        .await;
        worker.shut_down().await;
        let starts: Vec<std::time::SystemTime> =
            log.led().iter().map(|(_, report)| report.start).collect();
        let periods: Vec<Option<i64>> = admin
            .query(
                "SELECT period_ms FROM lockward_ledger WHERE cycle_start = ANY($1)",
                &[&starts],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        assert_eq!(periods, vec![Some(every); starts.len()], "{mode:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_period_that_is_not_whole_milliseconds_is_recorded_as_unknown() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let log = Log::default();
    let worker = start(
        rollup(&db.url(), Duration::from_micros(200_500)).ledger(true),
        &log,
        0,
        Duration::from_millis(10),
    );
    wait_for("a led cycle", Duration::from_secs(10), || {
        !log.led().is_empty()
    })
    .await;
    worker.shut_down().await;
    let periods: Vec<Option<i64>> = admin
        .query("SELECT period_ms FROM lockward_ledger", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(!periods.is_empty());
    assert!(periods.iter().all(Option::is_none), "{periods:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_upgrading_one_old_ledger_at_once_all_open_their_sessions() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    admin.batch_execute(OLD_LEDGER).await.unwrap();
    let worker = || {
        rollup(&db.url(), Duration::from_millis(200))
            .ledger(true)
            .build()
            .unwrap()
    };
    let (a, b, c) = (worker(), worker(), worker());
    let (a, b, c) = tokio::join!(a.preflight(), b.preflight(), c.preflight());
    for result in [a, b, c] {
        result.expect("a worker that lost the race to upgrade uses the upgraded ledger");
    }
    assert_eq!(upgraded(&admin).await, (true, true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_the_owner_built_concurrently_under_another_name_is_the_upgrade_s_index() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    admin.batch_execute(OLD_LEDGER).await.unwrap();
    admin
        .batch_execute(
            "ALTER TABLE lockward_ledger ADD COLUMN period_ms bigint, ADD COLUMN detail text, \
             ADD COLUMN stopped_at timestamptz",
        )
        .await
        .unwrap();
    admin
        .batch_execute("CREATE INDEX CONCURRENTLY ledger_by_time ON lockward_ledger (cycle_start)")
        .await
        .unwrap();
    // A role that could not upgrade anything opens its session: nothing is left to upgrade.
    let role = format!("{}_app", db.name());
    admin
        .batch_execute(&format!(
            "CREATE ROLE {role} LOGIN; \
             GRANT SELECT, INSERT, UPDATE ON lockward_ledger TO {role}; \
             GRANT USAGE ON SEQUENCE lockward_fencing_token TO {role}"
        ))
        .await
        .unwrap();
    let url = format!("postgres://{role}@{}/{}", db.server_addr(), db.name());
    let opened = rollup(&url, Duration::from_millis(200))
        .ledger(true)
        .build()
        .unwrap()
        .preflight()
        .await;
    let indexes: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'lockward_ledger'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    admin
        .batch_execute(&format!("DROP OWNED BY {role}; DROP ROLE {role}"))
        .await
        .unwrap();
    opened.expect("the ledger needs no upgrade");
    assert_eq!(
        indexes, 2,
        "the primary key and the owner's index, no second one"
    );
}

/// Issue 19: another project's worker on this worker's key led the cycle and let go before
/// this worker tried, so the lock showed nothing; the ledger's row is the other project's. That
/// is a collision (`LedByAnotherProject`), not a cycle that "already ran" here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cycle_the_ledger_says_another_project_led_is_a_collision() {
    let db = TestDb::new().await;
    let client = db.connect().await;
    lockward_pg::testing::seed_ledger(
        &client,
        "pgtest",
        &[],
        Duration::from_secs(1),
        0,
        std::time::SystemTime::now(),
    )
    .await;
    // Reports' rows for the next minute of 1-second cycles.
    client
        .execute(
            "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, \
                                          host, pid, started_at, finished_at, outcome, period_ms) \
             SELECT $1, date_trunc('second', now()) + i * interval '1 second', \
                    nextval('lockward_fencing_token'), 'lockward:reports:ROLLUP 9@r', 'r', 9, \
                    now(), now(), 'done', 1000 \
             FROM generate_series(0, 60) i",
            &[&crate::support::ROLLUP_ID.to_string()],
        )
        .await
        .expect("reports' rows");
    let log = Log::default();
    let worker = start(
        rollup(&db.url(), Duration::from_secs(1)).ledger(true),
        &log,
        0,
        Duration::from_millis(10),
    );
    wait_for("two cycles", Duration::from_secs(15), || {
        log.reports().len() >= 2
    })
    .await;
    worker.shut_down().await;
    let outcomes: Vec<Outcome> = log.reports().into_iter().map(|(_, r)| r.outcome).collect();
    assert!(
        outcomes.iter().all(|outcome| matches!(
            outcome,
            Outcome::LedByAnotherProject { project, .. } if project == "reports"
        )),
        "{outcomes:?}"
    );
}
