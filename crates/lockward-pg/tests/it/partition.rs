//! A silent partition of the leader: the job must be gone before the server can free the lock,
//! so the cancel grace has to fit inside the server-side keepalive bound; and a transaction-mode
//! session keeps that bound outside its lock transaction too.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lockward_pg::testing::TestDb;
use lockward_pg::{Cycle, Error, JobError, Keepalive, Mode, PARTITION_MARGIN, Worker};

use crate::support::{BoxedJob, ROLLUP, registry, rollup, start_with, wait_for};

fn defaults() -> lockward_pg::WorkerBuilder {
    Worker::builder(&registry(), ROLLUP)
        .expect("ROLLUP is registered")
        .database_url("postgres://u@127.0.0.1/db")
        .every(Duration::from_secs(1))
}

#[test]
fn the_default_cancel_grace_ends_before_the_server_frees_a_partitioned_leaders_lock() {
    let builder = defaults();
    // The 8 s keepalive bound, less 3 s to tell the loss (probe interval + timeout) and the
    // margin.
    assert_eq!(Keepalive::default().bound(), Duration::from_secs(8));
    assert_eq!(PARTITION_MARGIN, Duration::from_secs(1));
    assert_eq!(builder.max_cancel_grace(), Some(Duration::from_secs(4)));
    builder.build().expect("the defaults fit");
}

#[test]
fn a_cancel_grace_that_outlasts_the_servers_keepalive_bound_is_refused() {
    // The old default: loss told at 3 s, SIGKILL at 13 s, the lock freed by the server at 8 s.
    let error = defaults()
        .cancel_grace(Duration::from_secs(10))
        .build()
        .unwrap_err();
    let Error::CancelGrace {
        grace,
        limit,
        bound,
        detection,
    } = error
    else {
        panic!("not a cancel grace error: {error}");
    };
    assert_eq!(
        (grace, limit, bound, detection),
        (
            Duration::from_secs(10),
            Some(Duration::from_secs(4)),
            Duration::from_secs(8),
            Duration::from_secs(3)
        )
    );
    let message = error.to_string();
    assert!(
        message.contains("a cancel grace of 10s does not fit")
            && message.contains("keepalive bound of 8s")
            && message.contains("at most 4s for the grace"),
        "{message}"
    );
}

#[test]
fn a_longer_keepalive_makes_room_for_a_longer_cancel_grace() {
    let builder = defaults()
        .cancel_grace(Duration::from_secs(10))
        .keepalive(Keepalive {
            idle: Duration::from_secs(11),
            ..Keepalive::default()
        });
    assert_eq!(builder.max_cancel_grace(), Some(Duration::from_secs(10)));
    builder.build().expect("10 s fits a 14 s bound");
}

#[test]
fn a_probe_slower_than_the_keepalive_bound_leaves_no_grace_and_is_refused() {
    let builder = defaults().probe(Duration::from_secs(5), Duration::from_secs(5));
    assert_eq!(builder.max_cancel_grace(), None);
    let error = builder.build().unwrap_err();
    assert!(
        error.to_string().contains("no time for a grace at all"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_mode_session_keeps_the_server_side_keepalive_outside_its_transaction() {
    // The keepalive was `SET LOCAL` in the lock transaction only: outside it (a standby between
    // attempts, a leader between cycles) the server backend was on the system's default of
    // hours, and a cut-off standby's backend lingered that long.
    let db = TestDb::new().await;
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let shown = Arc::clone(&seen);
    let worker = rollup(&db.url(), Duration::from_millis(300))
        .mode(Mode::Transaction)
        .build()
        .expect("worker settings");
    let job = move |cycle: Cycle| -> BoxedJob {
        let shown = Arc::clone(&shown);
        Box::pin(async move {
            let client = cycle.transaction().expect("transaction mode");
            // Step outside the lock transaction to read the session's own settings, then open
            // one again for the worker to commit.
            let rows = client
                .simple_query("COMMIT; SHOW tcp_keepalives_idle; SHOW tcp_user_timeout; BEGIN")
                .await?;
            let values: Vec<String> = rows
                .iter()
                .filter_map(|message| match message {
                    tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
                    _ => None,
                })
                .collect();
            shown
                .lock()
                .unwrap()
                .push((values[0].clone(), values[1].clone()));
            Ok::<(), JobError>(())
        })
    };
    let running = start_with(worker, job);
    wait_for("a led cycle", Duration::from_secs(15), || {
        !seen.lock().unwrap().is_empty()
    })
    .await;
    running.shut_down().await;
    let (idle, user_timeout) = seen.lock().unwrap()[0].clone();
    assert_eq!(
        (idle.as_str(), user_timeout.as_str()),
        ("5", "8000"),
        "the session's keepalive outside the lock transaction"
    );
}
