use std::time::{Duration, Instant};

use lockward_pg::Pooler;
use lockward_pg::testing::{Cluster, Proxy, TestDb};
use lockward_pg::{Keepalive, Outcome};

use crate::support::{Log, holder_pid, rollup, start, wait_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminating_the_leaders_lock_session_cancels_its_job_within_a_second_and_the_next_cycle_runs_elsewhere()
 {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let log = Log::default();
    let every = Duration::from_secs(1);
    let workers: Vec<_> = (0..2)
        .map(|i| start(rollup(&db.url(), every), &log, i, Duration::from_secs(30)))
        .collect();
    wait_for(
        "a job to start while the other worker skips",
        Duration::from_secs(10),
        || {
            !log.runs().is_empty()
                && log
                    .reports()
                    .iter()
                    .any(|(_, r)| matches!(r.outcome, Outcome::Skipped { .. }))
        },
    )
    .await;
    let leader = log.runs()[0].worker;
    let pid = holder_pid(&admin).await.expect("the leader holds the lock");
    let terminated_at = Instant::now();
    admin
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .expect("terminate");
    wait_for("the job to be cancelled", Duration::from_secs(5), || {
        log.runs()[0].ended.is_some()
    })
    .await;
    let first = &log.runs()[0];
    assert!(first.cancelled, "the job saw its token cancelled");
    let reason = first.reason.as_deref().unwrap_or_default();
    assert!(
        reason.starts_with("the lock was lost: "),
        "the cycle says why it was cancelled: {reason:?}"
    );
    let reaction = first.ended.unwrap() - terminated_at;
    assert!(
        reaction < Duration::from_secs(1),
        "cancelled {reaction:?} after pg_terminate_backend"
    );
    // The job's end is recorded when its future returns; the worker files the
    // cycle's report after that, so the report is waited for, not assumed.
    wait_for(
        "the leader to report the cycle as lost",
        Duration::from_secs(5),
        || {
            log.reports()
                .iter()
                .any(|(w, r)| *w == leader && matches!(r.outcome, Outcome::Lost { .. }))
        },
    )
    .await;

    wait_for("the next cycle to start", Duration::from_secs(5), || {
        log.runs().len() >= 2
    })
    .await;
    let second = &log.runs()[1];
    assert_ne!(
        second.worker, leader,
        "the next cycle runs on the other worker"
    );
    assert!(second.cycle > first.cycle);
    for worker in workers {
        worker.shut_down().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_network_cancels_the_job_within_the_probe_bound_and_the_worker_leads_again_once_healed()
 {
    let db = TestDb::new().await;
    let proxy = Proxy::start(db.server_addr()).await;
    let log = Log::default();
    let (interval, timeout) = (Duration::from_millis(200), Duration::from_millis(400));
    let builder = rollup(&db.url_via(proxy.addr()), Duration::from_millis(500))
        .pooler(Pooler::Session)
        .probe(interval, timeout);
    let worker = start(builder, &log, 0, Duration::from_secs(30));
    wait_for("a job to start", Duration::from_secs(10), || {
        !log.runs().is_empty()
    })
    .await;
    proxy.cut();
    let cut_at = Instant::now();
    wait_for("the job to be cancelled", Duration::from_secs(5), || {
        log.runs()[0].ended.is_some()
    })
    .await;
    let reaction = log.runs()[0].ended.unwrap() - cut_at;
    let bound = interval + timeout;
    // The bound plus scheduling slack for a loaded two-core machine.
    assert!(
        reaction <= bound + Duration::from_millis(300),
        "cancelled {reaction:?} after the cut (bound {bound:?})"
    );
    assert!(log.runs()[0].cancelled);
    wait_for(
        "the cycle to be reported lost",
        Duration::from_secs(5),
        || {
            log.reports()
                .iter()
                .any(|(_, r)| matches!(r.outcome, Outcome::Lost { .. }))
        },
    )
    .await;

    // Healing delivers the lost session's close; the worker reconnects and leads again.
    proxy.heal();
    wait_for("a job after the heal", Duration::from_secs(15), || {
        log.runs().len() >= 2
    })
    .await;
    worker.shut_down().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_is_reconnected_to() {
    let cluster = Cluster::start().await;
    let db = TestDb::on(&cluster).await;
    let log = Log::default();
    let worker = start(
        rollup(&db.url(), Duration::from_millis(300)),
        &log,
        0,
        Duration::from_millis(20),
    );
    wait_for("a led cycle", Duration::from_secs(10), || {
        !log.led().is_empty()
    })
    .await;
    cluster.restart().await;
    let restarted = std::time::SystemTime::now();
    wait_for(
        "a led cycle after the restart",
        Duration::from_secs(20),
        || log.led().iter().any(|(_, report)| report.start > restarted),
    )
    .await;
    worker.shut_down().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_run_future_mid_job_cancels_the_job_and_frees_the_lock() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let log = Log::default();
    let worker = start(
        rollup(&db.url(), Duration::from_millis(200)),
        &log,
        0,
        Duration::from_secs(30),
    );
    wait_for("a job to start", Duration::from_secs(10), || {
        !log.runs().is_empty()
    })
    .await;
    worker.task.abort();
    wait_for("the job to end", Duration::from_secs(5), || {
        log.runs()[0].ended.is_some()
    })
    .await;
    assert!(log.runs()[0].cancelled, "the job saw its token cancelled");
    let deadline = Instant::now() + Duration::from_secs(5);
    while holder_pid(&admin).await.is_some() {
        assert!(Instant::now() < deadline, "the lock is still held");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_while_the_lock_is_being_taken_does_not_start_the_job() {
    let db = TestDb::new().await;
    let link = Proxy::start(db.server_addr()).await;
    let log = Log::default();
    let every = Duration::from_secs(1);
    // A probe this slow leaves the default keepalive bound no room for a cancel grace.
    let builder = rollup(&db.url_via(link.addr()), every)
        .pooler(Pooler::Session)
        .probe(every, Duration::from_secs(5))
        .keepalive(Keepalive {
            idle: Duration::from_secs(10),
            ..Keepalive::default()
        });
    let worker = start(builder, &log, 0, Duration::from_millis(10));
    wait_for("a led cycle", Duration::from_secs(10), || {
        !log.led().is_empty()
    })
    .await;
    // From now on a round trip takes 800 ms: the next cycle's try-lock is still on its way when
    // the worker is shut down, 200 ms after the boundary.
    link.set_delay(Duration::from_millis(400));
    let led = log.led()[0].1.start;
    let shut_down_at = led + every + Duration::from_millis(200);
    if let Ok(wait) = shut_down_at.duration_since(std::time::SystemTime::now()) {
        tokio::time::sleep(wait).await;
    }
    worker.shut_down().await;
    assert_eq!(log.runs().len(), 1, "no job started after the shutdown");
}

/// After a partition behind pgbouncer's defaults, the worker's old lock session stays on the
/// server, lock and all (pgbouncer never hears that its client went): the worker came back,
/// found its own identity holding the lock and skipped, cycle after cycle, for good. A stranded
/// connection of the proxy plays pgbouncer's part.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_ends_its_own_earlier_lock_session_that_a_pooler_kept_and_leads_again() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let proxy = Proxy::start(db.server_addr()).await;
    let log = Log::default();
    let every = Duration::from_millis(500);
    let builder = rollup(&db.url_via(proxy.addr()), every)
        .pooler(Pooler::Session)
        .probe(Duration::from_millis(200), Duration::from_millis(400));
    let worker = start(builder, &log, 0, Duration::from_secs(30));
    wait_for("a job to start", Duration::from_secs(10), || {
        !log.runs().is_empty()
    })
    .await;
    let stale = holder_pid(&admin).await.expect("the worker holds the lock");
    proxy.strand();
    let stranded_at = Instant::now();
    wait_for("the job to be cancelled", Duration::from_secs(5), || {
        log.runs()[0].ended.is_some()
    })
    .await;
    assert_eq!(
        holder_pid(&admin).await,
        Some(stale),
        "the stranded session still holds the lock on the server"
    );
    wait_for(
        "a job on a new session after the stranding",
        Duration::from_secs(15),
        || log.runs().len() >= 2,
    )
    .await;
    let led_again = stranded_at.elapsed();
    let ended = admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
            &[&stale],
        )
        .await
        .expect("pg_stat_activity")
        .get::<_, i64>(0);
    assert_eq!(ended, 0, "the old session was ended");
    eprintln!("led again {led_again:?} after its old session was stranded");
    worker.shut_down().await;
}

/// A session that takes the lock under a replica's name on another host and then goes quiet is
/// what a partitioned replica behind pgbouncer leaves: the worker does not end it (it cannot prove
/// it its own) and cannot lead; the lock's holder reads as idle for as long as it has been quiet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicas_quiet_session_is_left_alone_and_reads_as_idle() {
    let db = TestDb::new().await;
    let log = Log::default();
    let every = Duration::from_millis(300);
    let replica =
        lockward_pg::Identity::new("pgtest", crate::support::ROLLUP, None, 4242, "elsewhere")
            .since(std::time::SystemTime::now())
            .application_name()
            .expect("fits");
    let quiet = lockward_pg::connect(&db.url(), &replica)
        .await
        .expect("connect");
    quiet
        .execute("SELECT pg_advisory_lock($1)", &[&crate::support::ROLLUP_ID])
        .await
        .expect("lock");
    let worker = start(rollup(&db.url(), every), &log, 0, Duration::from_millis(10));
    wait_for(
        "a skip with an idle holder",
        Duration::from_secs(10),
        || {
            log.reports().iter().any(|(_, r)| {
                matches!(&r.outcome, Outcome::Skipped { holder: Some(holder) }
                if holder.idle_for.is_some_and(|idle| idle >= every * 3))
            })
        },
    )
    .await;
    worker.shut_down().await;
    assert!(
        log.runs().is_empty(),
        "the replica's lock was not taken over"
    );
    let alive = quiet.simple_query("SELECT 1").await;
    assert!(alive.is_ok(), "the replica's session was left alone");
}

/// A URL that names the server by `hostaddr` alone (no host) was refused by the lock session's
/// own connect ("the URL names no host"), where tokio-postgres's connect and libpq take it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_with_only_a_hostaddr_opens_a_proven_lock_session_and_leads() {
    let db = TestDb::new().await;
    let server = db.server_addr();
    let url = format!(
        "postgres://postgres@/{}?hostaddr={}&port={}",
        db.name(),
        server.ip(),
        server.port()
    );
    let worker = rollup(&url, Duration::from_millis(300))
        .build()
        .expect("settings");
    worker
        .preflight()
        .await
        .expect("a direct session, proven over the hostaddr");
    let log = Log::default();
    let running = start(
        rollup(&url, Duration::from_millis(300)),
        &log,
        0,
        Duration::from_millis(10),
    );
    wait_for("a led cycle", Duration::from_secs(10), || {
        !log.led().is_empty()
    })
    .await;
    running.shut_down().await;
}
