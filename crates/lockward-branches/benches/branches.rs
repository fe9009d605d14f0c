//! Reads the registry from 500 branches, each with its own version of the file (the worst case:
//! no two branches share a blob), and compares the time with git alone answering the same
//! questions (`for-each-ref` and one `cat-file --batch`). Goal: under a second.
//!
//! Run with `cargo bench -p lockward-branches`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BRANCHES: usize = 500;
const ENTRIES: usize = 40;
const RUNS: usize = 10;

fn main() {
    let dir = tempfile::TempDir::new().unwrap();
    let base = registry(ENTRIES, None);
    build_repository(dir.path(), &base);
    let registry_path = dir.path().join("lockward.toml");
    std::fs::write(&registry_path, &base).unwrap();
    let current = lockward_registry::parse("lockward.toml", &base)
        .unwrap()
        .registry;

    let found = lockward_branches::read(&registry_path, &current);
    assert_eq!(found.branches_read, BRANCHES);
    assert_eq!(found.locks.len(), BRANCHES, "{:#?}", found.findings);
    assert!(found.findings.is_empty(), "{:#?}", found.findings);

    let ours = median(|| {
        let found = lockward_branches::read(&registry_path, &current);
        assert_eq!(found.locks.len(), BRANCHES);
    });
    let git_alone = median(|| git_alone(dir.path()));
    println!(
        "branches: {BRANCHES} branches, {BRANCHES} distinct registries of {} entries",
        ENTRIES + 1
    );
    println!(
        "  lockward_branches::read  {:>8.1} ms (median of {RUNS})",
        millis(ours)
    );
    println!("  git alone (same reads)   {:>8.1} ms", millis(git_alone));
    println!(
        "  ratio {:.2}x git alone; goal under 1000 ms: {}",
        ours.as_secs_f64() / git_alone.as_secs_f64(),
        if ours < Duration::from_secs(1) {
            "met"
        } else {
            "MISSED"
        }
    );
}

/// A registry with `entries` core constants, plus one more at `extra` when given.
fn registry(entries: usize, extra: Option<usize>) -> String {
    let mut text = String::from(
        "[project]\nname = \"harbor\"\n\n[core]\nconstants = \"src/locks.rs\"\n\
         block = { start = 1_001_001, end = 1_009_999 }\n",
    );
    let ids = (0..entries)
        .map(|n| (n, 1_001_001 + n))
        .chain(extra.map(|n| (n, 1_002_000 + n)));
    for (n, id) in ids {
        write!(
            text,
            "\n[[lock]]\nid = {id}\nconstant = \"ADVISORY_LOCK_WORKER_{id}\"\nworker = \"worker {n}\"\n"
        )
        .unwrap();
    }
    text
}

/// `main` with the base registry, and `BRANCHES` branches from it that each take one more id,
/// written with one `git fast-import` so that setting up stays quick.
fn build_repository(dir: &Path, base: &str) {
    run(dir, &["init", "--quiet", "--initial-branch=main"]);
    let mut stream = String::new();
    let commit = |stream: &mut String, refname: &str, mark: usize, text: &str| {
        write!(
            stream,
            "commit {refname}\nmark :{mark}\ncommitter Bench <bench@example.invalid> 1700000000 \
             +0000\ndata 4\ntake\n"
        )
        .unwrap();
        if mark > 1 {
            stream.push_str("from :1\n");
        }
        write!(
            stream,
            "M 100644 inline lockward.toml\ndata {}\n{text}\n",
            text.len()
        )
        .unwrap();
    };
    commit(&mut stream, "refs/heads/main", 1, base);
    for n in 0..BRANCHES {
        let text = registry(ENTRIES, Some(n));
        commit(
            &mut stream,
            &format!("refs/heads/feature/worker-{n:03}"),
            n + 2,
            &text,
        );
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

/// The git part of the work on its own: list the branches, read the file on each.
fn git_alone(dir: &Path) {
    let refs = run(
        dir,
        &["for-each-ref", "--format=%(objectname)", "refs/heads"],
    );
    let requests = refs.replace('\n', ":lockward.toml\n");
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.stdout.len() > BRANCHES * base_size());
}

fn base_size() -> usize {
    registry(ENTRIES, None).len()
}

fn run(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn median(mut run: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
