//! The README's tour (issue 24): every `$` line of its `console` blocks runs, in order, in a copy
//! of the example project with the built `lockward` first on PATH and `DATABASE_URL` naming a
//! test database, and what it prints (stdout and stderr, as a terminal interleaves them) is what
//! the README shows under it.
//!
//! A shown line `...` stands for any run of lines. Before comparing, both sides have their times,
//! durations, process ids, host names, port numbers and database names replaced by placeholders,
//! and runs of spaces made one (a table's columns widen with a longer host name). A line ending in
//! ` &` runs in the background, as in a shell: what it shows must appear, in order, while it runs,
//! and it is stopped with SIGINT at the end. `lockward serve` listens on a free port
//! (`--listen 127.0.0.1:0`) rather than 7420, which another test or program may hold.

use std::io::Read as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockward_pg::testing::TestDb;
use regex::Regex;

use crate::TestProject;

/// One `$` line and what the README shows under it.
#[derive(Debug)]
struct Step {
    command: String,
    background: bool,
    shown: Vec<String>,
}

/// The steps of the README's `## A ten-minute tour`, in order.
fn steps(readme: &str) -> Vec<Step> {
    let section = readme
        .split("\n## A ten-minute tour\n")
        .nth(1)
        .expect("the README has a tour")
        .split("\n## ")
        .next()
        .unwrap_or_default();
    let mut steps: Vec<Step> = Vec::new();
    let mut in_console = false;
    for line in section.lines() {
        if line == "```console" {
            in_console = true;
        } else if in_console && line == "```" {
            in_console = false;
        } else if in_console {
            if let Some(command) = line.strip_prefix("$ ") {
                let (command, background) = match command.strip_suffix(" &") {
                    Some(command) => (command, true),
                    None => (command, false),
                };
                steps.push(Step {
                    command: command.to_owned(),
                    background,
                    shown: Vec::new(),
                });
            } else {
                steps
                    .last_mut()
                    .expect("a console block starts with a `$` line")
                    .shown
                    .push(line.to_owned());
            }
        }
    }
    steps
}

/// `line` with what differs from run to run replaced by placeholders.
fn normalize(line: &str) -> String {
    static RULES: std::sync::OnceLock<Vec<(Regex, &'static str)>> = std::sync::OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            // A database as lockward names it: `postgres@127.0.0.1:5432/postgres`.
            (r"[\w-]+@[\w.-]+:\d+/[\w-]+", "DATABASE"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "TIME"),
            (r"\b\d\d:\d\d:\d\dZ", "TIME"),
            // A worker's identity: `21337+mxc3eofd@web-1`, `21302@web-1`.
            (r"\b\d+(\+[a-z0-9]+)?@[\w.-]+", "PID@HOST"),
            (r"\b\d+(ms|s|m|h)( \d+(ms|s))*\b", "DURATION"),
            // Process ids, ports, an IP address's parts; `1_001_001` is not one number here.
            (r"\b\d{3,}\b", "N"),
            (r"\s+", " "),
        ]
        .into_iter()
        .map(|(pattern, placeholder)| (Regex::new(pattern).expect("a pattern"), placeholder))
        .collect()
    });
    let mut line = line.trim_end().to_owned();
    for (pattern, placeholder) in rules {
        line = pattern.replace_all(&line, *placeholder).into_owned();
    }
    line
}

/// Whether `actual` is what `shown` shows, `...` standing for any run of lines.
fn matches(shown: &[String], actual: &[String]) -> bool {
    match shown.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual.split_first().is_some_and(|(line, after)| {
            normalize(first) == normalize(line) && matches(rest, after)
        }),
    }
}

/// The lines of `text`, without a trailing empty one.
fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

/// A `sh -c` running `command` in `dir`, with both streams on one pipe.
fn shell(dir: &Path, command: &str, database_url: &str) -> Command {
    let binary = Path::new(env!("CARGO_BIN_EXE_lockward"));
    let path = format!(
        "{}:{}",
        binary.parent().expect("the binary's directory").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let command = match command.strip_prefix("lockward serve") {
        Some(rest) => format!("lockward serve --listen 127.0.0.1:0{rest}"),
        None => command.to_owned(),
    };
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(format!("exec 2>&1; exec {command}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("DATABASE_URL", database_url)
        .env_remove("LOCKWARD_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    shell
}

/// A command running in the background, and what it has printed so far.
struct Background {
    child: Child,
    output: Arc<Mutex<Vec<u8>>>,
    command: String,
}

impl Background {
    fn start(dir: &Path, command: &str, database_url: &str) -> Self {
        let mut child = shell(dir, command, database_url)
            .spawn()
            .expect("start the command");
        let mut stdout = child.stdout.take().expect("its output");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                sink.lock()
                    .expect("the output")
                    .extend_from_slice(&buffer[..read]);
            }
        });
        Self {
            child,
            output,
            command: command.to_owned(),
        }
    }

    fn printed(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().expect("the output")).into_owned()
    }

    /// SIGINT, as Ctrl-C (or `kill -INT`) would, then SIGKILL if it does not stop in time.
    fn stop(mut self) {
        let pid = rustix::process::Pid::from_raw(
            i32::try_from(self.child.id()).expect("a pid fits an i32"),
        )
        .expect("a pid is not 0");
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!("`{}` did not stop within 20 s of SIGINT", self.command);
    }
}

/// Read-only commands may be run again until their output is the one shown: `live` shows a held
/// lock only within a cycle of the worker started before it.
fn may_repeat(command: &str) -> bool {
    ["lockward check", "lockward live", "lockward list"]
        .iter()
        .any(|prefix| command.starts_with(prefix))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_tour_prints_what_the_readme_shows() {
    let readme = std::fs::read_to_string(crate::repo_root().join("README.md")).expect("README");
    let steps = steps(&readme);
    let commands: Vec<&str> = steps.iter().map(|step| step.command.as_str()).collect();
    for expected in [
        "lockward check",
        "lockward take",
        "lockward run",
        "lockward live",
        "lockward serve",
    ] {
        assert!(
            commands.iter().any(|command| command.starts_with(expected)),
            "the tour shows no `{expected}`: {commands:?}"
        );
    }
    let project = TestProject::harbor();
    let db = TestDb::new().await;
    let url = db.url();
    let mut background: Vec<(Background, &Step)> = Vec::new();
    let mut failures = Vec::new();
    for step in &steps {
        if step.background {
            let started = Background::start(project.path(), &step.command, &url);
            let mut wanted = step.shown.clone();
            wanted.push("...".to_owned());
            let deadline = Instant::now() + Duration::from_secs(30);
            while !matches(&wanted, &lines(&started.printed())) && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if !matches(&wanted, &lines(&started.printed())) {
                failures.push(format!(
                    "$ {} &\nshown:\n{}\nprinted within 30 s:\n{}",
                    step.command,
                    step.shown.join("\n"),
                    started.printed()
                ));
            }
            background.push((started, step));
            continue;
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let printed = loop {
            let output = shell(project.path(), &step.command, &url)
                .output()
                .expect("run the command");
            let printed = String::from_utf8_lossy(&output.stdout).into_owned();
            if matches(&step.shown, &lines(&printed))
                || !may_repeat(&step.command)
                || Instant::now() > deadline
            {
                break printed;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        if !matches(&step.shown, &lines(&printed)) {
            failures.push(format!(
                "$ {}\nshown:\n{}\nprinted:\n{}",
                step.command,
                step.shown.join("\n"),
                printed
            ));
        }
    }
    for (running, _) in background {
        running.stop();
    }
    assert!(
        failures.is_empty(),
        "the README's tour drifted from what the commands print:\n\n{}",
        failures.join("\n\n")
    );
}

/// The comparison itself: placeholders for what varies, `...` for lines left out, and a changed
/// word is a difference.
#[test]
fn the_tours_comparison_ignores_what_varies_and_nothing_else() {
    let shown = lines(
        "2026-12-06T17:05:32.456Z  INFO started pid=21308 on 21302@web-1 every=5s\n...\ndone: 3 held",
    );
    let printed = lines(
        "2027-01-01T00:00:00.001Z  INFO started pid=999 on 4242+ab12@vm every=2s\nmore\nlines\ndone: 3 held",
    );
    assert!(matches(&shown, &printed));
    let changed = lines(
        "2027-01-01T00:00:00.001Z  INFO stopped pid=999 on 4242+ab12@vm every=2s\ndone: 3 held",
    );
    assert!(!matches(&shown, &changed));
    assert!(!matches(&lines("done: 3 held"), &lines("done: 4 held")));
    assert!(!matches(&lines("id 1_001_001"), &lines("id 1_001_011")));
    assert_eq!(
        normalize("postgres@127.0.0.1:5432/postgres: 1 advisory lock held"),
        "DATABASE: 1 advisory lock held"
    );
}
