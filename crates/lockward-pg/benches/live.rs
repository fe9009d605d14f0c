//! `lockward live` over 10,000 held advisory locks (goal: under half a second), against the bare
//! read of the same `pg_locks` rows.
//!
//! Runs on a throwaway cluster of its own: the default lock table (64 locks per connection ×
//! 100 connections) cannot hold 10,000 locks, the harness's cluster (200 connections) can.
//! Run with `cargo bench -p lockward-pg --bench live`.

use std::fmt::Write as _;
use std::time::Duration;

#[path = "support/timing.rs"]
mod timing;

use lockward_pg::testing::{Cluster, TestDb};
use timing::{median, millis};

const LOCKS: i64 = 10_000;
const RUNS: usize = 10;

#[tokio::main]
async fn main() {
    let cluster = Cluster::start().await;
    let db = TestDb::on(&cluster).await;
    let holder = db.connect().await;
    // A tenth of the keys are registered ids, a tenth are members of one family, the rest are
    // unknown: every branch of the mapping is exercised.
    holder
        .batch_execute(&format!(
            "SELECT count(pg_advisory_lock(k)) FROM generate_series(1, {}) k;
             SELECT count(pg_advisory_lock(1001, n)) FROM generate_series(1, {}) n;
             SELECT count(pg_advisory_lock(k)) FROM generate_series(5000001, {}) k;",
            LOCKS / 10,
            LOCKS / 10,
            5_000_000 + LOCKS * 8 / 10
        ))
        .await
        .unwrap();
    let registry = registry();
    let connection = lockward_pg::live::connect(&db.url()).await.unwrap();

    let snapshot = connection.snapshot(&registry).await.unwrap();
    assert_eq!(snapshot.locks.len(), usize::try_from(LOCKS).unwrap());

    let live = median(RUNS, || async {
        let snapshot = connection.snapshot(&registry).await.unwrap();
        assert_eq!(snapshot.locks.len(), 10_000);
    })
    .await;
    let raw = median(RUNS, || async {
        let rows = connection
            .client()
            .query(
                "SELECT classid, objid, objsubid, granted, pid FROM pg_locks \
                 WHERE locktype = 'advisory'",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(rows.len(), 10_000);
    })
    .await;
    let round_trip = median(RUNS, || async {
        connection
            .client()
            .query_one("SELECT 1", &[])
            .await
            .unwrap();
    })
    .await;
    println!("live: {LOCKS} held advisory locks");
    println!(
        "  live::snapshot            {:>8.1} ms (median of {RUNS})",
        millis(live)
    );
    println!("  bare pg_locks read        {:>8.1} ms", millis(raw));
    println!("  SELECT 1 round trip       {:>8.3} ms", millis(round_trip));
    println!(
        "  ratio {:.2}x the bare read; goal under 500 ms: {}",
        live.as_secs_f64() / raw.as_secs_f64(),
        if live < Duration::from_millis(500) {
            "met"
        } else {
            "MISSED"
        }
    );
}

fn registry() -> lockward_registry::Registry {
    let mut text = String::from(
        "[project]\nname = \"bench\"\n\n[core]\nconstants = \"locks.rs\"\n\
         block = { start = 1, end = 999_999 }\n\n\
         [[lock]]\nid = 1001\nconstant = \"ADVISORY_LOCK_FAMILY\"\nworker = \"family\"\n\
         key = \"family\"\n",
    );
    for id in 1..=LOCKS / 10 {
        let _ = write!(
            text,
            "\n[[lock]]\nid = {id}\nconstant = \"ADVISORY_LOCK_{id}\"\nworker = \"w{id}\"\n"
        );
    }
    lockward_registry::parse("lockward.toml", &text)
        .unwrap()
        .registry
}
