//! `lockward serve` as a process, against real PostgreSQL with real workers, read with an HTTP
//! client: what the API and `/metrics` say, and who may ask.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lockward_pg::testing::TestDb;
use lockward_pg::{Cycle, JobError, Worker};
use rustix::process::{Pid, Signal, kill_process};
use serde_json::Value;

use crate::TestProject;

/// A running `lockward serve`, its stderr collected as it comes.
pub(crate) struct Serve {
    child: Child,
    addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

/// One answer.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: ureq::http::HeaderMap,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.body))
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

impl Serve {
    /// `lockward serve --listen 127.0.0.1:0 --database-url URL ARGS...` in `project`, once it
    /// says where it listens.
    pub(crate) fn start(project: &TestProject, url: &str, args: &[&str]) -> Self {
        Self::start_with_env(project, url, args, &[])
    }

    pub(crate) fn start_with_env(
        project: &TestProject,
        url: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let mut command = serve_command(project, url, args);
        command.envs(env.iter().copied());
        Self::start_command(command)
    }

    /// Starts `command` (a `lockward serve`, perhaps under a shell), once it says where it
    /// listens.
    pub(crate) fn start_command(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start lockward serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (found, addr) = std::sync::mpsc::channel();
        let reader = BufReader::new(child.stderr.take().expect("piped stderr"));
        let collected = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("lockward serve: listening on http://") {
                    let _ = found.send(rest.trim_end_matches('/').to_owned());
                }
                let mut text = collected.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        let Ok(addr) = addr.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "lockward serve did not say where it listens; stderr:\n{}",
                stderr.lock().unwrap()
            );
        };
        let mut addr: SocketAddr = addr.parse().expect("an address");
        if addr.ip().is_unspecified() {
            addr.set_ip([127, 0, 0, 1].into());
        }
        Self {
            child,
            addr,
            stderr,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// `GET path`.
    pub(crate) fn get(&self, path: &str) -> Reply {
        self.get_with(path, &[])
    }

    /// `GET path` with extra headers (a `Host` given replaces the one from the address).
    pub(crate) fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        request(&self.url(path), headers)
    }

    /// `GET path`, which must answer 200 with JSON.
    pub(crate) fn json(&self, path: &str) -> Value {
        let reply = self.get(path);
        assert_eq!(reply.status, 200, "GET {path}: {}", reply.body);
        assert_eq!(reply.header("content-type"), Some("application/json"));
        reply.json()
    }

    /// Sends SIGTERM and waits for the exit status.
    pub(crate) fn terminate(&mut self) -> i32 {
        let pid = Pid::from_raw(i32::try_from(self.child.id()).unwrap()).unwrap();
        kill_process(pid, Signal::TERM).expect("signal serve");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn serve_command(project: &TestProject, url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lockward"));
    command
        .args(["serve", "--database-url", url])
        .args(if args.iter().any(|arg| arg.starts_with("--listen")) {
            &[][..]
        } else {
            &["--listen", "127.0.0.1:0"][..]
        })
        .args(args)
        .current_dir(project.path())
        .env_remove("DATABASE_URL")
        .env_remove("LOCKWARD_LOG")
        .env_remove("LOCKWARD_SERVE_TOKEN");
    command
}

/// `lockward serve ARGS` that is expected to exit at once: its status and stderr.
fn serve_refused(project: &TestProject, url: &str, args: &[&str]) -> crate::Run {
    let output = serve_command(project, url, args)
        .stdin(Stdio::null())
        .output()
        .expect("run lockward serve");
    crate::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// One `GET`, following no redirect, any status an answer.
pub(crate) fn request(url: &str, headers: &[(&str, &str)]) -> Reply {
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .build(),
    );
    let mut call = agent.get(url);
    for (name, value) in headers {
        call = call.header(*name, *value);
    }
    let mut response = call
        .call()
        .unwrap_or_else(|error| panic!("GET {url}: {error}"));
    Reply {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: response.body_mut().read_to_string().expect("a UTF-8 body"),
    }
}

/// Polls `condition` every 50 ms for at most `bound` (a bound on waiting, not a timing claim).
pub(crate) async fn eventually<T, F, Fut>(bound: Duration, mut condition: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + bound;
    loop {
        if let Some(value) = condition().await {
            return value;
        }
        assert!(Instant::now() < deadline, "not within {bound:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `lockward run` process, stopped when dropped.
pub(crate) struct Run(Child);

impl Run {
    /// `lockward run --lock LOCK --every EVERY --database-url URL EXTRA... -- COMMAND...`.
    pub(crate) fn start(
        project: &TestProject,
        url: &str,
        lock: &str,
        every: &str,
        extra: &[&str],
        command: &[&str],
    ) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_lockward"))
            .args([
                "run",
                "--lock",
                lock,
                "--every",
                every,
                "--database-url",
                url,
            ])
            .args(extra)
            .arg("--")
            .args(command)
            .current_dir(project.path())
            .env_remove("DATABASE_URL")
            .env_remove("LOCKWARD_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start lockward run");
        Self(child)
    }

    /// SIGTERM, and wait for it to exit.
    pub(crate) fn stop(&mut self) {
        let pid = Pid::from_raw(i32::try_from(self.0.id()).unwrap()).unwrap();
        let _ = kill_process(pid, Signal::TERM);
        let _ = self.0.wait();
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// A session that takes `pg_advisory_lock(key)` (waiting for it when it is taken), named
/// `application_name`; its backend pid.
async fn session_locking(
    db: &TestDb,
    application_name: &str,
    lock: &str,
) -> (i32, tokio::task::JoinHandle<tokio_postgres::Client>) {
    let client = db.connect().await;
    client
        .execute(
            "SELECT set_config('application_name', $1, false)",
            &[&application_name],
        )
        .await
        .unwrap();
    let pid = crate::live::pid(&client).await;
    let statement = format!("SELECT {lock}");
    let handle = tokio::spawn(async move {
        client.batch_execute(&statement).await.unwrap();
        client
    });
    (pid, handle)
}

/// The pids of the sessions of this test's database that hold or wait for advisory key 1001001
/// (bigint form). The tests share one cluster: another test's harbor worker holds the same key
/// in its own database (unscoped, that holder's pid was `held[0]` once, and the test failed).
async fn rollup_sessions(db: &TestDb) -> (Vec<i32>, Vec<i32>) {
    let client = db.connect().await;
    let rows = client
        .query(
            "SELECT pid, granted FROM pg_locks WHERE locktype = 'advisory' AND objid = 1001001 \
             AND objsubid = 1 \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[],
        )
        .await
        .unwrap();
    let mut held = Vec::new();
    let mut waiting = Vec::new();
    for row in rows {
        if row.get(1) {
            held.push(row.get(0));
        } else {
            waiting.push(row.get(0));
        }
    }
    (held, waiting)
}

const ROLLUP: &str = "ADVISORY_LOCK_INVOICE_ROLLUP";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_live_shows_the_leading_run_as_holder_and_a_waiter_as_live_prints_them() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let _leader = Run::start(&project, &db.url(), ROLLUP, "1s", &[], &["sleep", "120"]);
    let (held, _) = eventually(Duration::from_secs(30), || async {
        let sessions = rollup_sessions(&db).await;
        (!sessions.0.is_empty()).then_some(sessions)
    })
    .await;
    let (waiter, _waiting) =
        session_locking(&db, "waiting-session", "pg_advisory_lock(1001001)").await;
    eventually(Duration::from_secs(30), || async {
        rollup_sessions(&db).await.1.contains(&waiter).then_some(())
    })
    .await;

    let api = serve.json("/api/live");
    let live = crate::live::live(&project, Some(&db.url()), &["--format", "json"]).json();

    assert_eq!(api, live);
    let lock = api["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|lock| lock["id"] == 1_001_001)
        .expect("the rollup lock in /api/live");
    assert_eq!(lock["holder"]["pid"], held[0]);
    let application_name = lock["holder"]["application_name"].as_str().unwrap();
    assert!(
        application_name.starts_with("lockward:harbor:ADVISORY_LOCK_INVOICE_ROLLUP "),
        "{application_name}"
    );
    assert_eq!(lock["waiters"], serde_json::json!([waiter]));
    assert_eq!(lock["constant"], ROLLUP);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_registry_is_what_list_prints_as_json() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);

    let api = serve.json("/api/registry");
    let list = project.run(&["list", "--format", "json"]);

    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(api, list.json());
    assert_eq!(api["project"], "harbor");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_registry_shows_an_id_taken_while_serve_runs() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let before = serve.json("/api/registry")["locks"]
        .as_array()
        .unwrap()
        .len();

    let take = project.run(&["take", "ADVISORY_LOCK_DUNNING", "--worker", "dunning"]);

    assert_eq!(take.code, 0, "{}", take.stderr);
    let after = serve.json("/api/registry");
    assert_eq!(after["locks"].as_array().unwrap().len(), before + 1);
    assert_eq!(after, project.run(&["list", "--format", "json"]).json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_status_names_the_project_the_database_without_its_password_and_the_interval() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let url = with_password(&db.url(), "s3cret-pw");
    let serve = Serve::start(&project, &url, &["--interval", "0.5"]);

    let status = serve.json("/api/status");

    assert_eq!(status["project"], "harbor");
    assert_eq!(status["interval_seconds"], 0.5);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    let database = status["database"].as_str().unwrap();
    assert!(database.ends_with(&format!("/{}", db.name())), "{database}");
    assert!(!serve.get("/api/status").body.contains("s3cret-pw"));
    assert!(!serve.stderr().contains("s3cret-pw"), "{}", serve.stderr());
}

/// `url` with `password` in it when it has none (the test server's trust login ignores it).
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (userinfo, host) = rest.split_once('@').unwrap();
    if userinfo.contains(':') {
        return url.to_owned();
    }
    format!("{scheme}://{userinfo}:{password}@{host}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_is_503_with_its_name_and_never_its_password_and_metrics_say_down()
{
    let project = TestProject::harbor();
    let serve = Serve::start(
        &project,
        "postgres://alice:s3cret-pw@127.0.0.1:1/harbor?connect_timeout=2",
        &[],
    );

    for path in ["/api/live", "/api/status"] {
        let reply = serve.get(path);
        assert_eq!(reply.status, 503, "{path}: {}", reply.body);
        let error = reply.json()["error"].as_str().unwrap().to_owned();
        assert!(
            error.starts_with("cannot reach the database alice@127.0.0.1:1/harbor: "),
            "{error}"
        );
        assert!(!reply.body.contains("s3cret-pw"));
    }
    let metrics = serve.get("/metrics");
    assert_eq!(metrics.status, 200);
    let scrape = parse_metrics(&metrics.body);
    assert_eq!(sample(&scrape, "lockward_database_up", &[]), Some(0.0));
    let version = [("version", env!("CARGO_PKG_VERSION"))];
    assert_eq!(sample(&scrape, "lockward_build_info", &version), Some(1.0));
    assert_eq!(scrape.samples.len(), 2, "{}", metrics.body);
    assert!(!metrics.body.contains("s3cret-pw"));
    // The registry does not need the database.
    assert_eq!(serve.get("/api/registry").status, 200);
    assert!(!serve.stderr().contains("s3cret-pw"), "{}", serve.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_session_is_reopened_by_the_next_request() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    assert_eq!(serve.get("/api/live").status, 200);
    let admin = db.connect().await;
    let terminated: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = 'lockward serve' AND datname = current_database()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(terminated, 1);

    let reply = serve.get("/api/live");

    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json(), serde_json::json!({"locks": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboards_session_makes_itself_read_only_when_it_opens() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let _serve = Serve::start(&project, &db.url(), &[]);
    let admin = db.connect().await;

    // Before any request the session has run only what it ran on opening (pg_stat_activity
    // shows a backend's latest statement; another session cannot read its settings).
    let rows = admin
        .query(
            "SELECT query FROM pg_stat_activity WHERE application_name = 'lockward serve' \
             AND datname = current_database()",
            &[],
        )
        .await
        .unwrap();

    assert_eq!(rows.len(), 1, "one session, named lockward serve");
    let query: String = rows[0].get(0);
    assert!(
        query.starts_with("SET default_transaction_read_only = on;"),
        "{query}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_application_name_with_a_script_tag_comes_back_escaped_in_the_json() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let name = "<script>alert(1)</script>";
    let (pid, _holder) = session_locking(&db, name, "pg_advisory_lock(4242)").await;

    let reply = eventually(Duration::from_secs(30), || async {
        let reply = serve.get("/api/live");
        (reply.json()["locks"].as_array().unwrap().len() == 1).then_some(reply)
    })
    .await;

    assert!(!reply.body.contains('<'), "{}", reply.body);
    assert!(reply.body.contains(r"\u003cscript\u003e"), "{}", reply.body);
    assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
    let lock = &reply.json()["locks"][0];
    assert_eq!(lock["holder"]["application_name"], name);
    assert_eq!(lock["holder"]["pid"], pid);
    assert_eq!(lock["flags"], serde_json::json!(["unregistered"]));
}

#[test]
fn a_listen_address_other_than_loopback_is_refused_without_public() {
    let project = TestProject::harbor();

    let run = serve_refused(
        &project,
        "postgres://nobody@127.0.0.1:1/x",
        &["--listen", "0.0.0.0:0"],
    );

    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: --listen 0.0.0.0:0: not a loopback address"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--public"), "{}", run.stderr);
}

#[test]
fn a_malformed_url_and_an_address_in_use_exit_2_before_serving() {
    let project = TestProject::harbor();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();

    let bad_url = serve_refused(
        &project,
        "postgres://nobody@127.0.0.1:1/x?sslmode=bogus",
        &[],
    );
    let in_use = serve_refused(
        &project,
        "postgres://nobody@127.0.0.1:1/x?connect_timeout=1",
        &["--listen", &addr],
    );

    assert_eq!(bad_url.code, 2, "{}", bad_url.stderr);
    assert!(
        bad_url
            .stderr
            .contains("invalid value `bogus` for `sslmode`"),
        "{}",
        bad_url.stderr
    );
    assert_eq!(in_use.code, 2, "{}", in_use.stderr);
    assert!(
        in_use
            .stderr
            .contains(&format!("error: --listen {addr}: cannot listen there")),
        "{}",
        in_use.stderr
    );
}

#[test]
fn a_token_file_with_a_short_token_is_refused() {
    let project = TestProject::harbor();
    project.write("token", "short\n");

    let run = serve_refused(
        &project,
        "postgres://nobody@127.0.0.1:1/x",
        &["--token-file", "token"],
    );

    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--token-file token: the token is 5 characters long"),
        "{}",
        run.stderr
    );
}

const ROUTES: [&str; 8] = [
    "/",
    "/assets/app.js",
    "/assets/app.css",
    "/api/status",
    "/api/registry",
    "/api/live",
    "/api/ledger",
    "/metrics",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_without_a_token_makes_one_and_every_route_needs_it() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &["--listen", "0.0.0.0:0", "--public"]);
    let stderr = serve.stderr();
    let token = stderr
        .split("?token=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no token in stderr:\n{stderr}"))
        .to_owned();
    assert_eq!(token.len(), 64, "{stderr}");
    let bearer = format!("Bearer {token}");

    for path in ROUTES {
        let reply = serve.get(path);
        assert_eq!(reply.status, 401, "{path} without a token: {}", reply.body);
        assert!(reply.json()["error"].as_str().unwrap().contains("token"));
        assert_eq!(
            reply.header("www-authenticate"),
            Some("Bearer realm=\"lockward\"")
        );
        let wrong = serve.get_with(path, &[("Authorization", "Bearer 0123456789abcdef0123")]);
        assert_eq!(wrong.status, 401, "{path} with a wrong token");
        let right = serve.get_with(path, &[("Authorization", &bearer)]);
        assert_ne!(right.status, 401, "{path} with the token: {}", right.body);
        assert_ne!(right.status, 403, "{path} with the token: {}", right.body);
    }
    // With a token, the Host header may name the machine as the network knows it.
    let reply = serve.get_with(
        "/api/live",
        &[("Authorization", &bearer), ("Host", "dashboard.example:80")],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_in_the_address_sets_an_http_only_strict_cookie_and_redirects_to_the_page() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let token = "a-token-from-the-environment-0123";
    let serve = Serve::start_with_env(
        &project,
        &db.url(),
        &["--listen", "0.0.0.0:0", "--public"],
        &[("LOCKWARD_SERVE_TOKEN", token)],
    );
    assert!(!serve.stderr().contains(token), "{}", serve.stderr());

    let wrong = serve.get("/?token=not-the-token-0123456789");
    assert_eq!(wrong.status, 401);
    assert_eq!(wrong.header("set-cookie"), None);

    let reply = serve.get(&format!("/?token={token}"));

    assert_eq!(reply.status, 303, "{}", reply.body);
    assert_eq!(reply.header("location"), Some("/"));
    assert_eq!(
        reply.header("set-cookie"),
        Some(format!("lockward_token={token}; HttpOnly; SameSite=Strict; Path=/").as_str())
    );
    let cookie = format!("lockward_token={token}");
    let page = serve.get_with("/", &[("Cookie", &cookie)]);
    assert_eq!(page.status, 200);
    assert!(
        page.header("content-type")
            .unwrap()
            .starts_with("text/html")
    );
    let live = serve.get_with("/api/live", &[("Cookie", &format!("other=1; {cookie}"))]);
    assert_eq!(live.status, 200, "{}", live.body);
    let stale = serve.get_with(
        "/api/live",
        &[("Cookie", "lockward_token=an-old-token-0123456789")],
    );
    assert_eq!(stale.status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_file_makes_loopback_need_the_token_too_and_is_never_printed() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let token = "file-token-0123456789abcdef";
    project.write("serve.token", &format!("{token}\n"));
    let serve = Serve::start(&project, &db.url(), &["--token-file", "serve.token"]);

    assert_eq!(serve.get("/api/live").status, 401);
    let reply = serve.get_with(
        "/api/live",
        &[("Authorization", &format!("Bearer {token}"))],
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        serve.stderr().contains("--token-file"),
        "{}",
        serve.stderr()
    );
    assert!(!serve.stderr().contains(token), "{}", serve.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_loopback_a_host_header_naming_another_site_is_refused_against_dns_rebinding() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let port = serve.port();

    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("127.0.0.1.evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
    ] {
        let reply = serve.get_with("/api/live", &[("Host", &host)]);
        assert_eq!(reply.status, 403, "Host {host}: {}", reply.body);
        assert!(
            reply.json()["error"]
                .as_str()
                .unwrap()
                .contains("DNS rebinding")
        );
    }
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ] {
        let reply = serve.get_with("/api/live", &[("Host", &host)]);
        assert_eq!(reply.status, 200, "Host {host}: {}", reply.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_the_security_headers() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let rebinding = format!("evil.example:{}", serve.port());

    let replies = [
        serve.get("/"),
        serve.get("/assets/app.js"),
        serve.get("/api/live"),
        serve.get("/metrics"),
        serve.get("/no/such/route"),
        serve.get("/api/ledger?range=week"),
        serve.get_with("/", &[("Host", &rebinding)]),
    ];

    let statuses: Vec<u16> = replies.iter().map(|reply| reply.status).collect();
    assert_eq!(statuses, [200, 200, 200, 200, 404, 400, 403]);
    for reply in &replies {
        assert_eq!(
            reply.header("content-security-policy"),
            Some(
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                 connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
            )
        );
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(reply.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(reply.header("cache-control"), Some("no-store"));
    }
    assert_eq!(
        replies[1].header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert!(
        replies[4].json()["error"]
            .as_str()
            .unwrap()
            .contains("/no/such/route")
    );
    assert!(
        replies[5].json()["error"]
            .as_str()
            .unwrap()
            .contains("week")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_serve_with_exit_0() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let mut serve = Serve::start(&project, &db.url(), &[]);
    assert_eq!(serve.get("/api/live").status, 200);

    assert_eq!(serve.terminate(), 0, "{}", serve.stderr());
    assert!(
        serve.stderr().contains("lockward serve: stopped"),
        "{}",
        serve.stderr()
    );
}

pub(crate) fn parse_metrics(text: &str) -> prometheus_parse::Scrape {
    prometheus_parse::Scrape::parse(text.lines().map(|line| Ok(line.to_owned())))
        .unwrap_or_else(|error| panic!("not the Prometheus text format ({error}):\n{text}"))
}

/// The value of the sample `metric` whose labels include `labels`, when there is exactly one.
pub(crate) fn sample(
    scrape: &prometheus_parse::Scrape,
    metric: &str,
    labels: &[(&str, &str)],
) -> Option<f64> {
    let matching: Vec<f64> = scrape
        .samples
        .iter()
        .filter(|sample| sample.metric == metric)
        .filter(|sample| {
            labels
                .iter()
                .all(|(name, value)| sample.labels.get(name) == Some(*value))
        })
        .map(|sample| match sample.value {
            prometheus_parse::Value::Gauge(value)
            | prometheus_parse::Value::Counter(value)
            | prometheus_parse::Value::Untyped(value) => value,
            _ => f64::NAN,
        })
        .collect();
    assert!(matching.len() <= 1, "{metric} {labels:?}: {matching:?}");
    matching.first().copied()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_say_which_registered_locks_are_held_waited_for_and_flagged() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let _leader = Run::start(&project, &db.url(), ROLLUP, "1s", &[], &["sleep", "120"]);
    eventually(Duration::from_secs(30), || async {
        (!rollup_sessions(&db).await.0.is_empty()).then_some(())
    })
    .await;
    let (waiter, _waiting) = session_locking(&db, "waiter", "pg_advisory_lock(1001001)").await;
    let (_, _retired) = session_locking(&db, "old job", "pg_advisory_lock(1001003)").await;
    let (_, _stray) = session_locking(
        &db,
        "stray",
        "pg_advisory_lock(4242), pg_advisory_lock(7, 8), pg_advisory_lock(72707369)",
    )
    .await;
    // An application that locks per row: twelve more keys nobody registered.
    let (_, _rows) = session_locking(
        &db,
        "per row",
        "pg_advisory_lock(k) FROM generate_series(5001, 5012) AS k",
    )
    .await;
    eventually(Duration::from_secs(30), || async {
        rollup_sessions(&db).await.1.contains(&waiter).then_some(())
    })
    .await;

    let reply = eventually(Duration::from_secs(30), || async {
        let reply = serve.get("/metrics");
        reply
            .body
            .lines()
            .any(|line| {
                line.starts_with("lockward_unregistered_keys_held{") && line.ends_with(" 14")
            })
            .then_some(reply)
    })
    .await;

    assert_eq!(
        reply.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let scrape = parse_metrics(&reply.body);
    let rollup = [
        ("project", "harbor"),
        ("lock", ROLLUP),
        ("id", "1001001"),
        ("owner", "core"),
    ];
    assert_eq!(
        sample(&scrape, "lockward_database_up", &[("project", "harbor")]),
        Some(1.0)
    );
    assert_eq!(sample(&scrape, "lockward_lock_held", &rollup), Some(1.0));
    assert_eq!(sample(&scrape, "lockward_lock_waiters", &rollup), Some(1.0));
    let search = [
        ("project", "harbor"),
        ("lock", "ADVISORY_LOCK_SEARCH_REINDEX"),
        ("id", "1001006"),
    ];
    assert_eq!(sample(&scrape, "lockward_lock_held", &search), Some(0.0));
    assert_eq!(sample(&scrape, "lockward_lock_waiters", &search), Some(0.0));
    // A retired id, which no worker holds, is named by its literal.
    let retired = [("lock", "1_001_003"), ("id", "1001003"), ("owner", "")];
    assert_eq!(sample(&scrape, "lockward_lock_held", &retired), Some(1.0));
    assert_eq!(
        sample(
            &scrape,
            "lockward_lock_flagged",
            &[("id", "1001003"), ("flag", "retired")]
        ),
        Some(1.0)
    );
    // The waiter is another "worker" by application name than the leading run.
    assert_eq!(
        sample(
            &scrape,
            "lockward_lock_flagged",
            &[("id", "1001001"), ("flag", "foreign-holder")]
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(&scrape, "lockward_lock_flagged", &[("id", "1001006")]),
        None
    );
    // A handover without a constant: the name its plugin's worker carries.
    let handover = [
        ("lock", "billing.1001002"),
        ("id", "1001002"),
        ("owner", "plugin:billing"),
    ];
    assert_eq!(sample(&scrape, "lockward_lock_held", &handover), Some(0.0));
    // Prisma Migrate's key (the catalogue of well-known keys) is the tool's, not unregistered.
    assert_eq!(
        sample(
            &scrape,
            "lockward_well_known_key_held",
            &[("tool", "prisma-migrate")]
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &scrape,
            "lockward_unregistered_key_held",
            &[("key", "72707369")]
        ),
        None
    );
    assert_eq!(
        sample(
            &scrape,
            "lockward_unregistered_key_held",
            &[("key", "4242")]
        ),
        Some(1.0)
    );
    // Issue 21, item 7: a series per unregistered key was a series per locked row. Ten keys
    // are listed, most sessions first, then by key (bigints before pairs); the rest counted.
    let mut listed: Vec<i64> = scrape
        .samples
        .iter()
        .filter(|sample| sample.metric == "lockward_unregistered_key_held")
        .filter_map(|sample| sample.labels.get("key")?.parse().ok())
        .collect();
    listed.sort_unstable();
    let expected: Vec<i64> = std::iter::once(4242).chain(5001..=5009).collect();
    assert_eq!(listed, expected, "{}", reply.body);
    assert_eq!(
        sample(
            &scrape,
            "lockward_unregistered_keys_unlisted",
            &[("project", "harbor")]
        ),
        Some(4.0)
    );
    let registered = scrape
        .samples
        .iter()
        .filter(|sample| sample.metric == "lockward_lock_held")
        .count();
    assert_eq!(registered, 9, "one series per registry entry");
}

/// What the workers of a test led: each job's cycle start and host.
type Led = Arc<Mutex<Vec<(SystemTime, String)>>>;

/// A library worker on the rollup lock as `host`, every second, with the ledger, on this
/// runtime; each job records its cycle in `led`. Send on the sender to shut it down.
fn library_worker(
    project: &TestProject,
    url: &str,
    host: &str,
    led: &Led,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let registry =
        lockward_registry::Registry::load(&project.path().join("lockward.toml"), "lockward.toml")
            .expect("the registry loads")
            .registry;
    let worker = Worker::builder(&registry, ROLLUP)
        .expect("a registered constant")
        .database_url(url)
        .every(Duration::from_secs(1))
        .ledger(true)
        .host(host)
        .build()
        .expect("a worker");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let led = Arc::clone(led);
    let host = host.to_owned();
    let run = worker.run(
        move |cycle: Cycle| {
            let led = Arc::clone(&led);
            let host = host.clone();
            async move {
                led.lock().unwrap().push((cycle.start(), host));
                Ok::<(), JobError>(())
            }
        },
        async move {
            let _ = stopped.await;
        },
    );
    let handle = tokio::spawn(async move { run.await.expect("the worker runs") });
    (stop, handle)
}

/// The ledger's finished cycles of `host` (0 before the ledger exists). A worker is stopped
/// once its cycles have finished, so that none is cut short by the stop (`cancelled`).
async fn done_rows(db: &TestDb, host: &str) -> i64 {
    let client = db.connect().await;
    client
        .query_one(
            "SELECT count(*) FROM lockward_ledger WHERE host = $1 AND outcome = 'done'",
            &[&host],
        )
        .await
        .map_or(0, |row| row.get(0))
}

/// The cycles `lockward run`'s command logged (one `LOCKWARD_CYCLE_START_MS` a line).
fn run_cycles(project: &TestProject) -> Vec<SystemTime> {
    std::fs::read_to_string(project.path().join("cycles.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse::<u64>().ok())
        .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
        .collect()
}

fn time(value: &Value) -> SystemTime {
    humantime::parse_rfc3339(value.as_str().expect("a time")).expect("RFC 3339")
}

/// The rollup lock's entry of a `/api/ledger` answer.
fn rollup_history(history: &Value) -> Value {
    history["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|lock| lock["lock_key"] == "1001001")
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_ledger_shows_which_host_led_each_cycle_and_the_cycles_after_the_leaders_clean_stop() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let no_ledger = serve.json("/api/ledger");
    assert_eq!(no_ledger["locks"], serde_json::json!([]));
    assert_eq!(serve.json("/api/status")["ledger"], false);
    let led = Led::default();

    // alpha, then beta (library workers), then gamma (`lockward run --ledger --host gamma`),
    // each for two cycles, each stopping cleanly; then nobody.
    for host in ["alpha", "beta"] {
        let (stop, worker) = library_worker(&project, &db.url(), host, &led);
        eventually(Duration::from_secs(30), || async {
            (done_rows(&db, host).await >= 2).then_some(())
        })
        .await;
        stop.send(()).unwrap();
        worker.await.unwrap();
    }
    let log = project.path().join("cycles.log");
    let mut run = Run::start(
        &project,
        &db.url(),
        ROLLUP,
        "1s",
        &["--ledger", "--host", "gamma"],
        &[
            "sh",
            "-c",
            &format!("echo $LOCKWARD_CYCLE_START_MS >> '{}'", log.display()),
        ],
    );
    let host = "gamma".to_owned();
    eventually(Duration::from_secs(30), || async {
        (done_rows(&db, &host).await >= 2).then_some(())
    })
    .await;
    run.stop();
    let mut expected: Vec<(SystemTime, String)> = led.lock().unwrap().clone();
    expected.extend(
        run_cycles(&project)
            .into_iter()
            .map(|start| (start, host.clone())),
    );
    expected.sort();
    let last_led = expected.last().unwrap().0;

    let history = eventually(Duration::from_secs(30), || async {
        let history = serve.json("/api/ledger?range=hour");
        let unled_after = rollup_history(&history)["cycles"]
            .as_array()
            .is_some_and(|cycles| {
                cycles.iter().any(|cycle| {
                    cycle["status"] == "stopped" && time(&cycle["cycle_start"]) > last_led
                })
            });
        unled_after.then_some(history)
    })
    .await;

    assert_eq!(serve.json("/api/status")["ledger"], true);
    let rollup = rollup_history(&history);
    assert_eq!(rollup["id"], 1_001_001);
    assert_eq!(rollup["constant"], ROLLUP);
    assert_eq!(rollup["kind"], "constant");
    assert_eq!(rollup["member"], Value::Null);
    assert_eq!(rollup["period_seconds"], 1.0);
    let cycles = rollup["cycles"].as_array().unwrap();
    let led_cycles: Vec<(SystemTime, String)> = cycles
        .iter()
        .filter(|cycle| cycle["status"] != "unled" && cycle["status"] != "stopped")
        .map(|cycle| {
            assert_eq!(cycle["status"], "done", "{cycle}");
            assert!(cycle["fencing_token"].is_i64(), "{cycle}");
            assert_eq!(cycle["overlaps_previous"], false, "{cycle}");
            (
                time(&cycle["cycle_start"]),
                cycle["host"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        led_cycles, expected,
        "the ledger's leaders are the ones whose job ran"
    );
    let starts: Vec<SystemTime> = cycles
        .iter()
        .map(|cycle| time(&cycle["cycle_start"]))
        .collect();
    assert!(starts.windows(2).all(|pair| pair[0] < pair[1]), "ascending");
    // Issue 21, item 4: the last leader stopped on purpose, and the ledger says so: the
    // boundaries after it are `stopped`, and its row has the time of the stop.
    let last_row = cycles
        .iter()
        .rfind(|cycle| cycle["status"] == "done")
        .unwrap();
    assert!(last_row["stopped_at"].is_string(), "{last_row}");
    let unled = cycles
        .iter()
        .find(|cycle| cycle["status"] == "stopped" && time(&cycle["cycle_start"]) > last_led)
        .unwrap();
    for field in [
        "fencing_token",
        "host",
        "pid",
        "application_name",
        "started_at",
        "finished_at",
    ] {
        assert_eq!(unled[field], Value::Null, "{field} of {unled}");
    }
    assert_eq!(unled["overlaps_previous"], false);

    // The window's gauges say the same, per host.
    let scrape = parse_metrics(&serve.get("/metrics").body);
    for host in ["alpha", "beta", host.as_str()] {
        let done = expected.iter().filter(|(_, h)| h == host).count();
        let labels = [
            ("project", "harbor"),
            ("lock", ROLLUP),
            ("id", "1001001"),
            ("host", host),
        ];
        let outcome = |outcome: &'static str| {
            let mut labels = labels.to_vec();
            labels.push(("outcome", outcome));
            sample(&scrape, "lockward_ledger_window_cycles", &labels)
        };
        #[allow(clippy::cast_precision_loss)]
        let done = done as f64;
        assert_eq!(outcome("done"), Some(done), "{host}");
        assert_eq!(outcome("failed"), Some(0.0), "{host}");
        assert_eq!(outcome("lost"), Some(0.0), "{host}");
        assert_eq!(outcome("cancelled"), Some(0.0), "{host}");
    }
    let unled_total = sample(
        &scrape,
        "lockward_ledger_window_unled_cycles",
        &[("project", "harbor"), ("lock", ROLLUP), ("id", "1001001")],
    )
    .expect("the unled gauge");
    assert_eq!(
        sample(
            &scrape,
            "lockward_ledger_window_seconds",
            &[("project", "harbor")]
        ),
        Some(3600.0)
    );
    let later = serve.json("/api/ledger?range=hour");
    #[allow(clippy::cast_precision_loss)]
    let unled_later = rollup_history(&later)["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|cycle| cycle["status"] == "unled")
        .count() as f64;
    // Every gap follows a clean stop: no boundary is unled, in the gauge as in the history, and
    // none becomes unled while the test reads.
    #[allow(clippy::float_cmp)] // whole numbers, exact in an f64
    let same = unled_total == unled_later;
    assert!(same && unled_later == 0.0, "{unled_total} vs {unled_later}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ledger_metrics_sum_a_familys_members_and_name_an_unknown_key_by_itself() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let client = db.connect().await;
    let hosts = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect();
    lockward_pg::testing::seed_ledger(
        &client,
        "harbor",
        &[
            ("4242".to_owned(), hosts(&["h1"])),
            ("1001004/1".to_owned(), hosts(&["h1"])),
            ("1001004/2".to_owned(), hosts(&["h1", "h2"])),
        ],
        Duration::from_secs(60),
        10,
        SystemTime::now(),
    )
    .await;
    let serve = Serve::start(&project, &db.url(), &[]);

    let scrape = parse_metrics(&serve.get("/metrics").body);

    let done = |id: &str, lock: &str, host: &str| {
        sample(
            &scrape,
            "lockward_ledger_window_cycles",
            &[
                ("lock", lock),
                ("id", id),
                ("host", host),
                ("outcome", "done"),
            ],
        )
    };
    let family = "ADVISORY_LOCK_RELOAD_BASE";
    assert_eq!(done("", "4242", "h1"), Some(10.0));
    assert_eq!(done("1001004", family, "h1"), Some(15.0));
    assert_eq!(done("1001004", family, "h2"), Some(5.0));
    let history = serve.json("/api/ledger");
    let keys: Vec<&str> = history["locks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|lock| lock["lock_key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["1001004/1", "1001004/2", "4242"]);
    assert_eq!(history["locks"][1]["member"], 2);
    assert_eq!(history["locks"][2]["id"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_ledger_since_answers_only_the_cycles_from_that_time_on_within_the_range() {
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let client = db.connect().await;
    lockward_pg::testing::seed_ledger(
        &client,
        "harbor",
        &[("1001001".to_owned(), vec!["h1".to_owned()])],
        Duration::from_secs(60),
        20,
        SystemTime::now(),
    )
    .await;
    let serve = Serve::start(&project, &db.url(), &[]);
    let starts = |answer: &Value| -> Vec<String> {
        rollup_history(answer)["cycles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cycle| cycle["cycle_start"].as_str().unwrap().to_owned())
            .collect()
    };
    let whole = serve.json("/api/ledger?range=hour");
    let all = starts(&whole);
    assert!(all.len() >= 20, "{all:?}");
    let since = &all[all.len() - 5];

    let recent = serve.json(&format!("/api/ledger?range=hour&since={since}"));

    assert_eq!(recent["from"].as_str(), Some(since.as_str()));
    assert_eq!(starts(&recent), all[all.len() - 5..], "{recent}");
    // Before the range, `since` is the range's start: the whole hour again.
    let early = serve.json("/api/ledger?range=hour&since=2000-01-01T00:00:00.000Z");
    let moved = time(&early["from"])
        .duration_since(time(&whole["from"]))
        .expect("the later range starts later");
    assert!(moved < Duration::from_secs(60), "{moved:?}");
    // The seeded cycles are the last 20 minutes': all still in the hour (an unled boundary
    // may have ended since).
    assert_eq!(starts(&early)[..all.len()], all[..]);
    let bad = serve.get("/api/ledger?since=yesterday");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("since `yesterday`"), "{}", bad.body);
}

/// With `ulimit -n 256`, 300 half-open sockets made normal requests time out, and while one
/// client held half a request `serve` did not exit on SIGTERM (still running 10 s later).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_neither_starve_a_real_one_nor_hold_up_sigterm() {
    use std::io::{Read as _, Write as _};
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let direct = serve_command(&project, &db.url(), &[]);
    let mut limited = Command::new("sh");
    limited
        .arg("-c")
        .arg(r#"ulimit -n 256 && exec "$0" "$@""#)
        .arg(direct.get_program())
        .args(direct.get_args())
        .current_dir(project.path())
        .env_remove("DATABASE_URL")
        .env_remove("LOCKWARD_LOG")
        .env_remove("LOCKWARD_SERVE_TOKEN");
    let mut serve = Serve::start_command(limited);
    let addr: SocketAddr = format!("127.0.0.1:{}", serve.port()).parse().unwrap();
    let mut held = Vec::new();
    for _ in 0..300 {
        let Ok(mut socket) = std::net::TcpStream::connect(addr) else {
            continue;
        };
        let _ = socket.write_all(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        held.push(socket);
    }
    assert!(held.len() >= 250, "{} sockets connected", held.len());
    // A real request is answered at once (generous for a loaded machine; it used to time out).
    // A socket of its own with a read timeout: the request that timed out must fail the test,
    // not hang it.
    let started = Instant::now();
    let mut real = std::net::TcpStream::connect(addr).expect("connect");
    real.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    write!(
        real,
        "GET /api/status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = real.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "no answer within 8 s: {answer:?}"
    );
    let answered = started.elapsed();
    assert!(
        answered < Duration::from_secs(8),
        "answered after {answered:?}"
    );
    // The half-sent ones are closed by the server: one that is still open reads EOF once its
    // header time is up.
    let mut last = held.pop().expect("a held socket");
    last.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut buffer = [0_u8; 512];
    let closed = Instant::now();
    let read = last.read(&mut buffer);
    assert!(
        read.is_ok() && closed.elapsed() < Duration::from_secs(25),
        "a half-sent request was not closed: {read:?} after {:?}",
        closed.elapsed()
    );
    // SIGTERM with half-sent requests open: out within the grace, not held up by them.
    let stopping = Instant::now();
    assert_eq!(serve.terminate(), 0, "{}", serve.stderr());
    assert!(
        stopping.elapsed() < Duration::from_secs(8),
        "stopped {:?} after SIGTERM",
        stopping.elapsed()
    );
    eprintln!(
        "{} half-sent requests open: a real one answered in {answered:?}, serve stopped {:?} \
         after SIGTERM",
        held.len() + 1,
        stopping.elapsed()
    );
}

/// HTTP/2 with prior knowledge always got 403 "no Host header" (its `:authority` ignored), and
/// two `Host` headers were accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_is_served_by_its_authority_and_two_host_headers_are_refused() {
    use std::io::{Read as _, Write as _};
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let serve = Serve::start(&project, &db.url(), &[]);
    // One HTTP/2 connection to the server (prior knowledge), each request naming its host only
    // in `:authority`, as HTTP/2 clients do.
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", serve.port()))
        .await
        .unwrap();
    let (mut sender, connection) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .expect("an HTTP/2 handshake");
    tokio::spawn(connection);
    for (authority, status) in [
        (format!("127.0.0.1:{}", serve.port()), 200),
        (format!("localhost:{}", serve.port()), 200),
        (format!("evil.example:{}", serve.port()), 403),
    ] {
        let request = ureq::http::Request::builder()
            .uri(format!("http://{authority}/api/status"))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap();
        assert!(!request.headers().contains_key("host"));
        let reply = sender
            .send_request(request)
            .await
            .expect("an HTTP/2 answer");
        assert_eq!(reply.version(), ureq::http::Version::HTTP_2);
        assert_eq!(reply.status().as_u16(), status, "{authority}");
    }
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", serve.port())).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        socket,
        "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{0}\r\nHost: evil.example:{0}\r\n\
         Connection: close\r\n\r\n",
        serve.port()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = socket.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("more than one Host header"), "{answer}");
}
