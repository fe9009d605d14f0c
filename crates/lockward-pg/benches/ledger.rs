//! Reading the ledger back: `ledger::history` over a day and an hour of 1-minute cycles on 50
//! locks, and `ledger::counts` over the last hour and the whole table, against a bare `SELECT 1` round trip; then
//! the same on a ledger of 30 days, to show what grows with the ledger and what does not, and
//! the cost of upgrading a ledger that size from the old schema.
//!
//! Run with `cargo bench -p lockward-pg --bench ledger` (`-- --days N` for the long ledger's
//! length, `-- --days 0` to skip it).

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime};

#[path = "support/timing.rs"]
mod timing;

use lockward_pg::ledger;
use lockward_pg::testing::{TestDb, seed_ledger};
use timing::{median, millis};

const LOCKS: usize = 50;
const DAY: usize = 1440;
const RUNS: usize = 9;
const PERIOD: Duration = Duration::from_secs(60);

#[tokio::main]
async fn main() {
    let days = std::env::args()
        .skip_while(|arg| arg != "--days")
        .nth(1)
        .map_or(30, |days| days.parse().expect("--days N"));
    let registry = registry();
    let round_trip = {
        let db = TestDb::new().await;
        let client = db.connect().await;
        median(RUNS * 5, || async {
            client.query_one("SELECT 1", &[]).await.unwrap();
        })
        .await
    };
    println!("ledger: {LOCKS} locks, 1-minute cycles, two hosts each");
    println!(
        "  SELECT 1 round trip             {:>9.3} ms",
        millis(round_trip)
    );
    measure(&registry, 1, round_trip).await;
    if days > 1 {
        measure(&registry, days, round_trip).await;
    }
}

/// Seeds `days` of cycles and times the reads.
async fn measure(registry: &lockward_registry::Registry, days: usize, round_trip: Duration) {
    let db = TestDb::new().await;
    let client = db.connect().await;
    let locks: Vec<(String, Vec<String>)> = (1..=LOCKS)
        .map(|i| {
            (
                (1_000 + i).to_string(),
                vec!["alpha".to_owned(), "beta".to_owned()],
            )
        })
        .collect();
    let now = SystemTime::now();
    let seeding = Instant::now();
    seed_ledger(&client, "bench", &locks, PERIOD, DAY * days, now).await;
    let seeded = seeding.elapsed();
    client
        .batch_execute("VACUUM ANALYZE lockward_ledger")
        .await
        .unwrap();
    let rows = LOCKS * DAY * days;
    println!(
        "\n  ledger of {days} day(s), {rows} rows (seed_ledger: {:.1} s)",
        seeded.as_secs_f64()
    );
    let read = |span: Duration| {
        let client = &client;
        async move {
            let history = ledger::history(client, registry, now - span, now)
                .await
                .unwrap();
            let cycles: usize = history.locks.iter().map(|lock| lock.cycles.len()).sum();
            (history, cycles)
        }
    };
    for (name, span, expected) in [
        ("day", Duration::from_secs(86_400), LOCKS * DAY),
        ("hour", Duration::from_secs(3_600), LOCKS * 60),
    ] {
        let (history, cycles) = read(span).await;
        assert!(cycles >= expected - LOCKS, "{cycles} cycles");
        let took = median(RUNS, || async {
            read(span).await;
        })
        .await;
        let json = median(RUNS, || async {
            serde_json::to_vec(&history).unwrap();
        })
        .await;
        let size = serde_json::to_vec(&history).unwrap().len();
        println!(
            "  history, last {name:<4} {cycles:>6} cycles {:>9.1} ms  ({:>7.0}x SELECT 1; JSON {:.1} MB in {:.1} ms)",
            millis(took),
            took.as_secs_f64() / round_trip.as_secs_f64(),
            f64::from(u32::try_from(size).unwrap_or(u32::MAX)) / 1e6,
            millis(json)
        );
    }
    for (name, window) in [
        ("last hour", Duration::from_secs(3_600)),
        (
            "all time ",
            now.duration_since(SystemTime::UNIX_EPOCH).unwrap(),
        ),
    ] {
        let from = now - window;
        let counts = ledger::counts(&client, registry, from, now).await.unwrap();
        assert_eq!(counts.hosts.len(), LOCKS * 2);
        let took = median(RUNS, || async {
            ledger::counts(&client, registry, from, now).await.unwrap();
        })
        .await;
        println!(
            "  counts, {name}                {:>9.1} ms  ({:>7.0}x SELECT 1)",
            millis(took),
            took.as_secs_f64() / round_trip.as_secs_f64()
        );
    }
    if days > 1 {
        // Back to the old schema, then the upgrade a worker runs on it.
        client
            .batch_execute(
                "DROP INDEX lockward_ledger_cycle_start; \
                 ALTER TABLE lockward_ledger DROP COLUMN period_ms",
            )
            .await
            .unwrap();
        client
            .batch_execute("VACUUM lockward_ledger")
            .await
            .unwrap();
        let upgrading = Instant::now();
        client.batch_execute(ledger::UPGRADE).await.unwrap();
        println!(
            "  upgrade from the old schema      {:>9.1} ms  (ALTER TABLE + CREATE INDEX on {rows} rows)",
            millis(upgrading.elapsed())
        );
    }
}

fn registry() -> lockward_registry::Registry {
    let mut text = String::from(
        "[project]\nname = \"bench\"\n\n[core]\nconstants = \"locks.rs\"\n\
         block = { start = 1, end = 999_999 }\n",
    );
    for id in 1_001..=1_000 + LOCKS {
        let _ = write!(
            text,
            "\n[[lock]]\nid = {id}\nconstant = \"ADVISORY_LOCK_{id}\"\nworker = \"w{id}\"\n"
        );
    }
    lockward_registry::parse("lockward.toml", &text)
        .unwrap()
        .registry
}
