use std::collections::BTreeMap;
use std::time::Duration;

use lockward_pg::Outcome;
use lockward_pg::Pooler;
use lockward_pg::testing::{Proxy, TestDb};

use crate::support::{Log, assert_no_overlap, rollup, start, wait_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_workers_over_many_cycles_never_overlap_and_each_cycle_has_one_leader() {
    let db = TestDb::new().await;
    let log = Log::default();
    let every = Duration::from_millis(200);
    let workers: Vec<_> = (0..4)
        .map(|i| start(rollup(&db.url(), every), &log, i, Duration::from_millis(60)))
        .collect();
    wait_for("20 led cycles", Duration::from_secs(30), || {
        log.led().len() >= 20
    })
    .await;
    for worker in workers {
        worker.shut_down().await;
    }
    let runs = log.runs();
    assert_no_overlap(&runs);
    let mut per_cycle: BTreeMap<_, usize> = BTreeMap::new();
    for report in log.reports() {
        if matches!(report.1.outcome, Outcome::Led { .. }) {
            *per_cycle.entry(report.1.start).or_default() += 1;
        }
    }
    assert!(
        per_cycle.values().all(|&n| n == 1),
        "a cycle was led twice: {per_cycle:?}"
    );
    let skipped = log
        .reports()
        .iter()
        .filter(|(_, r)| matches!(r.outcome, Outcome::Skipped { .. }))
        .count();
    assert!(
        skipped >= 20,
        "the other workers skipped the cycles they lost ({skipped} skips)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_ledger_a_worker_that_reaches_the_lock_late_does_not_run_the_cycle_again() {
    let db = TestDb::new().await;
    // One worker reaches the server through a slow link: its try-lock arrives after the leader
    // (a fast job) released the lock, within the same cycle.
    let slow = Proxy::start(db.server_addr()).await;
    slow.set_delay(Duration::from_millis(100));
    let log = Log::default();
    let every = Duration::from_millis(600);
    let fast_worker = start(
        rollup(&db.url(), every).ledger(true),
        &log,
        0,
        Duration::from_millis(20),
    );
    let slow_worker = start(
        rollup(&db.url_via(slow.addr()), every)
            .pooler(Pooler::Session)
            .ledger(true)
            .probe(Duration::from_millis(500), Duration::from_secs(3)),
        &log,
        1,
        Duration::from_millis(20),
    );
    wait_for(
        "a late arrival turned away by the ledger",
        Duration::from_secs(30),
        || {
            log.reports()
                .iter()
                .filter(|(_, r)| r.outcome == Outcome::AlreadyRun)
                .count()
                >= 3
        },
    )
    .await;
    wait_for("10 led cycles", Duration::from_secs(30), || {
        log.led().len() >= 10
    })
    .await;
    fast_worker.shut_down().await;
    slow_worker.shut_down().await;

    let runs = log.runs();
    assert_no_overlap(&runs);
    let mut by_cycle: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    for run in &runs {
        by_cycle.entry(run.cycle).or_default().push(run.worker);
    }
    assert!(
        by_cycle.values().all(|workers| workers.len() == 1),
        "a cycle ran twice: {by_cycle:?}"
    );

    let mut tokens: Vec<_> = runs
        .iter()
        .map(|run| (run.cycle, run.fencing_token.expect("a fencing token")))
        .collect();
    tokens.sort();
    assert!(
        tokens.windows(2).all(|pair| pair[0].1 < pair[1].1),
        "fencing tokens rise with the cycles: {tokens:?}"
    );

    let client = db.connect().await;
    let rows = client
        .query(
            "SELECT cycle_start, fencing_token, outcome FROM lockward_ledger ORDER BY cycle_start",
            &[],
        )
        .await
        .expect("the ledger exists");
    assert_eq!(rows.len(), runs.len(), "one ledger row per run");
    assert!(
        rows.iter()
            .all(|row| row.get::<_, Option<String>>(2).is_some()),
        "every led cycle recorded its end"
    );
}

/// The cycles in `runs` that ran more than once, with the workers that ran them.
fn run_twice(runs: &[crate::support::Run]) -> BTreeMap<std::time::SystemTime, Vec<usize>> {
    let mut by_cycle: BTreeMap<_, Vec<usize>> = BTreeMap::new();
    for run in runs {
        by_cycle.entry(run.cycle).or_default().push(run.worker);
    }
    by_cycle.retain(|_, workers| workers.len() > 1);
    by_cycle
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_ledger_a_worker_that_reaches_the_lock_late_finds_it_still_held() {
    let db = TestDb::new().await;
    // As with the ledger above: the slow worker's try-lock arrives about 100 ms into the cycle,
    // long after the leader's 20 ms job returned, but within the hold (300 ms at 600 ms).
    let slow = Proxy::start(db.server_addr()).await;
    slow.set_delay(Duration::from_millis(100));
    let log = Log::default();
    let every = Duration::from_millis(600);
    let fast_worker = start(rollup(&db.url(), every), &log, 0, Duration::from_millis(20));
    let slow_worker = start(
        rollup(&db.url_via(slow.addr()), every)
            .pooler(Pooler::Session)
            .probe(Duration::from_millis(500), Duration::from_secs(3)),
        &log,
        1,
        Duration::from_millis(20),
    );
    let late = |outcome: &Outcome| !matches!(outcome, Outcome::Unavailable { .. });
    wait_for(
        "the late worker trying the lock 5 times",
        Duration::from_secs(30),
        || {
            log.reports()
                .iter()
                .filter(|(worker, r)| *worker == 1 && late(&r.outcome))
                .count()
                >= 5
        },
    )
    .await;
    fast_worker.shut_down().await;
    slow_worker.shut_down().await;

    let runs = log.runs();
    assert_no_overlap(&runs);
    let twice = run_twice(&runs);
    assert!(twice.is_empty(), "cycles ran twice: {twice:?}");
    let held = log
        .reports()
        .iter()
        .filter(|(worker, r)| *worker == 1 && matches!(r.outcome, Outcome::Skipped { .. }))
        .count();
    assert!(
        held >= 3,
        "the late worker found the lock held {held} times"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_workers_at_a_short_period_without_the_ledger_run_each_cycle_once() {
    let db = TestDb::new().await;
    let log = Log::default();
    // A period of 100 ms holds the lock for 50 ms past the boundary: room for a loaded test
    // machine's wake-ups. Released at once, 3 to 5 of 50 cycles ran twice here.
    let every = Duration::from_millis(100);
    let workers: Vec<_> = (0..16)
        .map(|i| start(rollup(&db.url(), every), &log, i, Duration::ZERO))
        .collect();
    wait_for("50 led cycles", Duration::from_secs(30), || {
        log.led().len() >= 50
    })
    .await;
    for worker in workers {
        worker.shut_down().await;
    }
    let runs = log.runs();
    assert_no_overlap(&runs);
    let twice = run_twice(&runs);
    assert!(
        twice.is_empty(),
        "{} of {} cycles ran twice: {twice:?}",
        twice.len(),
        runs.len()
    );
}
