//! What the dashboard's browser tests and its bench (`benches/dashboard.rs`, which includes this
//! file) drive: `lockward serve` as a child process on a loopback port, and Debian's chromium,
//! headless, through chromedriver (WebDriver, with fantoccini).
//!
//! Each process is started on a free loopback port and killed by its pid when its handle drops.
//! Chromium reaches nothing but loopback: its proxy for every other address is a closed port, and
//! its background services (updates, safe browsing, sync, metrics) are off.

use std::io::{BufRead as _, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::{Value, json};

/// Where Debian's packages put the browser and its driver.
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long a test waits for the page to show something before it fails, saying what it saw.
/// Generous: the machine is shared and has two cores; a wait ends as soon as the page shows it.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// The browser and its driver, when this machine has both; else why not.
pub(crate) fn browser_programs() -> Result<(PathBuf, PathBuf), String> {
    let find = |name: &str, default: &str| -> Option<PathBuf> {
        let default = PathBuf::from(default);
        if default.is_file() {
            return Some(default);
        }
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|candidate| candidate.is_file())
        })
    };
    match (
        find("chromium", CHROMIUM),
        find("chromedriver", CHROMEDRIVER),
    ) {
        (Some(chromium), Some(driver)) => Ok((chromium, driver)),
        (None, _) => Err(
            "the browser tests need Debian's chromium (apt-get install chromium chromium-driver; \
             scripts/test installs it as root)"
                .to_owned(),
        ),
        (_, None) => Err(
            "the browser tests need chromedriver (apt-get install chromium-driver; scripts/test \
             installs it as root)"
                .to_owned(),
        ),
    }
}

/// A child process killed and reaped on drop (by its pid; with its process group, when it has
/// one of its own), with what it wrote on stderr kept for failure messages.
pub(crate) struct Process {
    name: &'static str,
    child: Child,
    /// Whether the child leads a process group of its own, which drop kills whole.
    group: bool,
    stderr: Arc<Mutex<String>>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Process {
    /// Starts `command` with its stderr piped to a thread that keeps it, line by line; with
    /// `group`, in a process group of its own.
    fn start(name: &'static str, command: &mut Command, group: bool) -> Self {
        if group {
            std::os::unix::process::CommandExt::process_group(&mut *command, 0);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {name}: {error}"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
        let pipe = child.stderr.take().expect("stderr is piped");
        let buffer = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                {
                    let mut buffer = lock(&buffer);
                    buffer.push_str(&line);
                    buffer.push('\n');
                }
                // Nobody may be listening any more; the thread drains the pipe all the same.
                let _ = lines_tx.send(line);
            }
        });
        Self {
            name,
            child,
            group,
            stderr,
            lines,
        }
    }

    /// Waits for a stderr line that `parse` accepts, and returns what it made of it.
    fn wait_for_line<T>(&self, timeout: Duration, mut parse: impl FnMut(&str) -> Option<T>) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(value) = parse(&line) {
                        return value;
                    }
                }
                Err(error) => panic!(
                    "{} did not say it was ready within {timeout:?} ({error}); its stderr:\n{}",
                    self.name,
                    self.stderr()
                ),
            }
        }
    }

    /// What the process wrote on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        lock(&self.stderr).clone()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{} wrote on stderr:\n{}", self.name, self.stderr());
        }
        // chromedriver's browser is in its group: killing the driver alone would leave it running.
        let pid = rustix::process::Pid::from_child(&self.child);
        let killed = if self.group {
            rustix::process::kill_process_group(pid, rustix::process::Signal::KILL)
                .map_err(std::io::Error::from)
        } else {
            self.child.kill()
        };
        if let Err(error) = killed {
            eprintln!(
                "cannot kill {} (pid {}): {error}",
                self.name,
                self.child.id()
            );
        }
        let _ = self.child.wait();
    }
}

fn lock(buffer: &Mutex<String>) -> std::sync::MutexGuard<'_, String> {
    buffer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `lockward serve` on a free loopback port, in `project_dir`, reading `database_url`.
pub(crate) struct Serve {
    /// Kept for its drop, which stops the server (and shows its stderr when a test failed).
    _process: Process,
    addr: SocketAddr,
}

impl Serve {
    /// Starts the binary at `lockward` and waits until it says where it listens.
    pub(crate) fn start(
        lockward: &Path,
        project_dir: &Path,
        database_url: &str,
        interval: &str,
    ) -> Self {
        Self::start_fleet(lockward, project_dir, &[database_url], interval)
    }

    /// The same over several databases (`--database-url` repeated).
    pub(crate) fn start_fleet(
        lockward: &Path,
        project_dir: &Path,
        database_urls: &[&str],
        interval: &str,
    ) -> Self {
        let mut command = Command::new(lockward);
        command.args(["serve", "--listen", "127.0.0.1:0", "--interval", interval]);
        for url in database_urls {
            command.args(["--database-url", url]);
        }
        command
            .current_dir(project_dir)
            .env_remove("DATABASE_URL")
            .env_remove("LOCKWARD_SERVE_TOKEN")
            .env_remove("LOCKWARD_LOG")
            .stdout(Stdio::null());
        let process = Process::start("lockward serve", &mut command, false);
        let addr = process.wait_for_line(Duration::from_secs(30), |line| {
            let rest = line.split("listening on http://").nth(1)?;
            rest.trim_end_matches('/').parse::<SocketAddr>().ok()
        });
        Self {
            _process: process,
            addr,
        }
    }

    /// The page's URL.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

/// A free port on loopback (bound and released: chromedriver takes a port number, not a socket).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

/// Headless chromium in a WebDriver session, its driver, and its profile directory.
pub(crate) struct Browser {
    /// The WebDriver session.
    pub(crate) client: Client,
    driver: Process,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver and a headless chromium `width` × `height` pixels.
    pub(crate) async fn start(
        chromium: &Path,
        chromedriver: &Path,
        width: u32,
        height: u32,
    ) -> Self {
        let port = free_port();
        let log = tempfile::NamedTempFile::new().expect("a temp file");
        let mut command = Command::new(chromedriver);
        command
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .arg(format!("--log-path={}", log.path().display()))
            .stdout(Stdio::null());
        let driver = Process::start("chromedriver", &mut command, true);
        wait_for_port(port, &driver).await;
        let profile = tempfile::tempdir().expect("a profile directory");
        let mut args = vec![
            "--headless=new".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--hide-scrollbars".to_owned(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
            "--no-first-run".to_owned(),
            "--no-default-browser-check".to_owned(),
            // Nothing but loopback: every other address goes to a proxy that is a closed port.
            "--proxy-server=http://127.0.0.1:9".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-domain-reliability".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-client-side-phishing-detection".to_owned(),
            "--disable-default-apps".to_owned(),
            "--disable-extensions".to_owned(),
            "--metrics-recording-only".to_owned(),
            "--no-pings".to_owned(),
            "--dns-prefetch-disable".to_owned(),
            "--disable-features=Translate,OptimizationHints,MediaRouter,InterestFeedContentSuggestions"
                .to_owned(),
            "--lang=en-US".to_owned(),
        ];
        if lockward_pg::testing::is_root() {
            // Chromium's sandbox refuses to run as root.
            args.push("--no-sandbox".to_owned());
        }
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        });
        let Value::Object(capabilities) = capabilities else {
            unreachable!("a JSON object")
        };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "cannot open a chromium session through chromedriver: {error}; its log:\n{}",
                    std::fs::read_to_string(log.path()).unwrap_or_default()
                )
            });
        Self {
            client,
            driver,
            _profile: profile,
        }
    }

    /// Evaluates `expression` in the page and returns its value (JSON).
    pub(crate) async fn eval(&self, expression: &str) -> Value {
        self.client
            .execute(&format!("return ({expression});"), vec![])
            .await
            .unwrap_or_else(|error| panic!("evaluating `{expression}` in the page: {error}"))
    }

    /// Waits until `expression` is truthy in the page (re-evaluated every 100 ms) and returns
    /// its value; after `PATIENCE`, fails naming `what`, the last value, and what the page's
    /// refresh state and error banner say.
    pub(crate) async fn wait_for(&self, what: &str, expression: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let value = self.eval(expression).await;
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                Value::Array(_) | Value::Object(_) => true,
            };
            if truthy {
                return value;
            }
            if Instant::now() >= deadline {
                let page = self
                    .eval(
                        "{status: document.getElementById('status')?.textContent, \
                          error: document.getElementById('error')?.textContent}",
                    )
                    .await;
                panic!(
                    "the page did not show {what} within {PATIENCE:?}: `{expression}` is {value}; \
                     the page says {page}"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A PNG of the whole page: the window is made as tall as the document first.
    pub(crate) async fn screenshot_full_page(&self, width: u32) -> Vec<u8> {
        let height = self
            .eval("Math.ceil(document.documentElement.scrollHeight)")
            .await
            .as_u64()
            .unwrap_or(1000);
        let height = u32::try_from(height.clamp(600, 8000)).unwrap_or(8000);
        self.client
            .set_window_size(width, height + 120)
            .await
            .expect("resize the window");
        // Let the page redraw its timelines for the new width before the picture.
        tokio::time::sleep(Duration::from_millis(500)).await;
        self.client.screenshot().await.expect("a screenshot")
    }

    /// Makes the page's viewport `width` × `height` CSS pixels (the window is made larger by
    /// whatever the browser keeps around the page), and says what the page then measures.
    pub(crate) async fn set_viewport(&self, width: u32, height: u32) -> (u64, u64) {
        let mut size = (width, height);
        for _ in 0..3 {
            self.client
                .set_window_size(size.0, size.1)
                .await
                .expect("resize the window");
            let inner = self.eval("[window.innerWidth, window.innerHeight]").await;
            let (w, h) = (
                inner[0].as_u64().unwrap_or(0),
                inner[1].as_u64().unwrap_or(0),
            );
            if (w, h) == (u64::from(width), u64::from(height)) {
                break;
            }
            let grow = |want: u32, got: u64, now: u32| {
                let extra = i64::from(want) - i64::try_from(got).unwrap_or(0);
                u32::try_from(i64::from(now) + extra).unwrap_or(now)
            };
            size = (grow(width, w, size.0), grow(height, h, size.1));
        }
        // Let the page redraw its timelines for the new width.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let inner = self.eval("[window.innerWidth, window.innerHeight]").await;
        (
            inner[0].as_u64().unwrap_or(0),
            inner[1].as_u64().unwrap_or(0),
        )
    }

    /// Ends the session and the browser.
    pub(crate) async fn close(self) {
        let Self { client, driver, .. } = self;
        if let Err(error) = client.close().await {
            eprintln!(
                "closing the browser session: {error}; chromedriver said:\n{}",
                driver.stderr()
            );
        }
    }
}

/// Waits until chromedriver accepts connections on `port`.
async fn wait_for_port(port: u16, driver: &Process) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "chromedriver did not listen on port {port} within 30 s; its stderr:\n{}",
            driver.stderr()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
