//! The dashboard in a real browser: Debian's chromium, headless, driven through chromedriver,
//! against the real `lockward serve` on loopback, a real database, and real workers.
//!
//! Skipped, saying why, where chromium or chromedriver is missing (`scripts/test` installs both
//! as root), except under `LOCKWARD_REQUIRE_ALL_TESTS=1`, where that is a failure.

pub(crate) mod harness;

use lockward_pg::testing::{TestDb, require_or_skip};
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
    _project: TestProject,
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
            _project: project,
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
                 return {{state: tr.dataset.state, pid: cell('pid'), app: cell('app'), \
                          client: cell('client'), waiters: cell('waiters'), \
                          flags: cell('flags').trim()}}; }})()"
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
        browser.eval("document.querySelectorAll('#locks tbody tr').length").await,
        json!(9),
        "one row per registry entry of the example project"
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
    assert_eq!(row["pid"], json!(holder_pid.to_string()), "{row}");
    assert_eq!(row["app"], "harbor-rollup", "{row}");
    assert_eq!(row["waiters"], json!(waiter_pid.to_string()), "{row}");
    assert_eq!(row["flags"], "", "{row}");
    let unknown = browser
        .wait_for(
            "the unknown key 4242 in its own table",
            "document.querySelector('#unknown tr[data-key=\"4242\"]')?.textContent",
        )
        .await;
    assert!(
        unknown
            .as_str()
            .is_some_and(|text| text.contains("unregistered") && text.contains(&holder_pid.to_string())),
        "{unknown}"
    );
    assert_eq!(
        browser.eval("window.__sameDocument").await,
        "yes",
        "the page refreshed without reloading"
    );
    assert_eq!(
        browser.eval("document.getElementById('error').hidden").await,
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
    holder
        .execute("SELECT set_config('application_name', $1, false)", &[&MARKUP])
        .await
        .expect("set the application name");
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
    assert_eq!(row["app"], MARKUP, "the application name, as text: {row}");
    let unknown = browser
        .wait_for(
            "the unknown key 77",
            "document.querySelector('#unknown tr[data-key=\"77\"] td.app')?.textContent",
        )
        .await;
    assert_eq!(unknown, MARKUP);
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
    let admin = dashboard.db.connect().await;
    let database = dashboard.db.name().to_owned();
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {database} ALLOW_CONNECTIONS false; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name = 'lockward serve'"
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
