use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lockward_pg::testing::TestDb;
use lockward_pg::{Cycle, JobError, Mode, Outcome};

use crate::support::{BoxedJob, Log, holder_pid, rollup, start_with, wait_for};

async fn count(client: &tokio_postgres::Client) -> i64 {
    client
        .query_one("SELECT count(*) FROM writes", &[])
        .await
        .expect("count")
        .get(0)
}

/// A transaction-mode job that writes a row, then either returns `finish` at once or waits to be
/// cancelled.
fn writing_job(
    started: Arc<AtomicUsize>,
    wait_for_cancel: bool,
    finish: Result<(), &'static str>,
) -> impl FnMut(Cycle) -> BoxedJob + Send + 'static {
    move |cycle: Cycle| {
        let started = started.clone();
        Box::pin(async move {
            let tx = cycle
                .transaction()
                .expect("transaction mode hands the job its transaction");
            let idle: String = tx.query_one("SHOW tcp_keepalives_idle", &[]).await?.get(0);
            assert_eq!(
                idle, "5",
                "the transaction carries the server-side keepalive"
            );
            tx.execute("INSERT INTO writes VALUES (1)", &[]).await?;
            started.fetch_add(1, Ordering::SeqCst);
            if wait_for_cancel {
                cycle.cancelled().await;
                return Err::<(), JobError>("cancelled".into());
            }
            finish.map_err(JobError::from)
        })
    }
}

async fn database_with_table() -> TestDb {
    let db = TestDb::new().await;
    db.connect()
        .await
        .batch_execute("CREATE TABLE writes (x int)")
        .await
        .expect("create table");
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transaction_mode_commits_a_successful_jobs_writes_with_its_ledger_row_and_rolls_back_a_failed_ones()
 {
    let db = database_with_table().await;
    let client = db.connect().await;
    let log = Log::default();
    let started = Arc::new(AtomicUsize::new(0));
    let worker = rollup(&db.url(), Duration::from_millis(200))
        .mode(Mode::Transaction)
        .ledger(true)
        .on_cycle(log.hook(0))
        .build()
        .unwrap();
    let running = start_with(worker, writing_job(started.clone(), false, Ok(())));
    wait_for("two committed cycles", Duration::from_secs(10), || {
        log.led().len() >= 2
    })
    .await;
    running.shut_down().await;
    let committed = i64::try_from(log.led().len()).unwrap();
    assert_eq!(count(&client).await, committed);

    let log = Log::default();
    let worker = rollup(&db.url(), Duration::from_millis(200))
        .mode(Mode::Transaction)
        .ledger(true)
        .on_cycle(log.hook(0))
        .build()
        .unwrap();
    let running = start_with(
        worker,
        writing_job(started.clone(), false, Err("the job failed")),
    );
    wait_for("two failed cycles", Duration::from_secs(10), || {
        log.reports()
            .iter()
            .filter(|(_, r)| matches!(r.outcome, Outcome::Failed { .. }))
            .count()
            >= 2
    })
    .await;
    running.shut_down().await;
    assert_eq!(
        count(&client).await,
        committed,
        "a failed job's writes are rolled back"
    );
    let recorded: i64 = client
        .query_one("SELECT count(*) FROM lockward_ledger", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        recorded, committed,
        "only committed cycles stay in the ledger"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_cancelled_by_a_lost_session_or_by_shutdown_leaves_no_writes() {
    let db = database_with_table().await;
    let client = db.connect().await;
    let log = Log::default();
    let started = Arc::new(AtomicUsize::new(0));
    let worker = rollup(&db.url(), Duration::from_millis(200))
        .mode(Mode::Transaction)
        .on_cycle(log.hook(0))
        .build()
        .unwrap();
    let running = start_with(worker, writing_job(started.clone(), true, Ok(())));
    wait_for("the job to write", Duration::from_secs(10), || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    let pid = holder_pid(&client)
        .await
        .expect("the transaction holds the lock");
    client
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
    wait_for("the loss to be reported", Duration::from_secs(5), || {
        log.reports()
            .iter()
            .any(|(_, r)| matches!(r.outcome, Outcome::Lost { .. }))
    })
    .await;
    assert_eq!(
        count(&client).await,
        0,
        "the terminated transaction's write is gone"
    );

    wait_for("a job in the next session", Duration::from_secs(10), || {
        started.load(Ordering::SeqCst) == 2
    })
    .await;
    running.shut_down().await;
    assert!(
        log.reports()
            .iter()
            .any(|(_, r)| matches!(r.outcome, Outcome::ShutDown { .. })),
        "the cycle ended by shutdown"
    );
    assert_eq!(
        count(&client).await,
        0,
        "the write of the job cancelled by shutdown is rolled back"
    );
    assert_eq!(
        holder_pid(&client).await,
        None,
        "shutdown released the lock"
    );
}

/// A transaction-mode job whose statement fails (the transaction is then aborted), which goes on
/// for `linger` without telling the worker, then returns `finish`.
fn job_with_a_failed_statement(
    linger: Duration,
    finish: Result<(), &'static str>,
) -> impl FnMut(Cycle) -> BoxedJob + Send + 'static {
    move |cycle: Cycle| {
        Box::pin(async move {
            let tx = cycle.transaction().expect("transaction mode");
            tx.batch_execute("SELECT 1 / 0")
                .await
                .expect_err("division by zero");
            tokio::select! {
                () = cycle.cancelled() => return Err::<(), JobError>("cancelled".into()),
                () = tokio::time::sleep(linger) => {}
            }
            finish.map_err(JobError::from)
        })
    }
}

/// Runs `job` in transaction mode until `cycles` cycles were reported; returns the outcomes.
async fn outcomes(
    job: impl FnMut(Cycle) -> BoxedJob + Send + 'static,
    cycles: usize,
) -> Vec<Outcome> {
    let db = TestDb::new().await;
    let log = Log::default();
    // Probe bound 200 ms + 500 ms, well within the job's linger.
    let worker = rollup(&db.url(), Duration::from_millis(200))
        .mode(Mode::Transaction)
        .on_cycle(log.hook(0))
        .build()
        .unwrap();
    let running = start_with(worker, job);
    wait_for("the cycles", Duration::from_secs(20), || {
        log.reports().len() >= cycles
    })
    .await;
    running.shut_down().await;
    log.reports()
        .into_iter()
        .map(|(_, report)| report.outcome)
        .take(cycles)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_statement_in_the_jobs_transaction_is_the_jobs_failure_not_a_lost_lock() {
    let outcomes = outcomes(
        job_with_a_failed_statement(Duration::from_millis(1500), Err("gave up")),
        2,
    )
    .await;
    for outcome in outcomes {
        assert!(
            matches!(&outcome, Outcome::Failed { error, .. } if error == "gave up"),
            "the liveness probe got an answer (an error is one): {outcome:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_returns_ok_from_a_failed_transaction_is_failed_not_led() {
    let outcomes = outcomes(job_with_a_failed_statement(Duration::ZERO, Ok(())), 2).await;
    for outcome in outcomes {
        assert!(
            matches!(&outcome, Outcome::Failed { error, .. } if error.starts_with("commit failed")),
            "COMMIT in a failed transaction rolls back: {outcome:?}"
        );
    }
}
