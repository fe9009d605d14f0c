//! What leading costs, printed in one run:
//!
//! 1. a led cycle (try-lock, a no-op job, unlock; session mode, no ledger) against a bare
//!    `SELECT 1` round trip on a connection to the same server with the same settings;
//! 2. the takeover time after the leader's process is SIGKILLed: from the kill to the job
//!    starting on another process;
//! 3. the cycle rate 16 contending workers sustain: led cycles per second, the share of cycles
//!    that found a leader, and the cycles led twice (by a worker that reached the lock after the
//!    leader released it), as the period shrinks.
//!
//! `cargo bench -p lockward-pg --bench cycle` (the PostgreSQL of the test harness:
//! `LOCKWARD_TEST_DATABASE_URL`, `DATABASE_URL`, 127.0.0.1:5432 or a throwaway cluster);
//! `-- cost`, `-- takeover` or `-- contention` runs that part alone.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use lockward_pg::testing::TestDb;
use lockward_pg::{Cycle, JobError, Outcome, Worker};
use lockward_registry::Registry;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio_util::sync::CancellationToken;

const CHILD: &str = "--leader-process";

fn registry() -> Registry {
    let text = include_str!("../tests/fixtures/lockward.toml");
    lockward_registry::parse("lockward.toml", text)
        .expect("fixture registry")
        .registry
}

fn builder(url: &str, every: Duration) -> lockward_pg::WorkerBuilder {
    Worker::builder(&registry(), "ADVISORY_LOCK_ROLLUP")
        .expect("registered")
        .database_url(url)
        .every(every)
        .reconnect_backoff(Duration::from_millis(20), Duration::from_millis(200))
}

async fn no_op(_cycle: Cycle) -> Result<(), JobError> {
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if args.iter().any(|arg| arg == CHILD) {
        let url = args.last().cloned().unwrap();
        runtime.block_on(leader_process(&url));
        return;
    }
    let parts = ["cost", "takeover", "contention"];
    let chosen: Vec<&str> = parts
        .into_iter()
        .filter(|part| args.iter().any(|arg| arg == part))
        .collect();
    let runs = |part: &str| chosen.is_empty() || chosen.contains(&part);
    runtime.block_on(async {
        let db = TestDb::new().await;
        if runs("cost") {
            cycle_cost(&db).await;
        }
        if runs("takeover") {
            takeover(&db).await;
        }
        if runs("contention") {
            contention(&db).await;
        }
    });
}

fn count(n: usize) -> f64 {
    f64::from(u32::try_from(n).unwrap_or(u32::MAX))
}

/// Sleeps to the next wall-clock multiple of `every`, as a worker does between cycles.
async fn until_next(every: Duration) {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap();
    let period = every.as_nanos();
    let wait = period - now.as_nanos() % period;
    tokio::time::sleep(Duration::from_nanos(u64::try_from(wait).unwrap())).await;
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn cycle_cost(db: &TestDb) {
    // The baseline: a prepared `SELECT 1` (one round trip), on a connection to the same server
    // with the same settings, as the worker prepares its statements, sent at the same 5 ms
    // cadence as the cycles (an idle connection answers slower than one in a tight loop).
    // Baseline and cycles are measured in alternating rounds so that both see the same load.
    let client = lockward_pg::connect(&db.url(), "bench").await.unwrap();
    let select = client.prepare("SELECT 1").await.unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let mut baseline = Vec::new();
    let mut warm = Vec::new();
    for _ in 0..6 {
        for _ in 0..150 {
            let started = Instant::now();
            client.query_one(&select, &[]).await.unwrap();
            warm.push(started.elapsed());
        }
        for _ in 0..150 {
            until_next(Duration::from_millis(5)).await;
            let started = Instant::now();
            client.query_one(&select, &[]).await.unwrap();
            baseline.push(started.elapsed());
        }
        // Led cycles: one worker, a 5 ms period, the no-op job; the hold time runs from
        // sending the try-lock to the unlock's answer. No hold past the boundary: what is
        // measured is the cost of the round trips.
        let sink = held.clone();
        let worker = builder(&db.url(), Duration::from_millis(5))
            .hold_at_least(Duration::ZERO)
            .on_cycle(move |report| {
                if let Outcome::Led { held } = report.outcome {
                    sink.lock().unwrap().push(held);
                }
            })
            .build()
            .unwrap();
        let stop = CancellationToken::new();
        let task = tokio::spawn(worker.run(no_op, stop.clone().cancelled_owned()));
        let target = held.lock().unwrap().len() + 150;
        while held.lock().unwrap().len() < target {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stop.cancel();
        task.await.unwrap().expect("the worker runs");
    }
    let cycles = held.lock().unwrap().clone();
    let (base, warm, led) = (median(baseline), median(warm), median(cycles));
    println!("led cycle (session mode, no ledger, every 5 ms):   median {led:?}");
    println!("bare SELECT 1 round trip, same 5 ms cadence:       median {base:?}");
    println!("bare SELECT 1 round trip, back to back (warm):     median {warm:?}");
    println!(
        "ratio: {:.2}x against SELECT 1 at the same cadence (goal <= 2.2x), {:.2}x against a warm \
         back-to-back SELECT 1 (a led cycle is two round trips: try-lock, unlock)",
        led.as_secs_f64() / base.as_secs_f64(),
        led.as_secs_f64() / warm.as_secs_f64()
    );
}

/// The child process: leads, then holds the lock until killed.
async fn leader_process(url: &str) {
    let worker = builder(url, Duration::from_millis(100)).build().unwrap();
    let job = |_cycle: Cycle| async {
        println!("leading");
        tokio::time::sleep(Duration::from_secs(600)).await;
        Ok::<(), JobError>(())
    };
    worker
        .run(job, std::future::pending())
        .await
        .expect("the worker runs");
}

async fn takeover(db: &TestDb) {
    let every = Duration::from_millis(100);
    let admin = db.connect().await;
    let key = lockward_registry::AdvisoryKey::Bigint(7_000_001);
    let (mut freed, mut taken) = (Vec::new(), Vec::new());
    for round in 0..8_u32 {
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args([CHILD, &db.url()])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line == "leading" {
                break;
            }
        }
        let started: Arc<Mutex<Option<Instant>>> = Arc::default();
        let seen = started.clone();
        let job = move |_cycle: Cycle| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().get_or_insert_with(Instant::now);
                Ok::<(), JobError>(())
            }
        };
        let stop = CancellationToken::new();
        let worker = builder(&db.url(), every).build().unwrap();
        let task = tokio::spawn(worker.run(job, stop.clone().cancelled_owned()));
        // Kill at a different point of the period each round.
        tokio::time::sleep(every * 3 + every * round / 8).await;
        let leader = lockward_pg::holders(&admin, key).await.unwrap()[0].pid;
        child.start_kill().unwrap();
        let killed = Instant::now();
        child.wait().await.unwrap();
        while lockward_pg::holders(&admin, key)
            .await
            .unwrap()
            .iter()
            .any(|h| h.pid == leader)
        {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        freed.push(killed.elapsed());
        let at = loop {
            if let Some(at) = *started.lock().unwrap() {
                break at;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        taken.push(at - killed);
        stop.cancel();
        task.await.unwrap().expect("the worker runs");
    }
    println!(
        "takeover after SIGKILL of the leader (every {every:?}, 8 kills spread over the period): \
         lock freed by the server after median {:?}; job started elsewhere after median {:?}, \
         max {:?} (bound: the next boundary, at most one period)",
        median(freed),
        median(taken.clone()),
        taken.iter().max().unwrap()
    );
}

async fn contention(db: &TestDb) {
    println!(
        "16 contending workers, session mode, no-op job, 3 s per period (without the ledger \
         the lock is held for half the period, at most 1 s, past the boundary):"
    );
    for contender in [Contender::NoHold, Contender::Default, Contender::Ledger] {
        for every in [50, 20, 10, 5].map(Duration::from_millis) {
            contend(db, every, contender).await;
        }
    }
}

/// How the contending workers are set up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Contender {
    /// No ledger, and the lock released as soon as the job returns: the reference.
    NoHold,
    /// No ledger, the default hold.
    Default,
    /// The ledger (no hold).
    Ledger,
}

async fn contend(db: &TestDb, every: Duration, contender: Contender) {
    let led: Arc<Mutex<Vec<SystemTime>>> = Arc::default();
    let stop = CancellationToken::new();
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let sink = led.clone();
        let mut worker = builder(&db.url(), every).ledger(contender == Contender::Ledger);
        if contender == Contender::NoHold {
            worker = worker.hold_at_least(Duration::ZERO);
        }
        let worker = worker
            .on_cycle(move |report| {
                if matches!(report.outcome, Outcome::Led { .. }) {
                    sink.lock().unwrap().push(report.start);
                }
            })
            .build()
            .unwrap();
        tasks.push(tokio::spawn(
            worker.run(no_op, stop.clone().cancelled_owned()),
        ));
    }
    // Let every worker connect, then count.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let from = SystemTime::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let to = SystemTime::now();
    stop.cancel();
    for task in tasks {
        task.await.unwrap().expect("the worker runs");
    }
    let led: Vec<SystemTime> = led
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|s| *s >= from && *s < to)
        .collect();
    let mut distinct = led.clone();
    distinct.sort();
    distinct.dedup();
    let cycles = (to.duration_since(from).unwrap().as_secs_f64() / every.as_secs_f64()).floor();
    println!(
        "  {:<19} every {every:>5?}: {:>4.0} led cycles/s, {:>5.1}% of cycles led, {} led twice",
        match contender {
            Contender::NoHold => "no ledger, no hold",
            Contender::Default => "no ledger (default)",
            Contender::Ledger => "ledger",
        },
        count(distinct.len()) / 3.0,
        100.0 * count(distinct.len()) / cycles,
        led.len() - distinct.len()
    );
}
