//! Through a real pgbouncer (Debian's package), in transaction and in session pooling: session
//! mode refused behind transaction pooling, transaction mode and the holder lookup working
//! through it (no named prepared statements), session pooling fine in session mode.

use std::time::Duration;

use lockward_pg::testing::{Pgbouncer, Pooling, TestDb};
use lockward_pg::{Error, Mode, Outcome, Pooler};

use crate::support::{Log, ROLLUP_ID, assert_no_overlap, rollup, start, wait_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_mode_refuses_to_lead_behind_transaction_pooling() {
    let db = TestDb::new().await;
    let Some(bouncer) = Pgbouncer::start(&db, Pooling::Transaction) else {
        return;
    };
    let every = Duration::from_millis(200);
    let worker = rollup(&bouncer.url(), every).build().expect("settings");
    match worker.preflight().await {
        Err(Error::SessionUnproven(message)) => {
            assert!(
                message.contains("something is in between")
                    && message.contains("--transaction")
                    && message.contains("--pooler session"),
                "the refusal names the evidence and the fixes: {message}"
            );
        }
        other => panic!("session mode was not refused behind transaction pooling: {other:?}"),
    }

    // Run anyway: the worker stops with the refusal, before any cycle; nothing holds the lock.
    let log = Log::default();
    let running = start(
        rollup(&bouncer.url(), every),
        &log,
        0,
        Duration::from_millis(10),
    );
    let stopped = tokio::time::timeout(Duration::from_secs(15), running.task)
        .await
        .expect("the worker stops on its own")
        .expect("the worker task");
    assert!(
        matches!(stopped, Err(Error::SessionUnproven(_))),
        "the worker stops with the refusal: {stopped:?}"
    );
    assert!(log.runs().is_empty(), "the job ran: {:?}", log.reports());
    let direct = db.connect().await;
    assert_eq!(crate::support::holder_pid(&direct).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_mode_leads_through_session_pooling_when_told_so() {
    let db = TestDb::new().await;
    let Some(bouncer) = Pgbouncer::start(&db, Pooling::Session) else {
        return;
    };
    let every = Duration::from_millis(200);
    // Untold, a session pooler is a hop like any other: not proven, refused.
    let untold = rollup(&bouncer.url(), every).build().expect("settings");
    assert!(
        matches!(untold.preflight().await, Err(Error::SessionUnproven(_))),
        "a pooler in between is not taken for a direct connection"
    );
    let worker = rollup(&bouncer.url(), every)
        .pooler(Pooler::Session)
        .build()
        .expect("settings");
    worker.preflight().await.expect("session pooling is fine");
    let log = Log::default();
    let workers: Vec<_> = (0..2)
        .map(|i| {
            start(
                rollup(&bouncer.url(), every)
                    .pooler(Pooler::Session)
                    .ledger(true),
                &log,
                i,
                Duration::from_millis(50),
            )
        })
        .collect();
    wait_for("five led cycles", Duration::from_secs(20), || {
        log.led().len() >= 5
    })
    .await;
    for worker in workers {
        worker.shut_down().await;
    }
    for (_, report) in log.reports() {
        assert!(
            matches!(
                report.outcome,
                Outcome::Led { .. } | Outcome::Skipped { .. } | Outcome::AlreadyRun
            ),
            "{:?}; pgbouncer log:\n{}",
            report.outcome,
            bouncer.log()
        );
    }
    assert_no_overlap(&log.runs());
}

/// Three workers in transaction mode with the ledger, through a round-robin transaction-pooling
/// pgbouncer 1.18 (no prepared-statement support): the claim, the finish and the holder lookup
/// run as unnamed statements wherever the pooler puts them. (Across processes, where statement
/// names collide, `lockward run`'s test covers it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transaction_mode_with_three_workers_through_transaction_pooling_never_fails() {
    let db = TestDb::new().await;
    let Some(bouncer) = Pgbouncer::start(&db, Pooling::TransactionRoundRobin) else {
        return;
    };
    let every = Duration::from_millis(150);
    let log = Log::default();
    let workers: Vec<_> = (0..3)
        .map(|i| {
            start(
                rollup(&bouncer.url(), every)
                    .mode(Mode::Transaction)
                    .ledger(true),
                &log,
                i,
                Duration::from_millis(40),
            )
        })
        .collect();
    wait_for("twenty led cycles", Duration::from_secs(30), || {
        log.led().len() >= 20
    })
    .await;
    for worker in workers {
        worker.shut_down().await;
    }
    for (_, report) in log.reports() {
        assert!(
            matches!(
                report.outcome,
                Outcome::Led { .. } | Outcome::Skipped { .. } | Outcome::AlreadyRun
            ),
            "{:?}; pgbouncer log:\n{}",
            report.outcome,
            bouncer.log()
        );
    }
    assert_no_overlap(&log.runs());
    let direct = db.connect().await;
    let rows: i64 = direct
        .query_one(
            "SELECT count(*) FROM lockward_ledger WHERE outcome = 'done'",
            &[],
        )
        .await
        .expect("ledger")
        .get(0);
    assert_eq!(usize::try_from(rows).unwrap(), log.led().len());
}

/// Before, the lookup prepared a named statement, then executed it in a second round trip that a
/// round-robin pooler sent to another server session (`prepared statement "s5" does not
/// exist`), and the failure was logged at debug level: the collision went unreported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holder_lookup_reports_a_foreign_holder_through_transaction_pooling() {
    let db = TestDb::new().await;
    let Some(bouncer) = Pgbouncer::start(&db, Pooling::TransactionRoundRobin) else {
        return;
    };
    let foreign = lockward_pg::connect(&db.url(), "billing-cron")
        .await
        .expect("connect");
    foreign
        .batch_execute(&format!("SELECT pg_advisory_lock({ROLLUP_ID})"))
        .await
        .unwrap();
    let log = Log::default();
    let workers: Vec<_> = (0..2)
        .map(|i| {
            start(
                rollup(&bouncer.url(), Duration::from_millis(200)).mode(Mode::Transaction),
                &log,
                i,
                Duration::from_millis(10),
            )
        })
        .collect();
    wait_for("four skipped cycles", Duration::from_secs(15), || {
        log.reports().len() >= 4
    })
    .await;
    for worker in workers {
        worker.shut_down().await;
    }
    for (_, report) in log.reports() {
        match report.outcome {
            Outcome::Collision { holder } => assert_eq!(holder.application_name, "billing-cron"),
            other => panic!(
                "expected a collision, got {other:?}; pgbouncer log:\n{}",
                bouncer.log()
            ),
        }
    }
    assert!(log.runs().is_empty());
}

/// Round robin: the two connections at open are served by different server sessions, so the
/// refusal comes from the cycle's own statements (the identity's `SET` and the try-lock each
/// return the pid they ran on), and the job still never runs.
/// Told, wrongly, that the pooler pools sessions: the worker still stops at the first statement
/// that answers from another backend, with the refusal, never retrying past it, and no lock is
/// left on the pooler's server connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_mode_told_wrongly_stops_when_its_statements_move_between_server_sessions() {
    let db = TestDb::new().await;
    let Some(bouncer) = Pgbouncer::start(&db, Pooling::TransactionRoundRobin) else {
        return;
    };
    let log = Log::default();
    let running = start(
        rollup(&bouncer.url(), Duration::from_millis(200)).pooler(Pooler::Session),
        &log,
        0,
        Duration::from_millis(10),
    );
    let stopped = tokio::time::timeout(Duration::from_secs(30), running.task)
        .await
        .expect("the worker stops on its own")
        .expect("the worker task");
    assert!(
        matches!(&stopped, Err(Error::TransactionPooling(message)) if message.contains("transaction pooling")),
        "the worker stops with the refusal: {stopped:?}"
    );
    assert!(log.runs().is_empty(), "the job ran: {:?}", log.reports());
    let direct = db.connect().await;
    assert_eq!(
        crate::support::holder_pid(&direct).await,
        None,
        "a lock was left behind"
    );
}
