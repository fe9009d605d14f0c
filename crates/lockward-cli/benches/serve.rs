//! One refresh of `lockward serve`'s page over a registry of 1,000 locks, 50 of them held, and a
//! day of 1-minute cycles on 50 locks in the ledger, against a bare `SELECT 1` round trip.
//!
//! The page asks, at every refresh, `/api/live`, `/api/registry` and `/api/ledger?range=day`
//! (the range a user looking at a day's timeline asks for, 72,000 cycles). The bench starts the
//! `lockward` binary (built with the bench profile) on loopback against a test database, asks
//! each route `RUNS` times over one kept-alive connection, and prints the medians, the refresh
//! (the three one after the other, with the day's and with the hour's timeline) and its ratio
//! to the round trip. Run with
//! `cargo bench -p lockward-cli --bench serve`.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use lockward_pg::testing::{TestDb, seed_ledger};

const REGISTERED: usize = 1_000;
const HELD: usize = 50;
const LEDGER_LOCKS: usize = 50;
const CYCLES: usize = 1_440;
const RUNS: usize = 30;
const FIRST_ID: i64 = 1_001_001;

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("lockward.toml"), registry()).expect("write the registry");
    let db = TestDb::new().await;

    // 50 sessions, one per held lock, named as workers name their lock sessions.
    let mut holders = Vec::new();
    for i in 0..HELD {
        let client = db.connect().await;
        let id = FIRST_ID + i64::try_from(i * 20).unwrap();
        client
            .batch_execute(&format!(
                "SET application_name = 'lockward:bench:ADVISORY_LOCK_JOB_{i:04} {}@host-{}'; \
                 SELECT pg_advisory_lock({id})",
                1000 + i,
                i % 3
            ))
            .await
            .expect("hold a lock");
        holders.push(client);
    }
    let seeder = db.connect().await;
    let locks: Vec<(String, Vec<String>)> = (0..LEDGER_LOCKS)
        .map(|i| {
            let id = FIRST_ID + i64::try_from(i).unwrap();
            (
                id.to_string(),
                vec!["alpha".to_owned(), "beta".to_owned(), "gamma".to_owned()],
            )
        })
        .collect();
    let seeded = Instant::now();
    seed_ledger(
        &seeder,
        "harbor",
        &locks,
        Duration::from_secs(60),
        CYCLES,
        SystemTime::now(),
    )
    .await;
    let seeding = seeded.elapsed();

    let mut serve = Killed(
        Command::new(env!("CARGO_BIN_EXE_lockward"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--database-url",
                &db.url(),
            ])
            .current_dir(dir.path())
            .env_remove("LOCKWARD_SERVE_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start lockward serve"),
    );
    let mut stderr = BufReader::new(serve.0.stderr.take().expect("stderr")).lines();
    let addr = stderr
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| {
            line.strip_prefix("lockward serve: listening on http://")
                .map(|rest| rest.trim_end_matches('/').to_owned())
        })
        .expect("serve says where it listens");
    // Drained, so that a warning on stderr never blocks the server on a full pipe.
    std::thread::spawn(move || stderr.for_each(drop));
    let agent = ureq::Agent::new_with_config(ureq::Agent::config_builder().build());
    let get = |path: &str| -> usize {
        let mut response = agent
            .get(&format!("http://{addr}{path}"))
            .call()
            .unwrap_or_else(|error| panic!("GET {path}: {error}"));
        response
            .body_mut()
            .with_config()
            .limit(u64::MAX)
            .read_to_string()
            .expect("body")
            .len()
    };

    // Warm: the first request opens the session; each route answers once before timing.
    let sizes: Vec<(&str, usize)> = ["/api/live", "/api/registry", "/api/ledger?range=day"]
        .into_iter()
        .map(|path| (path, get(path)))
        .collect();
    let live = median(|| {
        get("/api/live");
    });
    let registry = median(|| {
        get("/api/registry");
    });
    let ledger_day = median(|| {
        get("/api/ledger?range=day");
    });
    let ledger_hour = median(|| {
        get("/api/ledger?range=hour");
    });
    let metrics = median(|| {
        get("/metrics");
    });
    let refresh = median(|| {
        get("/api/live");
        get("/api/registry");
        get("/api/ledger?range=day");
    });
    let refresh_hour = median(|| {
        get("/api/live");
        get("/api/registry");
        get("/api/ledger?range=hour");
    });
    let round_trip = {
        let client = db.connect().await;
        let mut times = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let start = Instant::now();
            client.query_one("SELECT 1", &[]).await.expect("SELECT 1");
            times.push(start.elapsed());
        }
        middle(times)
    };
    drop(serve);
    drop(holders);

    let mut report = String::new();
    let _ = writeln!(
        report,
        "serve: {REGISTERED} registered locks, {HELD} held; ledger {LEDGER_LOCKS} locks x \
         {CYCLES} one-minute cycles (seeded in {:.1} s); medians of {RUNS}",
        seeding.as_secs_f64()
    );
    for (path, size) in &sizes {
        let _ = writeln!(report, "  {path:<26} answers {size:>9} bytes");
    }
    for (what, time) in [
        ("GET /api/live", live),
        ("GET /api/registry", registry),
        ("GET /api/ledger?range=day", ledger_day),
        ("GET /api/ledger?range=hour", ledger_hour),
        ("GET /metrics", metrics),
        ("page refresh, day (3 GETs)", refresh),
        ("page refresh, hour (3 GETs)", refresh_hour),
        ("bare SELECT 1 round trip", round_trip),
    ] {
        let _ = writeln!(report, "  {what:<28} {:>9.2} ms", millis(time));
    }
    let _ = writeln!(
        report,
        "  refresh / SELECT 1: {:.0}x (day), {:.0}x (hour)",
        refresh.as_secs_f64() / round_trip.as_secs_f64(),
        refresh_hour.as_secs_f64() / round_trip.as_secs_f64()
    );
    print!("{report}");
}

/// A child process killed when dropped, the bench panicking included: `serve` inherits the
/// file descriptors of the `cargo bench` that started the bench (a build lock among them).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The registry: 1,000 constants in one block.
fn registry() -> String {
    let mut text = String::from(
        "[project]\nname = \"bench\"\n\n[core]\nconstants = \"locks.py\"\n\
         block = { start = 1_001_001, end = 1_009_999 }\n",
    );
    for i in 0..REGISTERED {
        let id = FIRST_ID + i64::try_from(i).unwrap();
        let _ = write!(
            text,
            "\n[[lock]]\nid = {id}\nconstant = \"ADVISORY_LOCK_JOB_{i:04}\"\nworker = \"job {i}\"\n"
        );
    }
    text
}

/// The median time of `RUNS` calls of `run`.
fn median(mut run: impl FnMut()) -> Duration {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        run();
        times.push(start.elapsed());
    }
    middle(times)
}

fn middle(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}
