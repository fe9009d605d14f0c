//! Reading the ledger back (`ledger::history`, `ledger::counts`) after real workers wrote it.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use lockward_pg::ledger::{self, History, LedgerCycle, Status};
use lockward_pg::testing::{TestDb, seed_ledger};
use lockward_pg::{CycleReport, Outcome, Worker};

use crate::support::{Log, ROLLUP_ID, holder_pid, registry, rollup, start, start_with, wait_for};

const PERIOD: Duration = Duration::from_millis(300);

/// The rollup's cycles in `history`.
fn rollup_cycles(history: &History) -> &[LedgerCycle] {
    let lock = history
        .locks
        .iter()
        .find(|lock| lock.lock_key == ROLLUP_ID.to_string())
        .unwrap_or_else(|| panic!("the rollup is in the history: {history:#?}"));
    &lock.cycles
}

/// What a worker's report says its ledger row's status is, for the cycles it claimed.
fn claimed(report: &CycleReport) -> Option<Status> {
    report.fencing_token?;
    match report.outcome {
        Outcome::Led { .. } => Some(Status::Done),
        Outcome::Failed { .. } => Some(Status::Failed),
        Outcome::ShutDown { .. } => Some(Status::Cancelled),
        Outcome::Lost { .. } => Some(Status::Lost),
        _ => None,
    }
}

/// Sleeps until the wall clock passes `at`.
async fn until(at: SystemTime) {
    let wait = at.duration_since(SystemTime::now()).unwrap_or_default();
    tokio::time::sleep(wait + Duration::from_millis(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_shows_which_host_led_each_cycle_and_the_cycles_after_both_stopped_as_stopped() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let log = Log::default();
    let hosts = ["alpha", "beta"];
    let alpha = start(
        rollup(&db.url(), PERIOD).ledger(true).host(hosts[0]),
        &log,
        0,
        Duration::from_millis(20),
    );
    let beta = start(
        rollup(&db.url(), PERIOD).ledger(true).host(hosts[1]),
        &log,
        1,
        Duration::from_millis(20),
    );
    let led_by = |worker: usize| log.led().iter().filter(|(w, _)| *w == worker).count();
    wait_for("three cycles led", Duration::from_secs(15), || {
        log.led().len() >= 3
    })
    .await;
    // The one that leads stops first, so that the other leads too.
    let (first, second) = if led_by(0) > 0 {
        (alpha, beta)
    } else {
        (beta, alpha)
    };
    let first_index = usize::from(led_by(0) == 0);
    first.shut_down().await;
    wait_for("the other host to lead", Duration::from_secs(15), || {
        led_by(1 - first_index) >= 2
    })
    .await;
    second.shut_down().await;
    let stopped = SystemTime::now();
    // Three whole periods nobody leads.
    tokio::time::sleep(PERIOD * 4).await;

    let reports = log.reports();
    let from = reports.iter().map(|(_, r)| r.start).min().unwrap() - PERIOD * 2;
    let to = SystemTime::now();
    let history = ledger::history(&admin, &registry(), from, to)
        .await
        .unwrap();
    let lock = &history.locks[0];
    assert_eq!(history.locks.len(), 1, "{history:#?}");
    assert_eq!(lock.id, Some(ROLLUP_ID));
    assert_eq!(lock.constant.as_deref(), Some("ADVISORY_LOCK_ROLLUP"));
    assert_eq!(lock.owner.as_deref(), Some("core"));
    assert_eq!(lock.kind, Some("constant"));
    assert_eq!(lock.member, None);
    assert_eq!(lock.period_seconds, Some(0.3));

    let by_start: BTreeMap<SystemTime, &LedgerCycle> =
        lock.cycles.iter().map(|c| (c.cycle_start, c)).collect();
    assert_eq!(by_start.len(), lock.cycles.len(), "each cycle once");
    let mut hosts_seen = Vec::new();
    for (worker, report) in &reports {
        let Some(status) = claimed(report) else {
            continue;
        };
        let cycle = by_start
            .get(&report.start)
            .unwrap_or_else(|| panic!("cycle {:?} is in the history", report.start));
        assert_eq!(cycle.status, status, "{cycle:?}");
        assert_eq!(cycle.host.as_deref(), Some(hosts[*worker]), "{cycle:?}");
        assert_eq!(cycle.fencing_token, report.fencing_token);
        assert!(
            cycle
                .application_name
                .as_deref()
                .is_some_and(|name| name.ends_with(&format!("@{}", hosts[*worker]))),
            "{cycle:?}"
        );
        assert!(!cycle.overlaps_previous, "{cycle:?}");
        hosts_seen.push(hosts[*worker]);
    }
    hosts_seen.dedup();
    assert!(hosts_seen.contains(&"alpha") && hosts_seen.contains(&"beta"));
    // Every cycle the history has a row for was claimed by one of the workers.
    let claimed_count = reports.iter().filter(|(_, r)| claimed(r).is_some()).count();
    let is_row = |c: &&LedgerCycle| !matches!(c.status, Status::Unled | Status::Stopped);
    let rows = lock.cycles.iter().filter(is_row).count();
    assert_eq!(rows, claimed_count);
    // Nothing before the first row; after the last, whose leader stopped cleanly (issue 21,
    // item 4: those boundaries read as failures), the ended boundaries are stopped.
    let first_row = lock.cycles.iter().find(is_row).unwrap();
    assert_eq!(lock.cycles[0].cycle_start, first_row.cycle_start);
    let after_stop: Vec<&LedgerCycle> = lock
        .cycles
        .iter()
        .filter(|c| c.cycle_start > stopped)
        .collect();
    assert!(after_stop.len() >= 2, "{after_stop:#?}");
    let last_row = lock.cycles.iter().rfind(is_row).unwrap();
    assert!(
        last_row.stopped_at.is_some_and(|at| at <= stopped),
        "the last leader recorded its clean stop: {last_row:?}"
    );
    assert!(after_stop.iter().all(|c| c.status == Status::Stopped
        && c.host.is_none()
        && c.fencing_token.is_none()
        && c.started_at.is_none()));

    // The counts say the same.
    let counts = ledger::counts(
        &admin,
        &registry(),
        SystemTime::UNIX_EPOCH,
        SystemTime::now(),
    )
    .await
    .unwrap();
    for (worker, host) in hosts.iter().enumerate() {
        let statuses: Vec<Status> = reports
            .iter()
            .filter(|(w, _)| *w == worker)
            .filter_map(|(_, r)| claimed(r))
            .collect();
        let count = |status| statuses.iter().filter(|&&s| s == status).count() as u64;
        let counted = counts
            .hosts
            .iter()
            .find(|c| c.host == *host)
            .unwrap_or_else(|| panic!("{host} is counted: {counts:#?}"));
        assert_eq!(counted.id, Some(ROLLUP_ID));
        assert_eq!(counted.led, statuses.len() as u64, "{counted:?}");
        assert_eq!(counted.done, count(Status::Done), "{counted:?}");
        assert_eq!(counted.cancelled, count(Status::Cancelled), "{counted:?}");
        assert_eq!(counted.failed + counted.lost, 0, "{counted:?}");
    }
    // As of one moment, the counts of unled cycles are the history's since the first row: none
    // after the stop.
    let now = SystemTime::now();
    let all_time = ledger::history_at(&admin, &registry(), from, now, now)
        .await
        .unwrap();
    let counts = ledger::counts(&admin, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    let unled = rollup_cycles(&all_time)
        .iter()
        .filter(|c| c.status == Status::Unled)
        .count() as u64;
    assert_eq!(counts.locks.len(), 1);
    assert_eq!(counts.locks[0].unled, unled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_job_reads_as_failed_and_a_terminated_leaders_cycle_as_running_then_lost() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let log = Log::default();
    // Fails its first cycle, then runs until its session is terminated.
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Long enough that the cycle is still on when it is read as running.
    let period = Duration::from_secs(2);
    let worker: Worker = rollup(&db.url(), period)
        .ledger(true)
        .host("alpha")
        .on_cycle(log.hook(0))
        .build()
        .unwrap();
    let job_runs = runs.clone();
    let running = start_with(worker, move |cycle: lockward_pg::Cycle| {
        let run = job_runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            if run == 0 {
                return Err("the rollup failed".into());
            }
            cycle.cancelled().await;
            Ok(())
        }
    });
    wait_for(
        "the second cycle's job to start",
        Duration::from_secs(15),
        || runs.load(std::sync::atomic::Ordering::SeqCst) >= 2,
    )
    .await;
    // While the leader holds it, its cycle is running.
    let now = SystemTime::now();
    let history = ledger::history(&admin, &registry(), now - period * 5, now + period)
        .await
        .unwrap();
    let statuses: Vec<Status> = rollup_cycles(&history).iter().map(|c| c.status).collect();
    assert_eq!(statuses, [Status::Failed, Status::Running], "{history:#?}");

    let pid = holder_pid(&admin).await.expect("the leader holds the lock");
    admin
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
    wait_for("the loss to be reported", Duration::from_secs(10), || {
        log.reports()
            .iter()
            .any(|(_, r)| matches!(r.outcome, Outcome::Lost { .. }))
    })
    .await;
    running.shut_down().await;
    let lost = log
        .reports()
        .into_iter()
        .find(|(_, r)| matches!(r.outcome, Outcome::Lost { .. }))
        .unwrap()
        .1;
    until(lost.start + period).await;
    let now = SystemTime::now();
    let history = ledger::history_at(&admin, &registry(), now - period * 10, now, now)
        .await
        .unwrap();
    let cycles = rollup_cycles(&history);
    let failed = cycles.iter().find(|c| c.status == Status::Failed).unwrap();
    assert!(failed.finished_at.is_some());
    // Issue 21, item 2: the failed cycle's hover had no error; the row keeps the job's.
    assert_eq!(failed.detail.as_deref(), Some("the rollup failed"));
    let lost_cycle = cycles.iter().find(|c| c.cycle_start == lost.start).unwrap();
    assert_eq!(lost_cycle.status, Status::Lost, "{cycles:#?}");
    assert_eq!(lost_cycle.finished_at, None);
    assert_eq!(lost_cycle.fencing_token, lost.fencing_token);
    let counts = ledger::counts(&admin, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    let alpha = &counts.hosts[0];
    assert_eq!(
        (alpha.host.as_str(), alpha.failed, alpha.lost),
        ("alpha", 1, 1),
        "{counts:#?}"
    );
}

/// Inserts a row of the rollup for the cycle `start`, led by host `gamma`.
async fn insert(
    client: &tokio_postgres::Client,
    start: SystemTime,
    started: Duration,
    finished: Option<Duration>,
    outcome: Option<&str>,
) {
    insert_by(client, "gamma", start, started, finished, outcome).await;
}

/// Inserts a row of the rollup for the cycle `start`, led by `host`.
async fn insert_by(
    client: &tokio_postgres::Client,
    host: &str,
    start: SystemTime,
    started: Duration,
    finished: Option<Duration>,
    outcome: Option<&str>,
) {
    client
        .execute(
            "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, \
                                          host, pid, started_at, finished_at, outcome, period_ms) \
             VALUES ($1, $2, nextval('lockward_fencing_token'), 'test', $6, 7, $3, $4, $5, 60000)",
            &[
                &ROLLUP_ID.to_string(),
                &start,
                &(start + started),
                &finished.map(|f| start + f),
                &outcome,
                &host,
            ],
        )
        .await
        .unwrap();
}

/// A database of its own with an empty ledger, and a session on it.
async fn empty_ledger() -> (TestDb, tokio_postgres::Client) {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    seed_ledger(
        &admin,
        "pgtest",
        &[],
        Duration::from_secs(60),
        0,
        SystemTime::now(),
    )
    .await;
    (db, admin)
}

/// The minute boundary `minutes` before the last one before now.
fn minute(minutes: u32) -> SystemTime {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    SystemTime::UNIX_EPOCH + Duration::from_secs(now / 60 * 60) - Duration::from_secs(60) * minutes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_started_before_the_previous_one_finished_is_flagged_as_overlapping() {
    let (_db, admin) = empty_ledger().await;
    let secs = Duration::from_secs;
    // The first runs long past its minute; the second starts before it finished.
    insert(&admin, minute(10), secs(1), Some(secs(75)), Some("done")).await;
    insert(&admin, minute(9), secs(1), Some(secs(2)), Some("done")).await;
    insert(&admin, minute(8), secs(3), Some(secs(4)), Some("done")).await;
    // A lost leader (no end recorded) whose cycle ended before the next one started: no overlap.
    insert(&admin, minute(7), secs(1), None, None).await;
    insert(&admin, minute(6), secs(1), Some(secs(2)), Some("done")).await;
    let history = ledger::history(&admin, &registry(), minute(10), minute(5))
        .await
        .unwrap();
    let cycles: Vec<(Status, bool)> = rollup_cycles(&history)
        .iter()
        .map(|c| (c.status, c.overlaps_previous))
        .collect();
    assert_eq!(
        cycles,
        [
            (Status::Done, false),
            (Status::Done, true),
            (Status::Done, false),
            (Status::Lost, false),
            (Status::Done, false),
        ]
    );
}

/// Issue 21, item 5: after the README's retention `DELETE` the done counter fell from 74 to 34
/// and `increase()` jumped; counts over a trailing window are what no such `DELETE` changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_counts_list_only_its_hosts_and_a_retention_delete_before_it_changes_nothing() {
    let (_db, admin) = empty_ledger().await;
    let secs = Duration::from_secs;
    insert_by(
        &admin,
        "delta",
        minute(40),
        secs(1),
        Some(secs(2)),
        Some("done"),
    )
    .await;
    insert(&admin, minute(30), secs(1), Some(secs(2)), Some("done")).await;
    insert(&admin, minute(10), secs(1), Some(secs(2)), Some("done")).await;
    insert(&admin, minute(9), secs(1), Some(secs(2)), Some("failed")).await;
    let now = minute(0) + secs(30);
    let window = |counts: &ledger::Counts| {
        let hosts: Vec<(String, u64, u64, u64)> = counts
            .hosts
            .iter()
            .map(|h| (h.host.clone(), h.led, h.done, h.failed))
            .collect();
        (
            hosts,
            counts.locks.iter().map(|l| l.unled).collect::<Vec<_>>(),
        )
    };
    let before = ledger::counts(&admin, &registry(), minute(20), now)
        .await
        .unwrap();
    // delta led only before the window: not a host of it. The unled boundaries run from the row
    // before the window (minute 30), cut at the window's start: 20..11 and 8..1.
    assert_eq!(
        window(&before),
        (vec![("gamma".to_owned(), 2, 1, 1)], vec![18]),
        "{before:#?}"
    );
    let all_time = ledger::counts(&admin, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    admin
        .execute(
            "DELETE FROM lockward_ledger WHERE cycle_start < $1",
            &[&minute(35)],
        )
        .await
        .unwrap();
    let after = ledger::counts(&admin, &registry(), minute(20), now)
        .await
        .unwrap();
    assert_eq!(window(&after), window(&before));
    // Counted all time, the same DELETE takes delta's cycle away: that was the bug.
    let all_time_after = ledger::counts(&admin, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    assert_ne!(window(&all_time_after), window(&all_time));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_without_a_ledger_has_an_empty_history_and_no_counts() {
    let db = TestDb::new().await;
    let client = db.connect().await;
    assert!(!ledger::exists(&client).await.unwrap());
    let now = SystemTime::now();
    let history = ledger::history(&client, &registry(), now - Duration::from_secs(3600), now)
        .await
        .unwrap();
    assert!(history.locks.is_empty());
    let counts = ledger::counts(&client, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    assert!(counts.hosts.is_empty() && counts.locks.is_empty());
    seed_ledger(&client, "pgtest", &[], Duration::from_secs(60), 0, now).await;
    assert!(ledger::exists(&client).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_ledger_no_worker_upgraded_yet_is_read_without_periods() {
    let db = TestDb::new().await;
    let client = db.connect().await;
    client
        .batch_execute(
            "CREATE TABLE lockward_ledger (lock_key text NOT NULL, cycle_start timestamptz NOT NULL, \
               fencing_token bigint NOT NULL, application_name text NOT NULL, host text NOT NULL, \
               pid integer NOT NULL, started_at timestamptz NOT NULL DEFAULT clock_timestamp(), \
               finished_at timestamptz, outcome text, PRIMARY KEY (lock_key, cycle_start)); \
             INSERT INTO lockward_ledger VALUES \
               ('7000001', now() - interval '10 minutes', 1, 'old', 'old-host', 1, \
                now() - interval '10 minutes', now() - interval '9 minutes', 'done'), \
               ('7000001', now() - interval '5 minutes', 2, 'old', 'old-host', 1, \
                now() - interval '5 minutes', NULL, NULL)",
        )
        .await
        .unwrap();
    let now = SystemTime::now();
    let history = ledger::history(&client, &registry(), now - Duration::from_secs(3600), now)
        .await
        .unwrap();
    let lock = &history.locks[0];
    assert_eq!(lock.period_seconds, None);
    let statuses: Vec<Status> = lock.cycles.iter().map(|c| c.status).collect();
    // No period: no unled cycle, and the latest row without an end is still running.
    assert_eq!(statuses, [Status::Done, Status::Running]);
    let counts = ledger::counts(&client, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    assert_eq!(
        (
            counts.hosts[0].led,
            counts.hosts[0].done,
            counts.locks[0].unled
        ),
        (2, 1, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_cycles_are_consecutive_done_cycles_ending_before_the_end_with_hosts_in_turn() {
    let db = TestDb::new().await;
    let client = db.connect().await;
    let period = Duration::from_secs(60);
    let end = SystemTime::now();
    let hosts = vec!["alpha".to_owned(), "beta".to_owned(), "gamma".to_owned()];
    let locks = vec![
        (ROLLUP_ID.to_string(), hosts.clone()),
        ("7000002/3".to_owned(), vec!["delta".to_owned()]),
        ("424242".to_owned(), hosts),
    ];
    seed_ledger(&client, "pgtest", &locks, period, 1440, end).await;
    let day = Duration::from_secs(86_400);
    let history = ledger::history(&client, &registry(), end - day - period, end)
        .await
        .unwrap();
    let keys: Vec<(&str, Option<i64>, Option<i32>)> = history
        .locks
        .iter()
        .map(|l| (l.lock_key.as_str(), l.id, l.member))
        .collect();
    assert_eq!(
        keys,
        [
            ("7000001", Some(7_000_001), None),
            ("7000002/3", Some(7_000_002), Some(3)),
            ("424242", None, None),
        ],
        "registered by id, then unknown keys"
    );
    for lock in &history.locks {
        assert_eq!(lock.period_seconds, Some(60.0));
        assert_eq!(lock.cycles.len(), 1440, "{}", lock.lock_key);
        assert!(
            lock.cycles
                .iter()
                .all(|c| c.status == Status::Done && !c.overlaps_previous)
        );
        for pair in lock.cycles.windows(2) {
            assert_eq!(
                pair[1]
                    .cycle_start
                    .duration_since(pair[0].cycle_start)
                    .unwrap(),
                period
            );
            assert!(pair[1].fencing_token > pair[0].fencing_token);
        }
        let last = lock.cycles.last().unwrap();
        assert!(last.cycle_start + period <= end);
        assert!(end.duration_since(last.cycle_start).unwrap() < period * 2);
    }
    let rollup: Vec<&str> = history.locks[0].cycles[..4]
        .iter()
        .map(|c| c.host.as_deref().unwrap())
        .collect();
    assert_eq!(rollup, ["alpha", "beta", "gamma", "alpha"]);
    let json = serde_json::to_value(&history).unwrap();
    let cycle = &json["locks"][1]["cycles"][0];
    assert_eq!(json["locks"][1]["member"], 3);
    assert_eq!(json["locks"][2]["id"], serde_json::Value::Null);
    assert_eq!(cycle["status"], "done");
    assert_eq!(cycle["host"], "delta");
    let start = cycle["cycle_start"].as_str().unwrap();
    assert!(start.len() == 24 && start.ends_with(":00.000Z"), "{start}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_agree_with_the_history_of_all_time_on_a_ledger_with_gaps_and_lost_cycles() {
    let db = TestDb::new().await;
    let client = db.connect().await;
    let period = Duration::from_secs(60);
    let now = SystemTime::now();
    let hosts = vec!["alpha".to_owned(), "beta".to_owned()];
    let locks = vec![
        (ROLLUP_ID.to_string(), hosts.clone()),
        ("7000005".to_owned(), hosts),
    ];
    seed_ledger(&client, "pgtest", &locks, period, 300, now).await;
    let now = SystemTime::now();
    // Gaps, lost and failed cycles, rows of an older lockward without a period, and rows of
    // another period.
    client
        .batch_execute(
            "DELETE FROM lockward_ledger WHERE lock_key = '7000001' AND fencing_token % 7 = 0; \
             DELETE FROM lockward_ledger WHERE lock_key = '7000005' \
               AND cycle_start > now() - interval '30 minutes'; \
             UPDATE lockward_ledger SET outcome = NULL, finished_at = NULL WHERE fencing_token % 11 = 0; \
             UPDATE lockward_ledger SET outcome = 'failed' WHERE fencing_token % 13 = 0; \
             UPDATE lockward_ledger SET period_ms = NULL WHERE fencing_token % 17 = 0; \
             UPDATE lockward_ledger SET period_ms = 120000 WHERE fencing_token % 19 = 0; \
             UPDATE lockward_ledger SET application_name = 'lockward:reports:ROLLUP 9@beta', \
               period_ms = 30000 WHERE fencing_token % 23 = 0;",
        )
        .await
        .unwrap();
    let counts = ledger::counts(&client, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    let history = ledger::history_at(
        &client,
        &registry(),
        now - Duration::from_secs(86_400),
        now,
        now,
    )
    .await
    .unwrap();
    for lock in &history.locks {
        let of = |status| lock.cycles.iter().filter(|c| c.status == status).count() as u64;
        let counted = counts
            .locks
            .iter()
            .find(|c| c.lock_key == lock.lock_key)
            .unwrap();
        assert_eq!(counted.unled, of(Status::Unled), "{}", lock.lock_key);
        assert!(counted.unled > 0);
        let hosts: Vec<_> = counts
            .hosts
            .iter()
            .filter(|c| c.lock_key == lock.lock_key)
            .collect();
        let sum = |field: fn(&&ledger::HostCounts) -> u64| hosts.iter().map(field).sum::<u64>();
        assert_eq!(sum(|h| h.done), of(Status::Done));
        assert_eq!(sum(|h| h.failed), of(Status::Failed));
        assert_eq!(sum(|h| h.lost), of(Status::Lost));
        assert_eq!(
            sum(|h| h.led),
            lock.cycles.len() as u64 - of(Status::Unled) - of(Status::Foreign)
        );
        let foreign: u64 = counts
            .foreign
            .iter()
            .filter(|c| c.lock_key == lock.lock_key)
            .map(|c| {
                assert_eq!(c.project, "reports");
                c.cycles
            })
            .sum();
        assert_eq!(foreign, of(Status::Foreign), "{}", lock.lock_key);
        assert!(foreign > 0);
    }
}

/// Another project, `reports`, whose registry gave out the rollup's id, ran its worker on this
/// database: the ledger held its cycles under the rollup's key, `serve` counted them as the
/// rollup's and the row's period flipped between the two projects' (issue 19). Its rows are
/// `foreign`, named, counted apart, and the rollup's period is its own workers'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_projects_rows_on_a_key_are_foreign_counted_apart_and_give_it_no_period() {
    let (_db, admin) = empty_ledger().await;
    let secs = Duration::from_secs;
    insert(&admin, minute(10), secs(1), Some(secs(2)), Some("done")).await;
    insert(&admin, minute(9), secs(1), Some(secs(2)), Some("done")).await;
    // Theirs, later: the latest row, with a period of its own.
    admin
        .execute(
            "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, \
                                          host, pid, started_at, finished_at, outcome, period_ms) \
             VALUES ($1, $2, nextval('lockward_fencing_token'), 'lockward:reports:ROLLUP 9@delta', \
                     'delta', 9, $2::timestamptz, $2::timestamptz + interval '2 seconds', 'done', 120000)",
            &[&ROLLUP_ID.to_string(), &minute(8)],
        )
        .await
        .unwrap();
    let now = minute(5);
    let history = ledger::history_at(&admin, &registry(), minute(10), now, now)
        .await
        .unwrap();
    let lock = history
        .locks
        .iter()
        .find(|lock| lock.lock_key == ROLLUP_ID.to_string())
        .expect("the rollup");
    assert_eq!(lock.period_seconds, Some(60.0), "the rollup's own period");
    let cycles: Vec<(Status, Option<&str>)> = lock
        .cycles
        .iter()
        .map(|c| (c.status, c.project.as_deref()))
        .collect();
    assert_eq!(
        cycles,
        [
            (Status::Done, None),
            (Status::Done, None),
            (Status::Foreign, Some("reports")),
            (Status::Unled, None),
            (Status::Unled, None),
        ]
    );
    let counts = ledger::counts(&admin, &registry(), SystemTime::UNIX_EPOCH, now)
        .await
        .unwrap();
    let hosts: Vec<(&str, u64)> = counts
        .hosts
        .iter()
        .map(|h| (h.host.as_str(), h.led))
        .collect();
    assert_eq!(hosts, [("gamma", 2)], "only the rollup's own cycles");
    assert_eq!(counts.foreign.len(), 1, "{counts:#?}");
    assert_eq!(
        (counts.foreign[0].project.as_str(), counts.foreign[0].cycles),
        ("reports", 1)
    );
    assert_eq!(counts.locks[0].unled, 2, "{counts:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_an_hour_of_a_long_ledger_reads_about_an_hours_rows_through_indexes() {
    let db = TestDb::new().await;
    let client = db.connect().await;
    let period = Duration::from_secs(60);
    let now = SystemTime::now();
    let locks: Vec<(String, Vec<String>)> = (1..=3)
        .map(|i| (format!("{}", 7_000_000 + i), vec!["alpha".to_owned()]))
        .collect();
    // Ten days of minutes, 43,200 rows.
    seed_ledger(&client, "pgtest", &locks, period, 14_400, now).await;
    client
        .batch_execute("ANALYZE lockward_ledger")
        .await
        .unwrap();
    let read = || async {
        client
            .query_one("SELECT pg_stat_force_next_flush()", &[])
            .await
            .unwrap();
        // A statement of its own so that the flush has happened.
        client.query_one("SELECT 1", &[]).await.unwrap();
        let row = client
            .query_one(
                "SELECT seq_scan, coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables \
                 WHERE relname = 'lockward_ledger'",
                &[],
            )
            .await
            .unwrap();
        (row.get::<_, i64>(0), row.get::<_, i64>(1))
    };
    let before = read().await;
    let history = ledger::history(&client, &registry(), now - Duration::from_secs(3600), now)
        .await
        .unwrap();
    let after = read().await;
    assert_eq!(history.locks.len(), 3);
    assert!(history.locks.iter().all(|l| l.cycles.len() >= 59));
    assert_eq!(after.0, before.0, "no sequential scan of the ledger");
    let fetched = after.1 - before.1;
    assert!(
        fetched < 3 * 60 * 2 + 100,
        "an hour of 3 locks is 180 rows; the read fetched {fetched}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ledger_whose_columns_were_altered_is_an_error_that_names_the_column_not_a_panic() {
    let db = TestDb::new().await;
    let client = db.connect().await;
    let now = SystemTime::now();
    let locks = [(ROLLUP_ID.to_string(), vec!["alpha".to_owned()])];
    seed_ledger(&client, "pgtest", &locks, Duration::from_secs(60), 3, now).await;
    client
        .batch_execute("ALTER TABLE lockward_ledger ALTER COLUMN pid TYPE bigint")
        .await
        .unwrap();
    let error = ledger::history(&client, &registry(), now - Duration::from_secs(3600), now)
        .await
        .expect_err("a pid that is not an int4");
    assert!(error.to_string().contains("column 7"), "{error}");
}
