//! What a refresh of the dashboard costs, as the page itself measures it: `lockward serve` over a
//! registry of 1,000 locks (some held) and a ledger with a day of one-minute cycles on 50 of them
//! (72,000 marks at range=day), in headless chromium.
//!
//! The page records a `performance.measure` from the start of its fetches to its DOM updated and
//! puts it on `#status` as `data-refresh-ms` (and, to the first frame drawn after, as
//! `data-frame-ms`); this bench reads them over consecutive refreshes. The reference it is
//! compared with is the three fetches of a whole read (the ledger's whole range, as the first
//! refresh asks for it) and their `JSON.parse`s in the same page, drawing nothing; the refreshes
//! after the first ask only for the ledger's recent cycles (`&since=`), hence ratios below 1.
//!
//! `cargo bench -p lockward-cli --bench dashboard` (`LOCKWARD_BENCH_REFRESHES=N`, default 15).
//! Needs chromium and chromedriver (skipped, saying so, without them) and PostgreSQL (found as the
//! tests find it).

#[path = "../tests/cli/browser/harness.rs"]
#[allow(dead_code, unreachable_pub)]
mod harness;

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use harness::{Browser, Serve};
use lockward_pg::testing::{TestDb, seed_ledger};
use serde_json::Value;

const REGISTERED: i64 = 1_000;
const FIRST_ID: i64 = 1_000_001;
const LEDGER_LOCKS: i64 = 50;
const CYCLES: usize = 1_440;
const HELD: i64 = 25;
/// The databases of the fleet part.
const FLEET: usize = 10;
const WIDTH: u32 = 1400;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(bench());
}

async fn bench() {
    let (chromium, chromedriver) = match harness::browser_programs() {
        Ok(programs) => programs,
        Err(reason) => {
            eprintln!("dashboard bench skipped: {reason}");
            return;
        }
    };
    let refreshes: usize = std::env::var("LOCKWARD_BENCH_REFRESHES")
        .ok()
        .and_then(|text| text.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(15);

    let db = TestDb::new().await;
    let project = tempfile::tempdir().expect("a project directory");
    std::fs::write(project.path().join("lockward.toml"), registry()).expect("write lockward.toml");

    let client = db.connect().await;
    let hosts: Vec<String> = ["alpha", "beta", "gamma"].map(str::to_owned).to_vec();
    let locks: Vec<(String, Vec<String>)> = (0..LEDGER_LOCKS)
        .map(|i| ((FIRST_ID + i).to_string(), hosts.clone()))
        .collect();
    seed_ledger(
        &client,
        "harbor",
        &locks,
        Duration::from_secs(60),
        CYCLES,
        SystemTime::now(),
    )
    .await;
    // Some registered locks held now, by a few sessions, so the live table has holders to show.
    let mut holders = Vec::new();
    for session in 0..5 {
        let holder = db.connect().await;
        let first = FIRST_ID + 100 + session * HELD / 5;
        holder
            .batch_execute(&format!(
                "SET application_name = 'fleet-worker-{session}'; \
                 SELECT pg_advisory_lock(k) FROM generate_series({first}, {}) k",
                first + HELD / 5 - 1
            ))
            .await
            .expect("take the held locks");
        holders.push(holder);
    }

    let serve = Serve::start(
        env!("CARGO_BIN_EXE_lockward").as_ref(),
        project.path(),
        &db.url(),
        "2",
    );
    let browser = Browser::start(&chromium, &chromedriver, WIDTH, 1000).await;

    let mut report = String::new();
    writeln!(
        report,
        "dashboard refresh: {REGISTERED} registered locks ({HELD} held), {LEDGER_LOCKS} ledger locks \
         × {CYCLES} one-minute cycles, serve --interval 2, chromium {WIDTH} px wide, {refreshes} \
         refreshes per range (after the first)"
    )
    .expect("write to a string");
    writeln!(
        report,
        "{:<5} {:>6} {:>14} {:>22} {:>18} {:>24} {:>7} {:>12}",
        "range",
        "marks",
        "first (ms)",
        "refresh median/max",
        "to frame median",
        "whole fetch+parse median",
        "ratio",
        "ledger (MB)"
    )
    .expect("write to a string");
    for range in ["hour", "day"] {
        let row = measure_range(&browser, &serve, range, refreshes).await;
        writeln!(report, "{row}").expect("write to a string");
    }
    writeln!(report, "{}", ledger_split(&browser, refreshes).await).expect("write to a string");
    drop(serve);

    // A fleet: the same registry and ledger over 10 databases (this one and 9 more, each seeded
    // alike with its locks held), one `serve` over all of them; the page shows the first and
    // asks /api/fleet, every database's state, at each refresh beside its three reads.
    let mut fleet = Vec::new();
    for _ in 1..FLEET {
        let other = TestDb::new().await;
        let client = other.connect().await;
        seed_ledger(
            &client,
            "harbor",
            &locks,
            Duration::from_secs(60),
            CYCLES,
            SystemTime::now(),
        )
        .await;
        client
            .batch_execute(&format!(
                "SELECT pg_advisory_lock(k) FROM generate_series({}, {}) k",
                FIRST_ID + 100,
                FIRST_ID + 100 + HELD - 1
            ))
            .await
            .expect("take the held locks");
        fleet.push((other, client));
    }
    let mut urls = vec![db.url()];
    urls.extend(fleet.iter().map(|(other, _)| other.url()));
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let fleet_serve = Serve::start_fleet(
        env!("CARGO_BIN_EXE_lockward").as_ref(),
        project.path(),
        &urls,
        "2",
    );
    writeln!(
        report,
        "the same over a fleet of {FLEET} databases ({REGISTERED} registered locks, {HELD} held \
         and {LEDGER_LOCKS} × {CYCLES} cycles in each), the page showing the first:"
    )
    .expect("write to a string");
    for range in ["hour", "day"] {
        let row = measure_range(&browser, &fleet_serve, range, refreshes).await;
        writeln!(report, "{row}").expect("write to a string");
    }
    println!("{report}");
    browser.close().await;
    drop(fleet_serve);
    drop(fleet);
    drop(holders);
}

/// Loads the page at `range` and reads the page's own figures over `refreshes` refreshes.
async fn measure_range(browser: &Browser, serve: &Serve, range: &str, refreshes: usize) -> String {
    browser
        .client
        .goto("about:blank")
        .await
        .expect("leave the page");
    browser
        .client
        .goto(&format!("{}#range={range}", serve.url()))
        .await
        .expect("load the page");
    let first = browser
        .wait_for(
            "a first refresh",
            "document.getElementById('status').dataset.refreshedAt",
        )
        .await;
    let first_ms = figure(browser, "refreshMs").await;
    let marks = browser
        .eval("document.querySelectorAll('#timelines rect').length")
        .await
        .as_u64()
        .unwrap_or(0);
    let mut refresh = Vec::new();
    let mut frame = Vec::new();
    let mut last = first;
    for _ in 0..refreshes {
        last = browser
            .wait_for(
                "the next refresh",
                &format!(
                    "(() => {{ const at = document.getElementById('status').dataset.refreshedAt; \
                     return at !== {last} && document.getElementById('status').dataset.frameMs \
                       && at; }})()"
                ),
            )
            .await;
        refresh.push(figure(browser, "refreshMs").await);
        frame.push(figure(browser, "frameMs").await);
    }
    let mut fetch_only = Vec::new();
    let mut ledger_bytes = 0.0;
    for _ in 0..refreshes.min(10) {
        let script = format!(
            "const done = arguments[arguments.length - 1]; \
             const start = performance.now(); \
             Promise.all(['/api/live', '/api/registry', '/api/ledger?range={range}'] \
               .map((url) => fetch(url, {{cache: 'no-store'}}).then((r) => r.text()) \
                 .then((text) => {{ JSON.parse(text); return text.length; }}))) \
               .then((sizes) => done([performance.now() - start, sizes[2]]), (e) => done([-1, 0]));"
        );
        let value = browser
            .client
            .execute_async(&script, vec![])
            .await
            .expect("time the fetches in the page");
        let ms = value[0].as_f64().unwrap_or(-1.0);
        assert!(ms >= 0.0, "the reference fetches failed in the page");
        fetch_only.push(ms);
        ledger_bytes = value[1].as_f64().unwrap_or(0.0);
    }
    let refresh_median = median(&mut refresh);
    let refresh_max = refresh.iter().copied().fold(0.0, f64::max);
    let fetch_median = median(&mut fetch_only);
    format!(
        "{range:<5} {marks:>6} {first_ms:>14.1} {:>22} {:>18.1} {fetch_median:>24.1} {:>6.2}x {:>12.1}",
        format!("{refresh_median:.1} / {refresh_max:.1}"),
        median(&mut frame),
        refresh_median / fetch_median,
        // The answer's length in UTF-16 code units: bytes, for its ASCII.
        ledger_bytes / 1e6
    )
}

/// Where the day's ledger answer spends its time in the page: until its headers, until its
/// body is read as text, and in `JSON.parse` (medians over `runs` fetches).
async fn ledger_split(browser: &Browser, runs: usize) -> String {
    let script = "const done = arguments[arguments.length - 1]; \
        const start = performance.now(); \
        fetch('/api/ledger?range=day', {cache: 'no-store'}).then((response) => { \
          const headers = performance.now(); \
          return response.text().then((text) => { \
            const body = performance.now(); JSON.parse(text); \
            done([headers - start, body - headers, performance.now() - body]); }); }) \
        .catch(() => done(null));";
    let (mut headers, mut body, mut parse) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs.min(10) {
        let value = browser
            .client
            .execute_async(script, vec![])
            .await
            .expect("time the ledger's fetch in the page");
        let part = |i: usize| value[i].as_f64().expect("the fetch succeeded in the page");
        headers.push(part(0));
        body.push(part(1));
        parse.push(part(2));
    }
    format!(
        "/api/ledger?range=day alone, medians: headers after {:.1} ms, body read in {:.1} ms, \
         JSON.parse {:.1} ms",
        median(&mut headers),
        median(&mut body),
        median(&mut parse)
    )
}

async fn figure(browser: &Browser, name: &str) -> f64 {
    match browser
        .eval(&format!("document.getElementById('status').dataset.{name}"))
        .await
    {
        Value::String(text) => text.parse().unwrap_or(f64::NAN),
        other => panic!("#status has no data-{name}: {other}"),
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => f64::midpoint(values[n / 2 - 1], values[n / 2]),
    }
}

/// A registry of `REGISTERED` constants, ids from `FIRST_ID` up.
fn registry() -> String {
    let mut text = String::from(
        "[project]\nname = \"fleet\"\n\n[core]\nconstants = \"src/locks.rs\"\n\
         block = { start = 1_000_001, end = 1_009_999 }\n",
    );
    for i in 0..REGISTERED {
        write!(
            text,
            "\n[[lock]]\nid = {}\nconstant = \"ADVISORY_LOCK_JOB_{i:04}\"\nworker = \"job {i}\"\n",
            FIRST_ID + i
        )
        .expect("write to a string");
    }
    text
}
