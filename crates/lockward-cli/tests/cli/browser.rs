//! The dashboard in a real browser: Debian's chromium, headless, driven through chromedriver,
//! against the real `lockward serve` on loopback, a real database, and real workers.
//!
//! Skipped, saying why, where chromium or chromedriver is missing (`scripts/test` installs both
//! as root), except under `LOCKWARD_REQUIRE_ALL_TESTS=1`, where that is a failure.

pub(crate) mod harness;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use lockward_pg::testing::{TestDb, require_or_skip, seed_ledger};
use lockward_pg::{JobError, Outcome, Worker};
use lockward_registry::Registry;
use serde_json::{Value, json};

use self::harness::{Browser, Serve};
use crate::TestProject;

/// One browser at a time: each test starts its own chromium, and the machine has two cores.
static ONE_BROWSER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The page's size for the tests (and the screenshot).
const WIDTH: u32 = 1400;
const HEIGHT: u32 = 1000;

/// A database, `lockward serve` on it in a copy of the example project, and a browser on the page.
struct Dashboard {
    browser: Browser,
    serve: Serve,
    db: TestDb,
    project: TestProject,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

impl Dashboard {
    /// Everything up, the page loaded and refreshed once; `None` (the test skipped) where this
    /// machine has no chromium.
    async fn open() -> Option<Self> {
        let (chromium, chromedriver) = match harness::browser_programs() {
            Ok(programs) => programs,
            Err(reason) => {
                require_or_skip(&reason);
                return None;
            }
        };
        let turn = ONE_BROWSER_AT_A_TIME.lock().await;
        let db = TestDb::new().await;
        let project = TestProject::harbor();
        let serve = Serve::start(
            env!("CARGO_BIN_EXE_lockward").as_ref(),
            project.path(),
            &db.url(),
            "0.3",
        );
        let browser = Browser::start(&chromium, &chromedriver, WIDTH, HEIGHT).await;
        let dashboard = Self {
            browser,
            serve,
            db,
            project,
            _turn: turn,
        };
        dashboard.load().await;
        Some(dashboard)
    }

    /// Loads the page and waits for its first good refresh.
    async fn load(&self) {
        self.browser
            .client
            .goto(&self.serve.url())
            .await
            .unwrap_or_else(|error| panic!("loading {}: {error}", self.serve.url()));
        self.browser
            .wait_for(
                "a first refresh",
                "document.getElementById('status').dataset.refreshedAt",
            )
            .await;
    }

    /// The JSON of a `#locks` row's cells, by column name, or null when there is no such row.
    async fn lock_row(&self, id: i64) -> Value {
        self.browser
            .eval(&format!(
                "(() => {{ const tr = document.querySelector('#locks tr[data-id=\"{id}\"]'); \
                 if (!tr) return null; \
                 const cell = (c) => tr.querySelector('td.' + c).textContent; \
                 return {{state: tr.dataset.state, project: cell('project'), holder: cell('holder'), \
                          host: cell('host'), pid: cell('pid'), since: cell('since'), \
                          waiters: cell('waiters'), \
                          flags: [...tr.querySelectorAll('td.flags .flag')].map((f) => f.textContent).join(' '), \
                          who: [...tr.querySelectorAll('td.flags .foreign-who')].map((f) => f.textContent).join('; ')}}; }})()"
            ))
            .await
    }

    async fn close(self) {
        let Self { browser, serve, .. } = self;
        browser.close().await;
        drop(serve);
    }
}

async fn pid(client: &tokio_postgres::Client) -> i32 {
    client
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .expect("pg_backend_pid()")
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_a_lock_taken_after_it_loaded_with_its_holder_and_waiter_without_reloading()
{
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let before = dashboard.lock_row(1_001_001).await;
    assert_eq!(before["state"], "free", "{before}");
    assert_eq!(
        browser
            .eval("document.querySelectorAll('#locks tbody tr').length")
            .await,
        json!(9),
        "one row per registry entry of the example project"
    );
    assert_eq!(
        browser
            .eval(
                "[document.getElementById('ledger-state').textContent, \
                  document.getElementById('timelines-empty').hidden, \
                  document.getElementById('timelines-empty').textContent]"
            )
            .await,
        json!([
            "none",
            false,
            "This database has no ledger. Workers record their cycles in one with .ledger(true) \
             or lockward run --ledger."
        ]),
        "a database without a ledger says so"
    );
    // A reload would lose this.
    browser.eval("(window.__sameDocument = 'yes')").await;

    let holder = dashboard.db.connect().await;
    holder
        .batch_execute(
            "SET application_name = 'harbor-rollup'; \
             SELECT pg_advisory_lock(1001001), pg_advisory_lock(4242)",
        )
        .await
        .expect("take the locks");
    let holder_pid = pid(&holder).await;
    let waiter = dashboard.db.connect().await;
    let waiter_pid = pid(&waiter).await;
    let waiting = tokio::spawn(async move {
        waiter
            .batch_execute("SELECT pg_advisory_lock(1001001)")
            .await
            .expect("the waiter gets the lock in the end");
        waiter
    });

    browser
        .wait_for(
            "1001001 held, with a waiter",
            &format!(
                "(() => {{ const tr = document.querySelector('#locks tr[data-id=\"1001001\"]'); \
                 return tr && tr.dataset.state === 'held' \
                   && tr.querySelector('td.waiters').textContent.includes('{waiter_pid}'); }})()"
            ),
        )
        .await;
    let row = dashboard.lock_row(1_001_001).await;
    // Not a lockward worker: its application name, client address and backend pid.
    assert_eq!(row["pid"], json!(holder_pid.to_string()), "{row}");
    assert_eq!(row["holder"], "harbor-rollup", "{row}");
    assert_eq!(row["host"], "127.0.0.1", "{row}");
    assert_eq!(row["project"], "—", "{row}");
    assert_eq!(
        row["waiters"],
        json!(format!("a session with no name (backend {waiter_pid})")),
        "{row}"
    );
    let live = crate::serve::request(&format!("{}api/live", dashboard.serve.url()), &[]);
    let live: Value = serde_json::from_str(&live.body).expect("/api/live is JSON");
    let flags = live["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .find(|lock| lock["key"] == json!({"bigint": 1_001_001}))
        .map(|lock| {
            let flags = lock["flags"].as_array().expect("flags").iter();
            flags
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .expect("1001001 in /api/live");
    assert_eq!(row["flags"], json!(flags), "the flags live computes: {row}");
    assert_eq!(
        row["who"],
        json!(format!(
            "application \"harbor-rollup\" from 127.0.0.1 (pid {holder_pid})"
        )),
        "who is on the key that is not its worker: {row}"
    );
    let unknown = browser
        .wait_for(
            "the unknown key 4242 in its own table",
            "document.querySelector('#unknown tr[data-key=\"4242\"]')?.textContent",
        )
        .await;
    assert!(
        unknown.as_str().is_some_and(
            |text| text.contains("unregistered") && text.contains(&holder_pid.to_string())
        ),
        "{unknown}"
    );
    assert_eq!(
        browser.eval("window.__sameDocument").await,
        "yes",
        "the page refreshed without reloading"
    );
    assert_eq!(
        browser
            .eval("document.getElementById('error').hidden")
            .await,
        json!(true),
        "no error banner while refreshes succeed"
    );

    holder
        .batch_execute("SELECT pg_advisory_unlock_all()")
        .await
        .expect("release the locks");
    let waiter = waiting.await.expect("the waiter's task");
    browser
        .wait_for(
            "1001001 held by the former waiter",
            &format!(
                "document.querySelector('#locks tr[data-id=\"1001001\"] td.pid')?.textContent === '{waiter_pid}'"
            ),
        )
        .await;
    drop(waiter);
    dashboard.close().await;
}

/// What a client that wants to run script in the page would set as its application name.
const MARKUP: &str = "<img src=x onerror=window.__pwned=1><script>window.__pwned=1</script>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_application_name_made_of_markup_is_shown_as_its_text_and_runs_no_script() {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let holder = dashboard.db.connect().await;
    // PostgreSQL keeps the first 63 bytes of an application name: what the page must show is
    // the name as the server has it, which still opens an <img> with an onerror and a <script>.
    let name: String = holder
        .query_one(
            "SELECT set_config('application_name', $1, false)",
            &[&MARKUP],
        )
        .await
        .expect("set the application name")
        .get(0);
    assert!(
        name.starts_with("<img src=x onerror=window.__pwned=1><script>"),
        "{name}"
    );
    holder
        .batch_execute("SELECT pg_advisory_lock(1001001), pg_advisory_lock(77)")
        .await
        .expect("take the locks");

    browser
        .wait_for(
            "1001001 held",
            "document.querySelector('#locks tr[data-id=\"1001001\"]')?.dataset.state === 'held'",
        )
        .await;
    let row = dashboard.lock_row(1_001_001).await;
    assert_eq!(
        row["holder"],
        json!(name),
        "the application name, as text: {row}"
    );
    let unknown = browser
        .wait_for(
            "the unknown key 77",
            "document.querySelector('#unknown tr[data-key=\"77\"] td.holder')?.textContent",
        )
        .await;
    assert_eq!(unknown, json!(name));
    assert_eq!(
        browser
            .eval("document.querySelectorAll('#locks img, #locks script, #unknown img, #unknown script').length")
            .await,
        json!(0),
        "no element made from the name"
    );
    assert_eq!(
        browser.eval("typeof window.__pwned").await,
        "undefined",
        "no script from the name ran"
    );
    dashboard.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_banner_says_why_refreshes_fail_while_the_database_refuses_connections_and_goes_when_they_work_again()
 {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    // A database's connections are switched off from another one.
    let database = dashboard.db.name().to_owned();
    let (admin, connection) = tokio_postgres::connect(
        &dashboard
            .db
            .url()
            .replace(&format!("/{database}"), "/postgres"),
        tokio_postgres::NoTls,
    )
    .await
    .expect("connect to the postgres database");
    tokio::spawn(connection);
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {database} ALLOW_CONNECTIONS false; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = '{database}' AND application_name = 'lockward serve'"
        ))
        .await
        .expect("refuse new connections and end the dashboard's session");

    let banner = browser
        .wait_for(
            "the error banner",
            "!document.getElementById('error').hidden && document.getElementById('error').textContent",
        )
        .await;
    let banner = banner.as_str().unwrap_or_default().to_owned();
    assert!(
        banner.starts_with("Refresh failed at ") && banner.contains("/api/live: 503"),
        "the banner names the failing read and its status: {banner}"
    );
    let refreshed_before = browser
        .eval("document.getElementById('status').dataset.refreshedAt")
        .await;
    assert_eq!(
        browser
            .eval("document.querySelectorAll('#locks tbody tr').length")
            .await,
        json!(9),
        "the last good read stays on the page under the banner"
    );

    admin
        .batch_execute(&format!("ALTER DATABASE {database} ALLOW_CONNECTIONS true"))
        .await
        .expect("accept connections again");
    browser
        .wait_for(
            "the banner gone after a good refresh",
            &format!(
                "document.getElementById('error').hidden && \
                 document.getElementById('status').dataset.refreshedAt !== {refreshed_before}"
            ),
        )
        .await;
    dashboard.close().await;
}

/// The example project's registry, for library workers.
fn harbor_registry() -> Registry {
    let path = crate::repo_root().join("examples/harbor/lockward.toml");
    Registry::load(&path, "lockward.toml")
        .unwrap_or_else(|error| panic!("the example registry loads: {error:?}"))
        .registry
}

/// Runs a ledger worker of ADVISORY_LOCK_INVOICE_ROLLUP as `host`, every second, until it has
/// led `cycles` cycles; then stops it.
async fn lead_as(db: &TestDb, registry: &Registry, host: &str, cycles: usize) {
    let led = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&led);
    let worker = Worker::builder(registry, "ADVISORY_LOCK_INVOICE_ROLLUP")
        .expect("a registered constant")
        .database_url(db.url())
        .every(Duration::from_secs(1))
        .ledger(true)
        .host(host)
        .on_cycle(move |report| {
            if matches!(report.outcome, Outcome::Led { .. }) {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        })
        .build()
        .expect("the worker builds");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = worker.run(|_cycle| async { Ok::<(), JobError>(()) }, async move {
        let _ = stopped.await;
    });
    let running = tokio::spawn(async move { run.await.expect("the worker runs") });
    let deadline = Instant::now() + harness::PATIENCE;
    while led.load(Ordering::SeqCst) < cycles {
        assert!(
            Instant::now() < deadline,
            "the worker as {host} led {} of {cycles} cycles within {:?}",
            led.load(Ordering::SeqCst),
            harness::PATIENCE
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = stop.send(());
    running.await.expect("the worker's task");
}

/// The ledger's rows of `lock_key`: cycle start (as the page's attribute writes it), host, token.
async fn ledger_rows(
    client: &tokio_postgres::Client,
    lock_key: &str,
) -> Vec<(String, String, i64)> {
    client
        .query(
            "SELECT to_char(cycle_start AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), \
                    host, fencing_token \
             FROM lockward_ledger WHERE lock_key = $1 ORDER BY cycle_start",
            &[&lock_key],
        )
        .await
        .expect("read the ledger")
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_marks_which_host_led_each_cycle_and_the_cycles_after_a_clean_stop_as_no_alarm()
 {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let registry = harbor_registry();
    lead_as(&dashboard.db, &registry, "alpha", 2).await;
    lead_as(&dashboard.db, &registry, "beta", 2).await;
    let client = dashboard.db.connect().await;
    let rows = ledger_rows(&client, "1001001").await;
    let last_led = rows.last().expect("the workers wrote rows").0.clone();

    let section = "#timelines section[data-lock-key=\"1001001\"]";
    browser
        .wait_for(
            "a mark for every cycle led, and a cycle nobody led after the last, once stopped",
            &format!(
                "(() => {{ const s = document.querySelector('{section}'); if (!s) return false; \
                 const led = s.querySelectorAll('rect[data-host=\"alpha\"], rect[data-host=\"beta\"]'); \
                 const stopped = [...s.querySelectorAll('rect[data-status=\"stopped\"]')] \
                   .filter((r) => r.dataset.cycleStart > '{last_led}'); \
                 return led.length >= {} && stopped.length >= 1; }})()",
                rows.len()
            ),
        )
        .await;
    for (start, host, token) in &rows {
        let mark = browser
            .eval(&format!(
                "(() => {{ const r = document.querySelector('{section} rect[data-cycle-start=\"{start}\"]'); \
                 return r && {{host: r.dataset.host, status: r.dataset.status, \
                              fill: r.getAttribute('fill'), title: r.querySelector('title').textContent}}; }})()"
            ))
            .await;
        assert_eq!(mark["host"], json!(host), "the mark of {start}: {mark}");
        assert_eq!(mark["status"], "done", "the mark of {start}: {mark}");
        let title = mark["title"].as_str().unwrap_or_default();
        assert!(
            title.contains(&format!("host {host}"))
                && title.contains(&format!("fencing token {token}")),
            "the hover text of {start} names its host and fencing token: {title}"
        );
    }
    let fills = browser
        .eval(&format!(
            "['alpha', 'beta'].map((h) => document.querySelector('{section} rect[data-host=\"' + h + '\"]').getAttribute('fill'))"
        ))
        .await;
    assert_ne!(fills[0], fills[1], "each host has its own colour: {fills}");
    let legend = browser
        .eval("[...document.querySelectorAll('#legend-hosts [data-host]')].map((e) => e.dataset.host)")
        .await;
    assert_eq!(legend, json!(["alpha", "beta"]));
    assert_eq!(
        browser
            .eval("document.getElementById('ledger-state').textContent")
            .await,
        "yes",
        "the ledger the workers created after the page loaded is known to the header"
    );
    // Issue 21, item 4: after the workers stopped on purpose (the ledger records a clean stop),
    // the boundaries nobody led are grey "stopped" marks, not red ones, and no "nobody led" chip.
    let stopped = browser
        .eval(&format!(
            "(() => {{ const r = [...document.querySelectorAll('{section} rect[data-status=\"stopped\"]')] \
               .find((r) => r.dataset.cycleStart > '{last_led}'); \
             const style = getComputedStyle(r); \
             return {{host: r.dataset.host, title: r.querySelector('title').textContent, \
                      stroke: style.stroke, fill: style.fill, \
                      unled: document.querySelectorAll('{section} rect[data-status=\"unled\"]').length, \
                      chips: document.querySelector('{section} .tl-chips').textContent}}; }})()"
        ))
        .await;
    assert_eq!(stopped["host"], "", "{stopped}");
    assert!(
        stopped["title"]
            .as_str()
            .is_some_and(|t| t.contains("stopped on purpose")),
        "{stopped}"
    );
    let red = "rgb(209, 36, 47)";
    assert!(
        stopped["stroke"] != red && stopped["fill"] != red,
        "a stopped mark is not red: {stopped}"
    );
    assert_eq!(stopped["unled"], 0, "{stopped}");
    assert!(
        stopped["chips"]
            .as_str()
            .is_some_and(|chips| chips.contains("stopped") && !chips.contains("nobody led")),
        "{stopped}"
    );
    dashboard.close().await;
}

/// The page's marks of `lock_key`: `[cycle_start, status, host]` in order.
async fn marks(browser: &harness::Browser, lock_key: &str) -> Value {
    browser
        .eval(&format!(
            "[...document.querySelectorAll('#timelines section[data-lock-key=\"{lock_key}\"] rect[data-cycle-start]')] \
             .map((r) => [r.dataset.cycleStart, r.dataset.status, r.dataset.host || '']) \
             .sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)"
        ))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_its_first_read_the_page_reads_only_recent_cycles_and_draws_what_a_whole_read_answers()
 {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let client = dashboard.db.connect().await;
    seed_rollup(&client, Duration::from_secs(60), 20, SystemTime::now()).await;
    let section = "#timelines section[data-lock-key=\"1001001\"]";
    browser
        .wait_for(
            "the seeded cycles",
            &format!(
                "document.querySelectorAll('{section} rect[data-status=\"done\"]').length === 20"
            ),
        )
        .await;
    // The cycle under way now: running, then failed, each reaching the page through reads of
    // the recent cycles only.
    client
        .batch_execute(
            "INSERT INTO lockward_ledger (lock_key, cycle_start, fencing_token, application_name, host, pid, period_ms) \
             VALUES ('1001001', to_timestamp(floor(extract(epoch FROM now()) / 60) * 60), \
                     nextval('lockward_fencing_token'), 'lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP 7@beta', \
                     'beta', 7, 60000)",
        )
        .await
        .expect("a cycle begins");
    let running = format!("{section} rect[data-status=\"running\"][data-host=\"beta\"]");
    browser
        .wait_for(
            "the running cycle, read since the last answer",
            &format!(
                "document.querySelector('{running}') !== null && \
                 document.getElementById('status').dataset.ledgerRead === 'since'"
            ),
        )
        .await;
    client
        .batch_execute(
            "UPDATE lockward_ledger SET outcome = 'failed', finished_at = clock_timestamp() \
             WHERE lock_key = '1001001' AND host = 'beta'",
        )
        .await
        .expect("the cycle fails");
    browser
        .wait_for(
            "the cycle failed, read since the last answer",
            &format!(
                "document.querySelector('{section} rect[data-status=\"failed\"][data-host=\"beta\"]') !== null && \
                 document.getElementById('status').dataset.ledgerRead === 'since'"
            ),
        )
        .await;

    // What the page drew from pieces is what one whole read answers.
    let drawn = marks(browser, "1001001").await;
    let whole: Value = serde_json::from_str(
        &crate::serve::request(
            &format!("{}api/ledger?range=hour", dashboard.serve.url()),
            &[],
        )
        .body,
    )
    .expect("JSON");
    let lock = whole["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|lock| lock["lock_key"] == "1001001")
        .expect("the lock");
    let answered: Vec<Value> = lock["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            json!([
                c["cycle_start"],
                c["status"],
                c["host"].as_str().unwrap_or("")
            ])
        })
        .collect();
    let drawn = drawn.as_array().unwrap();
    // Both end at the failed cycle: no boundary after it has ended yet, or one more did
    // between the two reads.
    let common = drawn.len().min(answered.len());
    assert!(common >= 21, "{drawn:?}");
    assert_eq!(drawn[..common], answered[..common]);
    dashboard.close().await;
}

/// A host name that would run script if the page built markup from it.
const MARKUP_HOST: &str = "<img src=x onerror=window.__pwned=2>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_lost_unled_and_overlapping_cycles_are_marked_and_counted_in_the_row_header() {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let client = dashboard.db.connect().await;
    seed_ledger(
        &client,
        "harbor",
        &[
            (
                "1001006".to_owned(),
                vec!["alpha".to_owned(), "beta".to_owned()],
            ),
            ("4242".to_owned(), vec![MARKUP_HOST.to_owned()]),
        ],
        Duration::from_secs(60),
        30,
        SystemTime::now(),
    )
    .await;
    let rows = ledger_rows(&client, "1001006").await;
    assert_eq!(rows.len(), 30);
    let at = |i: usize| rows[i].0.clone();
    // The ledger as a failed cycle, a leader that died, two leaders that overlapped their
    // predecessors, and a cycle nobody led leave it.
    client
        .batch_execute(&format!(
            "UPDATE lockward_ledger SET outcome = 'failed', detail = '`reindex.sh` exited with status 3' \
               WHERE lock_key = '1001006' AND cycle_start = '{f}'; \
             UPDATE lockward_ledger SET outcome = NULL, finished_at = NULL WHERE lock_key = '1001006' AND cycle_start = '{l}'; \
             UPDATE lockward_ledger p SET finished_at = n.started_at + interval '2 seconds' \
               FROM lockward_ledger n WHERE p.lock_key = '1001006' AND n.lock_key = '1001006' \
               AND n.cycle_start = p.cycle_start + interval '1 minute' AND n.cycle_start IN ('{o1}', '{o2}'); \
             DELETE FROM lockward_ledger WHERE lock_key = '1001006' AND cycle_start = '{u}'",
            f = at(5),
            l = at(9),
            o1 = at(14),
            o2 = at(20),
            u = at(25),
        ))
        .await
        .expect("shape the ledger");
    // Loaded again: a page that read these rows before they were reshaped would read the
    // changes, 20 minutes back, only at its next whole read of the ledger.
    dashboard.load().await;

    let section = "#timelines section[data-lock-key=\"1001006\"]";
    let statuses = browser
        .wait_for(
            "the shaped ledger's marks",
            &format!(
                "(() => {{ const s = document.querySelector('{section}'); \
                 if (!s || s.dataset.overlaps !== '2') return null; \
                 const status = (start) => s.querySelector('rect[data-cycle-start=\"' + start + '\"]')?.dataset.status; \
                 const title = (start) => s.querySelector('rect[data-cycle-start=\"' + start + '\"] title')?.textContent; \
                 return {{failed: status('{}'), failed_title: title('{}'), lost: status('{}'), unled: status('{}'), \
                          unled_starts: [...s.querySelectorAll('rect[data-status=\"unled\"]')].map((r) => r.dataset.cycleStart), \
                          overlapped: [...s.querySelectorAll('rect[data-overlap]')].map((r) => r.dataset.cycleStart), \
                          markers: s.querySelectorAll('polygon.overlap-marker').length, \
                          chips: [...s.querySelectorAll('.tl-chips .chip')].map((c) => c.textContent)}}; }})()",
                at(5),
                at(5),
                at(9),
                at(25)
            ),
        )
        .await;
    assert_eq!(statuses["failed"], "failed", "{statuses}");
    // Issue 21, item 2: the failed cycle's hover says how its job ended.
    assert!(
        statuses["failed_title"]
            .as_str()
            .is_some_and(|title| title.contains("error: `reindex.sh` exited with status 3")),
        "{statuses}"
    );
    assert_eq!(statuses["lost"], "lost", "{statuses}");
    assert_eq!(statuses["unled"], "unled", "{statuses}");
    assert_eq!(
        statuses["overlapped"],
        json!([at(14), at(20)]),
        "{statuses}"
    );
    assert_eq!(
        statuses["markers"],
        json!(2),
        "one marker above each overlap: {statuses}"
    );
    // Boundaries after the last seeded cycle count as nobody led too, once they have ended (how
    // many depends on when in the minute the test runs); before it, only the deleted one does.
    let unled_starts: Vec<&str> = statuses["unled_starts"]
        .as_array()
        .expect("unled marks")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let last_seeded = rows.last().expect("rows").0.as_str();
    assert_eq!(
        unled_starts
            .iter()
            .filter(|start| **start <= last_seeded)
            .collect::<Vec<_>>(),
        [&at(25).as_str()],
        "{statuses}"
    );
    let chips = statuses["chips"].as_array().expect("chips").clone();
    let unled_chip = format!("{} nobody led", unled_starts.len());
    for chip in ["29 led", &unled_chip, "1 failed", "1 lost", "2 overlaps"] {
        assert!(
            chips.contains(&json!(chip)),
            "the row header says {chip:?}: {statuses}"
        );
    }

    // The unknown key's host, made of markup, is text in the legend and the marks.
    let host = browser
        .eval(
            "[document.querySelector('#legend-hosts [data-host^=\"<img\"]')?.textContent, \
              document.querySelector('#timelines section[data-lock-key=\"4242\"] rect')?.dataset.host, \
              document.querySelectorAll('#legend img, #timelines img').length, typeof window.__pwned]",
        )
        .await;
    assert_eq!(host, json!([MARKUP_HOST, MARKUP_HOST, 0, "undefined"]));
    dashboard.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choosing_the_last_day_draws_the_cycles_before_the_last_hour_and_a_reload_keeps_the_choice()
{
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let client = dashboard.db.connect().await;
    // Two hours of cycles that ended two hours ago: nobody has led since.
    seed_rollup(
        &client,
        Duration::from_secs(60),
        120,
        SystemTime::now() - Duration::from_secs(2 * 3600),
    )
    .await;
    let count = |status: &str| {
        format!(
            "document.querySelectorAll('#timelines section[data-lock-key=\"1001001\"] \
             rect[data-status=\"{status}\"]').length"
        )
    };
    browser
        .wait_for(
            "the last hour: every boundary nobody led",
            &format!("{} >= 59 && {} === 0", count("unled"), count("done")),
        )
        .await;

    browser
        .client
        .find(fantoccini::Locator::Css("#range"))
        .await
        .expect("the range choice")
        .select_by_value("day")
        .await
        .expect("choose the last day");
    browser
        .wait_for(
            "the last day: the 120 cycles led",
            &format!("{} === 120", count("done")),
        )
        .await;
    assert_eq!(
        browser
            .eval(
                "[location.hash, document.getElementById('axis-label').textContent.split(',')[0]]"
            )
            .await,
        json!(["#range=day", "last day"])
    );

    browser.client.refresh().await.expect("reload the page");
    browser
        .wait_for(
            "the last day again after the reload",
            &format!(
                "document.getElementById('range').value === 'day' && {} === 120",
                count("done")
            ),
        )
        .await;
    dashboard.close().await;
}

/// Issue 21, item 3: two minutes of data were a sliver at the right edge of "last hour". The
/// last 5 and 15 minutes draw only their cycles, across the whole plot, under an axis whose
/// labels keep apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_5_and_15_minutes_draw_only_their_cycles_across_the_plot() {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let client = dashboard.db.connect().await;
    // An hour of 30-second cycles, up to now.
    seed_rollup(&client, Duration::from_secs(30), 120, SystemTime::now()).await;
    let section = "#timelines section[data-lock-key=\"1001001\"]";
    for (range, label, cycles) in [
        ("5m", "last 5 minutes", 10_u32),
        ("15m", "last 15 minutes", 30),
    ] {
        browser
            .client
            .find(fantoccini::Locator::Css("#range"))
            .await
            .expect("the range choice")
            .select_by_value(range)
            .await
            .expect("choose the range");
        // The range's cycles, give or take the one at either edge as the clock moves.
        let drawn = browser
            .wait_for(
                &format!("the {label}: its cycles"),
                &format!(
                    "(() => {{ const row = document.querySelector('{section} .tl-svg'); \
                     if (!row) return false; \
                     const marks = [...document.querySelectorAll('{section} rect[data-status=\"done\"]')]; \
                     const plot = row.getBoundingClientRect(); \
                     const boxes = marks.map((m) => m.getBoundingClientRect()); \
                     const left = Math.min(...boxes.map((b) => b.left)) - plot.left; \
                     const labels = [...document.querySelectorAll('#axis-svg .tick-label')] \
                       .map((t) => t.getBoundingClientRect()); \
                     const apart = labels.every((r, i) => i === 0 || labels[i - 1].right + 2 <= r.left); \
                     const ok = Math.abs(marks.length - {cycles}) <= 1 && left < plot.width * 0.1 \
                       && labels.length >= 4 && apart \
                       && document.getElementById('axis-label').textContent.startsWith('{label}'); \
                     return ok && {{marks: marks.length, left, labels: labels.length}}; }})()"
                ),
            )
            .await;
        eprintln!("{range}: {drawn}");
    }
    dashboard.close().await;
}

/// Seeds `cycles` done cycles of the rollup (1001001), every `period`, led by host `alpha`,
/// ending before `end`.
async fn seed_rollup(
    client: &tokio_postgres::Client,
    period: Duration,
    cycles: usize,
    end: SystemTime,
) {
    let hosts = vec!["alpha".to_owned()];
    seed_ledger(
        client,
        "harbor",
        &[("1001001".to_owned(), hosts)],
        period,
        cycles,
        end,
    )
    .await;
}

/// Issue 21, item 10 on the page: over three databases, one of them down, the page shows a
/// Databases panel (each up or down, the down one with its error) and a chooser; choosing
/// another database shows that database's locks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_a_fleet_the_page_marks_the_database_that_is_down_and_shows_the_one_chosen() {
    let (chromium, chromedriver) = match harness::browser_programs() {
        Ok(programs) => programs,
        Err(reason) => {
            require_or_skip(&reason);
            return;
        }
    };
    let _turn = ONE_BROWSER_AT_A_TIME.lock().await;
    let (east, west) = (TestDb::new().await, TestDb::new().await);
    let holder = west.connect().await;
    holder
        .batch_execute("SELECT pg_advisory_lock(1001006)")
        .await
        .expect("hold the search reindex on west");
    // Nothing listens on port 1: a database that is down from the start.
    let down = "postgres://postgres@127.0.0.1:1/gone?connect_timeout=1";
    let project = TestProject::harbor();
    let (east_url, west_url) = (east.url(), west.url());
    let serve = Serve::start_fleet(
        env!("CARGO_BIN_EXE_lockward").as_ref(),
        project.path(),
        &[&east_url, &west_url, down],
        "0.3",
    );
    let browser = Browser::start(&chromium, &chromedriver, WIDTH, HEIGHT).await;
    browser
        .client
        .goto(&serve.url())
        .await
        .expect("load the page");
    let west_name = lockward_pg::live::database_name(&west_url).expect("a URL");
    let fleet = browser
        .wait_for(
            "the Databases panel with the one that is down marked",
            "(() => { const rows = [...document.querySelectorAll('#fleet tbody tr')]; \
               if (rows.length !== 3 || document.getElementById('fleet-panel').hidden) return false; \
               return rows.map((r) => [r.dataset.database, r.dataset.up, \
                                       r.querySelector('.error-text').textContent !== '']); })()",
        )
        .await;
    assert_eq!(
        fleet[2],
        json!(["127.0.0.1:1/gone", "false", true]),
        "{fleet}"
    );
    assert_eq!(fleet[1], json!([west_name, "true", false]), "{fleet}");
    assert_eq!(
        browser
            .eval("[...document.querySelectorAll('#database-choice option')].length")
            .await,
        json!(3)
    );
    // The first database, shown by default, holds nothing; west holds the search reindex.
    browser
        .wait_for(
            "east's registry",
            "document.querySelector('#locks tr[data-id=\"1001006\"]')?.dataset.state === 'free'",
        )
        .await;
    browser
        .client
        .find(fantoccini::Locator::Css("#database-choice"))
        .await
        .expect("the database chooser")
        .select_by_value(&west_name)
        .await
        .expect("choose west");
    browser
        .wait_for(
            "west's registry, the page loaded again on it",
            &format!(
                "location.hash.includes('database=' + encodeURIComponent('{west_name}')) && \
                 document.querySelector('#locks tr[data-id=\"1001006\"]')?.dataset.state === 'held' && \
                 document.querySelector('#fleet tr.shown')?.dataset.database === '{west_name}'"
            ),
        )
        .await;
    browser.close().await;
    drop((serve, holder));
}

/// Where test artifacts go: `target/lockward-artifacts/` (not committed).
fn artifacts_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("lockward-artifacts");
    std::fs::create_dir_all(&dir).expect("create target/lockward-artifacts");
    dir
}

/// A PNG of the whole page at `width`, kept in the test artifacts as `name` (and, with
/// `LOCKWARD_UPDATE_SCREENSHOT=1`, as the README's `docs/NAME`).
async fn keep_screenshot(browser: &harness::Browser, width: u32, name: &str) {
    let png = browser.screenshot_full_page(width).await;
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "chromium returned a PNG"
    );
    let path = artifacts_dir().join(name);
    std::fs::write(&path, &png).expect("write the screenshot");
    eprintln!("the dashboard's screenshot: {}", path.display());
    if std::env::var("LOCKWARD_UPDATE_SCREENSHOT").is_ok_and(|value| value == "1") {
        let docs = crate::repo_root().join("docs").join(name);
        std::fs::create_dir_all(docs.parent().expect("docs/")).expect("create docs/");
        std::fs::write(&docs, &png).expect("write the README's screenshot");
        eprintln!("and the README's: {}", docs.display());
    }
}

/// The desktop and phone views of the page, made by the browser test below, are the README's
/// pictures; the page's layout at both sizes is asserted there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_of_the_dashboard_at_work_is_kept_as_a_test_artifact() {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let browser = &dashboard.browser;
    let client = dashboard.db.connect().await;
    let now = SystemTime::now();
    let hosts = |names: &[&str]| {
        names
            .iter()
            .map(|name| (*name).to_owned())
            .collect::<Vec<_>>()
    };
    seed_ledger(
        &client,
        "harbor",
        &[("1001001".to_owned(), hosts(&["web-1", "web-2"]))],
        Duration::from_secs(60),
        60,
        now,
    )
    .await;
    seed_ledger(
        &client,
        "harbor",
        &[(
            "1001004/2".to_owned(),
            hosts(&["web-1", "web-2", "batch-1"]),
        )],
        Duration::from_secs(300),
        12,
        now,
    )
    .await;
    seed_ledger(
        &client,
        "harbor",
        &[("1852404596".to_owned(), hosts(&["batch-1"]))],
        Duration::from_secs(30),
        120,
        now,
    )
    .await;
    // What an operator comes to the page for: a failure, a leader that died, two leaders at once,
    // and cycles nobody led while a deploy had every worker down.
    let rows = ledger_rows(&client, "1001001").await;
    client
        .batch_execute(&format!(
            "UPDATE lockward_ledger SET outcome = 'failed' WHERE lock_key = '1001001' AND cycle_start = '{f}'; \
             UPDATE lockward_ledger SET outcome = NULL, finished_at = NULL WHERE lock_key = '1001001' AND cycle_start = '{l}'; \
             UPDATE lockward_ledger p SET finished_at = n.started_at + interval '20 seconds' \
               FROM lockward_ledger n WHERE p.lock_key = '1001001' AND n.lock_key = '1001001' \
               AND n.cycle_start = p.cycle_start + interval '1 minute' AND n.cycle_start = '{o}'; \
             DELETE FROM lockward_ledger WHERE lock_key = '1001001' AND cycle_start IN ('{u1}', '{u2}', '{u3}')",
            f = rows[17].0,
            l = rows[41].0,
            o = rows[30].0,
            u1 = rows[50].0,
            u2 = rows[51].0,
            u3 = rows[52].0,
        ))
        .await
        .expect("shape the ledger");
    // Loaded again, as an operator opening the page would: the page reads the ledger whole,
    // reshaped rows an hour back included.
    dashboard.load().await;
    // Holders as workers name themselves, a replica waiting its turn, and a stray session on a
    // retired id and on a key the registry does not know.
    let mut sessions = Vec::new();
    for (name, locks) in [
        (
            "lockward:harbor:ADVISORY_LOCK_SEARCH_REINDEX 4242@web-1",
            "pg_advisory_lock(1001006)",
        ),
        (
            "lockward:harbor:ADVISORY_LOCK_RELOAD_BASE/2 4343@web-2",
            "pg_advisory_lock(1001004, 2)",
        ),
        ("psql", "pg_advisory_lock(1001003), pg_advisory_lock(4242)"),
    ] {
        let session = dashboard.db.connect().await;
        session
            .batch_execute(&format!("SET application_name = '{name}'; SELECT {locks}"))
            .await
            .expect("take the locks");
        sessions.push(session);
    }
    let waiter = dashboard.db.connect().await;
    waiter
        .batch_execute(
            "SET application_name = 'lockward:harbor:ADVISORY_LOCK_SEARCH_REINDEX 5151@web-2'",
        )
        .await
        .expect("name the waiter");
    let waiting = tokio::spawn(async move {
        let _ = waiter
            .batch_execute("SELECT pg_advisory_lock(1001006)")
            .await;
        waiter
    });
    browser
        .wait_for(
            "the holders, the waiter and the three timelines",
            "document.querySelectorAll('#timelines section').length === 3 && \
             document.querySelector('#locks tr[data-id=\"1001006\"] td.waiters')?.textContent !== '' && \
             document.querySelector('#unknown tr[data-key=\"4242\"]') !== null",
        )
        .await;
    // Issue 21, item 1: who leads, as columns parsed from the identity (the application name,
    // cut at 63 bytes by PostgreSQL, was one cell cut again with "…"), and who waits, by name.
    let search = dashboard.lock_row(1_001_006).await;
    assert_eq!(
        [
            &search["project"],
            &search["holder"],
            &search["host"],
            &search["pid"]
        ],
        ["harbor", "ADVISORY_LOCK_SEARCH_REINDEX", "web-1", "4242"],
        "{search}"
    );
    assert_eq!(search["waiters"], "web-2 (pid 5151)", "{search}");
    let family = dashboard.lock_row(1_001_004).await;
    assert_eq!(
        [&family["holder"], &family["host"], &family["pid"]],
        ["#2 ADVISORY_LOCK_RELOAD_BASE /2", "web-2", "4343"],
        "{family}"
    );
    keep_screenshot(browser, WIDTH, "dashboard.png").await;

    // Issue 21, item 3: at 390x844 the registry table was 1,238 px wide in a 348 px box and the
    // timeline about 60 px wide with overprinted labels.
    let viewport = browser.set_viewport(390, 844).await;
    assert_eq!(viewport, (390, 844), "the phone's viewport");
    let layout = "(() => { \
               const row = document.querySelector('#locks tr[data-id=\"1001006\"]'); \
               if (!row || !document.querySelector('#timelines .tl-svg')) return false; \
               const cells = ['state', 'flags', 'holder', 'host', 'pid'] \
                 .map((c) => row.querySelector('td.' + c)) \
                 .filter((td) => td.textContent !== '') \
                 .map((td) => td.getBoundingClientRect()); \
               const plot = document.querySelector('#timelines .tl-svg').getBoundingClientRect(); \
               const labels = [...document.querySelectorAll('#axis-svg .tick-label')] \
                 .map((t) => t.getBoundingClientRect()); \
               const apart = labels.every((r, i) => i === 0 || labels[i - 1].right + 2 <= r.left); \
               const marks = document.querySelectorAll('#timelines section[data-lock-key=\"1852404596\"] rect[data-cycle-start]'); \
               const visible = [...marks].filter((m) => m.getBoundingClientRect().width >= 1).length; \
               const fits = document.documentElement.scrollWidth <= window.innerWidth \
                 && cells.every((r) => r.width > 0 && r.left >= 0 && r.right <= window.innerWidth) \
                 && plot.width >= 300 && labels.length >= 3 && apart && visible >= 60; \
               const seen = {scroll: document.documentElement.scrollWidth, plot: plot.width, \
                             labels: labels.length, apart, visible, \
                             wide: [...document.querySelectorAll('body *')] \
                               .filter((e) => e.getBoundingClientRect().right > window.innerWidth) \
                               .slice(0, 5).map((e) => e.tagName + '.' + e.className.baseVal + e.className), \
                             cells: cells.map((r) => [Math.round(r.left), Math.round(r.right)])}; \
               return CHECK; })()";
    // What the page measures, said when it does not fit.
    let seen = browser.eval(&layout.replace("CHECK", "seen")).await;
    let phone = browser
        .wait_for(
            &format!("the page laid out for the phone (it measured {seen})"),
            &layout.replace("CHECK", "fits && seen"),
        )
        .await;
    eprintln!("the phone layout: {phone}");
    keep_screenshot(browser, 390, "dashboard-phone.png").await;
    // The narrowest phones the layout is for: 360 px.
    let viewport = browser.set_viewport(360, 740).await;
    assert_eq!(viewport, (360, 740), "the small phone's viewport");
    let small = browser
        .wait_for(
            "the page laid out for a 360 px phone",
            &layout
                .replace("plot.width >= 300", "plot.width >= 280")
                .replace("CHECK", "fits && seen"),
        )
        .await;
    eprintln!("the 360 px layout: {small}");
    drop(sessions);
    drop(waiting.await.expect("the waiter's task"));
    dashboard.close().await;
}

/// Issue 19's scenario: harbor's `ADVISORY_LOCK_INVOICE_ROLLUP` (1_001_001) and a second
/// registry, project `reports`, whose lock has the same id, both `lockward run --ledger` on one
/// database. The harbor side logged collisions, but `live` showed the key plainly held (exit 0),
/// the page a green "held", `/metrics` no flag, and the ledger counted reports' cycles as the
/// rollup's. Now `live` exits 1 naming the other project, the page's row has the red flag and
/// says who, `/metrics` has the flag, and the ledger keeps reports' cycles apart: `foreign`
/// marks on the timeline, `lockward_ledger_window_foreign_cycles{foreign_project="reports"}`, and the
/// rollup's own counts only harbor's rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_projects_worker_on_our_id_is_flagged_in_live_the_page_metrics_and_the_ledger() {
    use crate::run::{Runner, another_project_on_harbors_id, eventually};

    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    let url = dashboard.db.url();
    let harbor = TestProject::harbor();
    let reports = another_project_on_harbors_id();
    let mut ours = Runner::start_with(&harbor, &url, "1s", &["--ledger"], &["work", "0.3"]);
    let mut theirs = Runner::start_with(&reports, &url, "1s", &["--ledger"], &["work", "0.3"]);
    let client = dashboard.db.connect().await;
    // Both sides lead some cycles: whoever takes the lock first in a second leads it.
    let mut both = false;
    for _ in 0..300 {
        if let Ok((harbors, reports)) = rows_by_project(&client).await
            && harbors >= 2
            && reports >= 2
        {
            both = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        both,
        "both projects led cycles within 30 s;\nharbor:\n{}\nreports:\n{}",
        ours.stderr(),
        theirs.stderr()
    );

    // live, from harbor's project: exit 1, the other project named.
    let mut shown = None;
    let named = eventually(Duration::from_secs(30), || {
        let live = harbor.run(&["live", "--database-url", &url]);
        let json = harbor.run(&["live", "--format", "json", "--database-url", &url]);
        let value: Value = serde_json::from_str(&json.stdout).unwrap_or(Value::Null);
        let foreign = value["locks"].as_array().and_then(|locks| {
            locks
                .iter()
                .find(|lock| lock["id"] == 1_001_001 && lock["foreign"]["kind"] == "project")
                .cloned()
        });
        if let Some(lock) = foreign {
            shown = Some((lock, json.code, live.stdout, live.code));
        }
        shown.as_ref().is_some_and(|(_, _, text, _)| {
            text.contains("ADVISORY_LOCK_INVOICE_ROLLUP): foreign-holder: project reports's worker")
        })
    });
    assert!(named, "live named the other project within 30 s: {shown:?}");
    let (lock, json_code, _, text_code) = shown.expect("shown");
    assert_eq!((json_code, text_code), (1, 1), "a flagged key: {lock}");
    assert_eq!(lock["foreign"]["project"], "reports", "{lock}");
    assert!(
        lock["flags"]
            .as_array()
            .is_some_and(|flags| flags.contains(&json!("foreign-holder"))),
        "{lock}"
    );

    // The page: the red flag on the rollup's row, saying who; foreign marks on its timeline.
    let flagged = dashboard
        .browser
        .wait_for(
            "the rollup's row flagged foreign-holder, naming reports",
            "(() => { const tr = document.querySelector('#locks tr[data-id=\"1001001\"]'); \
             if (!tr || !tr.dataset.flags.includes('foreign-holder')) return false; \
             const who = tr.querySelector('td.flags .foreign-who'); \
             return who && who.textContent.includes('project reports') ? \
               {flags: tr.dataset.flags, who: who.textContent, \
                colour: getComputedStyle(tr.querySelector('.flag-foreign-holder')).backgroundColor} : false; })()",
        )
        .await;
    assert_eq!(
        flagged["colour"], "rgb(209, 36, 47)",
        "a red flag: {flagged}"
    );
    let section = "#timelines section[data-lock-key=\"1001001\"]";
    let foreign = dashboard
        .browser
        .wait_for(
            "reports' cycles marked foreign on the rollup's timeline",
            &format!(
                "(() => {{ const marks = [...document.querySelectorAll('{section} rect[data-status=\"foreign\"]')]; \
                 const s = document.querySelector('{section}'); \
                 return marks.length >= 2 && s.dataset.foreign >= 2 ? \
                   {{count: marks.length, title: marks[0].querySelector('title').textContent, \
                    chips: s.querySelector('.chip-foreign') ? s.querySelector('.chip-foreign').textContent : ''}} : false; }})()"
            ),
        )
        .await;
    assert!(
        foreign["title"]
            .as_str()
            .is_some_and(|t| t.contains("COLLISION: a worker of project reports")),
        "{foreign}"
    );
    assert!(
        foreign["chips"]
            .as_str()
            .is_some_and(|t| t.ends_with("led by another project")),
        "{foreign}"
    );

    // /metrics flags the key while the other project's worker is on it.
    let metrics_url = format!("{}metrics", dashboard.serve.url());
    let flag = [("id", "1001001"), ("flag", "foreign-holder")];
    let mut body = String::new();
    let flagged = eventually(Duration::from_secs(30), || {
        body = crate::serve::request(&metrics_url, &[]).body;
        crate::serve::sample(
            &crate::serve::parse_metrics(&body),
            "lockward_lock_flagged",
            &flag,
        ) == Some(1.0)
    });
    assert!(flagged, "/metrics flagged the rollup within 30 s:\n{body}");

    // Stop both, then read /metrics and the ledger at rest.
    let term = rustix::process::Signal::TERM;
    assert_eq!(ours.stop_with(term, Duration::from_secs(15)), 0);
    assert_eq!(theirs.stop_with(term, Duration::from_secs(15)), 0);
    let (harbors, reports_rows) = rows_by_project(&client).await.expect("the ledger's rows");
    let metrics = crate::serve::request(&metrics_url, &[]);
    let scrape = crate::serve::parse_metrics(&metrics.body);
    let ours_counted: f64 = scrape
        .samples
        .iter()
        .filter(|s| {
            s.metric == "lockward_ledger_window_cycles" && s.labels.get("id") == Some("1001001")
        })
        .map(|s| match s.value {
            prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
            _ => 0.0,
        })
        .sum();
    #[allow(clippy::cast_precision_loss)] // counts of a few dozen rows
    let expected = (harbors as f64, reports_rows as f64);
    #[allow(clippy::float_cmp)] // whole numbers, exact in an f64
    let only_ours = ours_counted == expected.0;
    assert!(
        only_ours,
        "only harbor's rows are the rollup's cycles: {ours_counted} counted, {harbors} rows"
    );
    assert_eq!(
        crate::serve::sample(
            &scrape,
            "lockward_ledger_window_foreign_cycles",
            &[
                ("project", "harbor"),
                ("id", "1001001"),
                ("foreign_project", "reports")
            ]
        ),
        Some(expected.1),
        "{}",
        metrics.body
    );
    dashboard.close().await;
}

/// The rollup's ledger rows written by harbor's workers and by reports'.
async fn rows_by_project(
    client: &tokio_postgres::Client,
) -> Result<(i64, i64), tokio_postgres::Error> {
    let row = client
        .query_one(
            "SELECT count(*) FILTER (WHERE application_name LIKE 'lockward:harbor:%'), \
                    count(*) FILTER (WHERE application_name LIKE 'lockward:reports:%') \
             FROM lockward_ledger WHERE lock_key = '1001001'",
            &[],
        )
        .await?;
    Ok((row.get(0), row.get(1)))
}

/// A key of another project's registry named by `[[share]]` (added while the page is open) shows
/// among the keys outside this registry as that project's lock, unflagged; a migration tool's
/// well-known key as that tool's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_registrys_key_shows_as_that_projects_lock_and_a_tools_key_as_the_tools() {
    let Some(dashboard) = Dashboard::open().await else {
        return;
    };
    dashboard.project.write(
        "other/lockward.toml",
        "[project]\nname = \"reports\"\n\n[core]\nconstants = \"locks.py\"\n\
         block = { start = 2_000_001, end = 2_000_999 }\n\n\
         [[lock]]\nid = 2_000_001\nconstant = \"ADVISORY_LOCK_REPORT\"\nworker = \"report builder\"\n",
    );
    dashboard.project.edit(
        "lockward.toml",
        "[scan]\n",
        "[[share]]\nregistry = \"other/lockward.toml\"\n\n[scan]\n",
    );
    let holder = dashboard.db.connect().await;
    holder
        .batch_execute(
            "SET application_name = 'lockward:reports:ADVISORY_LOCK_REPORT 9@host-r'; \
             SELECT pg_advisory_lock(2000001), pg_advisory_lock(72707369)",
        )
        .await
        .expect("hold the report's key and Prisma Migrate's");
    let row = dashboard
        .browser
        .wait_for(
            "the report's key shown as project reports's",
            "(() => { const tr = document.querySelector('#unknown tr[data-key=\"2000001\"]'); \
             const who = tr && tr.querySelector('.shared-entry'); \
             return who ? {project: tr.dataset.project, text: who.textContent, \
                           flagged: tr.classList.contains('flagged')} : false; })()",
        )
        .await;
    assert_eq!(
        row,
        json!({"project": "reports", "text": "project reports · ADVISORY_LOCK_REPORT", "flagged": false})
    );
    // A migration tool's well-known key is named for the tool, unflagged.
    let tool = dashboard
        .browser
        .wait_for(
            "Prisma Migrate's key named",
            "(() => { const tr = document.querySelector('#unknown tr[data-key=\"72707369\"]'); \
             const who = tr && tr.querySelector('.well-known'); \
             return who ? {text: who.textContent, flagged: tr.classList.contains('flagged')} : false; })()",
        )
        .await;
    assert_eq!(tool, json!({"text": "Prisma Migrate", "flagged": false}));
    dashboard.close().await;
}

/// The CIE76 colour difference of two `#rrggbb` colours (sRGB, D65), in Lab units: about 2 is
/// the least an eye tells apart side by side, 20 and more reads as another colour at a glance.
// The colour science's own letters (r, g, b, x, y, z, L, a, b).
#[allow(clippy::many_single_char_names)]
fn delta_e(a: &str, b: &str) -> f64 {
    fn lab(hex: &str) -> [f64; 3] {
        let channel = |at: usize| {
            let value = f64::from(u8::from_str_radix(&hex[at..at + 2], 16).expect("hex")) / 255.0;
            if value > 0.040_45 {
                ((value + 0.055) / 1.055).powf(2.4)
            } else {
                value / 12.92
            }
        };
        let (r, g, b) = (channel(1), channel(3), channel(5));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.950_47;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.088_83;
        let f = |t: f64| {
            if t > 0.008_856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        [
            116.0 * f(y) - 16.0,
            500.0 * (f(x) - f(y)),
            200.0 * (f(y) - f(z)),
        ]
    }
    let (a, b) = (lab(a), lab(b));
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// Issue 21, item 4: two host colours were nearly the same blue (#4e79a7, #2f6f9f, ΔE 6), and
/// the palette had near-duplicate greens and yellows. Every pair of the page's twelve host
/// colours, and each of them against the colours that mean a status (failed and unled red, lost
/// black, stopped grey, the legend's neutral, the page), is at least ΔE 20 apart.
#[test]
fn twelve_host_colours_stay_apart_from_each_other_and_from_the_status_colours() {
    let script =
        std::fs::read_to_string(crate::repo_root().join("crates/lockward-cli/assets/serve/app.js"))
            .expect("app.js");
    let start = script.find("const PALETTE = [").expect("the palette");
    let end = start + script[start..].find("];").expect("its end");
    let palette: Vec<&str> = script[start..end]
        .split('\'')
        .filter(|part| part.starts_with('#') && part.len() == 7)
        .collect();
    assert_eq!(palette.len(), 12, "{palette:?}");
    let status = [
        "#d1242f", "#111111", "#e4e8ed", "#9aa4b1", "#8a96a3", "#ffffff",
    ];
    for (i, a) in palette.iter().enumerate() {
        for b in &palette[i + 1..] {
            assert!(
                delta_e(a, b) >= 20.0,
                "{a} and {b}: ΔE {:.1}",
                delta_e(a, b)
            );
        }
        for b in status {
            assert!(
                delta_e(a, b) >= 20.0,
                "{a} and status {b}: ΔE {:.1}",
                delta_e(a, b)
            );
        }
    }
    assert!(
        delta_e("#4e79a7", "#2f6f9f") < 20.0,
        "the reported pair is caught"
    );
}
