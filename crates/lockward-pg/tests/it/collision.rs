use std::time::Duration;

use lockward_pg::Outcome;
use lockward_pg::testing::TestDb;

use crate::support::{Log, ROLLUP_ID, rollup, start, wait_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_holder_is_reported_with_its_application_name() {
    let db = TestDb::new().await;
    let foreign = lockward_pg::connect(&db.url(), "billing-cron")
        .await
        .expect("connect");
    foreign
        .execute("SELECT pg_advisory_lock($1)", &[&ROLLUP_ID])
        .await
        .unwrap();
    let log = Log::default();
    let worker = start(
        rollup(&db.url(), Duration::from_millis(200)),
        &log,
        0,
        Duration::from_millis(10),
    );
    wait_for("two skipped cycles", Duration::from_secs(10), || {
        log.reports().len() >= 2
    })
    .await;
    worker.shut_down().await;
    for (_, report) in log.reports() {
        match report.outcome {
            Outcome::Collision { holder } => assert_eq!(holder.application_name, "billing-cron"),
            other => panic!("expected a collision, got {other:?}"),
        }
    }
    assert!(
        log.runs().is_empty(),
        "the job never ran while the foreign session held the lock"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_holding_the_lock_is_a_plain_skip_not_a_collision() {
    let db = TestDb::new().await;
    let log = Log::default();
    let every = Duration::from_millis(300);
    let workers: Vec<_> = (0..2)
        .map(|i| {
            start(
                rollup(&db.url(), every),
                &log,
                i,
                Duration::from_millis(100),
            )
        })
        .collect();
    wait_for("skips", Duration::from_secs(10), || {
        log.reports()
            .iter()
            .filter(|(_, r)| matches!(r.outcome, Outcome::Skipped { .. }))
            .count()
            >= 3
    })
    .await;
    for worker in workers {
        worker.shut_down().await;
    }
    let skipped_with_holder = log
        .reports()
        .into_iter()
        .find_map(|(_, r)| match r.outcome {
            Outcome::Skipped {
                holder: Some(holder),
            } => Some(holder),
            _ => None,
        });
    let holder = skipped_with_holder.expect("a skip saw its holder");
    assert!(
        holder
            .application_name
            .starts_with("lockward:pgtest:ADVISORY_LOCK_ROLLUP "),
        "{holder:?}"
    );
    assert!(
        !log.reports()
            .iter()
            .any(|(_, r)| matches!(r.outcome, Outcome::Collision { .. }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_whose_lock_name_has_a_space_are_replicas_not_collisions() {
    // The identity was a string built with spaces in it and split on the first space again, so
    // a name with a space (a project's, or a plugin's in a handover) made every replica a
    // "collision".
    let registry = lockward_registry::parse(
        "lockward.toml",
        "[project]\nname = \"pgtest\"\n[core]\nconstants = \"src/locks.rs\"\n\
         block = { start = 7_000_001, end = 7_000_999 }\n\
         [[lock]]\nid = 7_000_010\nplugin = \"my plugin\"\n",
    )
    .expect("valid")
    .registry;
    let handover = registry.lock(7_000_010).expect("registered");
    let db = TestDb::new().await;
    let log = Log::default();
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let builder = lockward_pg::Worker::builder_for(&registry, handover)
                .expect("holdable")
                .database_url(db.url())
                .every(Duration::from_millis(300));
            start(builder, &log, i, Duration::from_millis(100))
        })
        .collect();
    wait_for("skips", Duration::from_secs(10), || {
        log.reports()
            .iter()
            .filter(|(_, r)| matches!(r.outcome, Outcome::Skipped { holder: Some(_) }))
            .count()
            >= 2
    })
    .await;
    for worker in workers {
        worker.shut_down().await;
    }
    let collisions: Vec<_> = log
        .reports()
        .into_iter()
        .filter(|(_, r)| matches!(r.outcome, Outcome::Collision { .. }))
        .collect();
    assert!(collisions.is_empty(), "{collisions:?}");
}
