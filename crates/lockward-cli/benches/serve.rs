//! One refresh of `lockward serve`'s page over a registry of 1,000 locks, 50 of them held, and a
//! day of 1-minute cycles on 50 locks in the ledger, against a bare `SELECT 1` round trip.
//!
//! The page asks, at every refresh, `/api/live`, `/api/registry` and `/api/ledger?range=day`
//! (the range a user looking at a day's timeline asks for, 72,000 cycles). The bench starts the
//! `lockward` binary (built with the bench profile) on loopback against a test database, asks
//! each route `RUNS` times over one kept-alive connection, and prints the medians, the refresh
//! (the three one after the other, with the day's and with the hour's timeline) and its ratio
//! to the round trip; then the same registry over a fleet of 10 databases, one `serve` over all
//! of them, whose refresh adds `/api/fleet` (every database read at once), against the one
//! database's day refresh. Run with
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
/// The databases of the fleet part.
const FLEET: usize = 10;
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

    let (serve, addr) = start_serve(
        dir.path(),
        &[
            "serve".to_owned(),
            "--listen".to_owned(),
            "127.0.0.1:0".to_owned(),
            "--database-url".to_owned(),
            db.url(),
        ],
    );
    let agent = ureq::Agent::new_with_config(ureq::Agent::config_builder().build());
    let get = |path: &str| fetch(&agent, &addr, path);

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
    // A fleet: the same registry over 10 databases (this one and 9 more, each with 50 keys
    // held and an hour of the 50 locks' cycles), one `serve` over all of them. Its refresh asks
    // `/api/fleet` (every database's state, read at once) beside the shown database's three.
    let mut fleet_dbs = Vec::new();
    let mut fleet_holders = Vec::new();
    for _ in 1..FLEET {
        let other = TestDb::new().await;
        let holder = other.connect().await;
        let mut sql = String::new();
        for i in 0..HELD {
            let id = FIRST_ID + i64::try_from(i * 20).unwrap();
            let _ = write!(sql, "SELECT pg_advisory_lock({id}); ");
        }
        holder.batch_execute(&sql).await.expect("hold the locks");
        seed_ledger(
            &holder,
            "harbor",
            &locks,
            Duration::from_secs(60),
            60,
            SystemTime::now(),
        )
        .await;
        fleet_holders.push(holder);
        fleet_dbs.push(other);
    }
    let mut args = vec![
        "serve".to_owned(),
        "--listen".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--database-url".to_owned(),
        db.url(),
    ];
    for other in &fleet_dbs {
        args.extend(["--database-url".to_owned(), other.url()]);
    }
    let (fleet_serve, fleet_addr) = start_serve(dir.path(), &args);
    let fleet_get = |path: &str| fetch(&agent, &fleet_addr, path);
    let fleet_size = fleet_get("/api/fleet");
    fleet_get("/api/ledger?range=day");
    let fleet = median(|| {
        fleet_get("/api/fleet");
    });
    let fleet_metrics = median(|| {
        fleet_get("/metrics");
    });
    let fleet_refresh_hour = median(|| {
        fleet_get("/api/fleet");
        fleet_get("/api/live");
        fleet_get("/api/registry");
        fleet_get("/api/ledger?range=hour");
    });
    let fleet_refresh_day = median(|| {
        fleet_get("/api/fleet");
        fleet_get("/api/live");
        fleet_get("/api/registry");
        fleet_get("/api/ledger?range=day");
    });
    drop(fleet_serve);
    drop(fleet_holders);

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
    let _ = writeln!(
        report,
        "fleet: the same registry over {FLEET} databases, {HELD} keys held in each; /api/fleet answers {fleet_size} bytes"
    );
    for (what, time) in [
        ("GET /api/fleet", fleet),
        ("GET /metrics", fleet_metrics),
        ("page refresh, hour (4 GETs)", fleet_refresh_hour),
        ("page refresh, day (4 GETs)", fleet_refresh_day),
    ] {
        let _ = writeln!(report, "  {what:<28} {:>9.2} ms", millis(time));
    }
    let _ = writeln!(
        report,
        "  fleet refresh (hour) / one database's day refresh: {:.2}x; fleet refresh (day) / it: {:.2}x",
        fleet_refresh_hour.as_secs_f64() / refresh.as_secs_f64(),
        fleet_refresh_day.as_secs_f64() / refresh.as_secs_f64()
    );
    print!("{report}");
}

/// `GET http://ADDR/PATH`: the size of its body.
fn fetch(agent: &ureq::Agent, addr: &str, path: &str) -> usize {
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
}

/// Starts `lockward ARGS` (a `serve`) in `dir`, and waits for the address it listens on.
fn start_serve(dir: &std::path::Path, args: &[String]) -> (Killed, String) {
    let mut serve = Killed(
        Command::new(env!("CARGO_BIN_EXE_lockward"))
            .args(args)
            .current_dir(dir)
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
    (serve, addr)
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
