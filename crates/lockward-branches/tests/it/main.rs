//! Reading other branches' registries from real git repositories built in temporary folders.

mod reservations;

use std::path::{Path, PathBuf};
use std::process::Command;

use lockward_branches::Reservations;
use lockward_registry::Registry;
use tempfile::TempDir;

/// The registry every test repository starts from: one core constant, id 1_001_001.
const BASE: &str = include_str!("fixture/lockward.toml");

/// A git repository in a temporary folder, on branch `main`, with the base registry committed.
struct Repo {
    dir: TempDir,
    /// Where the registry sits inside the work tree (`""` for the top).
    subdir: PathBuf,
}

impl Repo {
    fn new() -> Self {
        Self::with_registry_in("")
    }

    /// A repository whose registry lives in `subdir` rather than at the top.
    fn with_registry_in(subdir: &str) -> Self {
        let repo = Self {
            dir: TempDir::new().unwrap(),
            subdir: PathBuf::from(subdir),
        };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo.write_registry(BASE);
        repo.commit("the registry");
        repo
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn registry_path(&self) -> PathBuf {
        self.path().join(&self.subdir).join("lockward.toml")
    }

    /// Runs git in the work tree and returns its stdout; panics when it fails.
    fn git(&self, args: &[&str]) -> String {
        git(self.path(), args)
    }

    fn write_registry(&self, text: &str) {
        std::fs::create_dir_all(self.path().join(&self.subdir)).unwrap();
        std::fs::write(self.registry_path(), text).unwrap();
    }

    fn commit(&self, message: &str) {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "--message", message]);
    }

    /// Appends `entries` to the registry and commits them on the branch checked out.
    fn take(&self, entries: &str) {
        let text = std::fs::read_to_string(self.registry_path()).unwrap();
        self.write_registry(&format!("{text}{entries}"));
        self.commit("take ids");
    }

    /// Creates `branch` from `main` with `entries` appended to its registry, and comes back to
    /// `main`.
    fn branch(&self, branch: &str, entries: &str) {
        self.git(&["checkout", "--quiet", "-b", branch, "main"]);
        self.take(entries);
        self.git(&["checkout", "--quiet", "main"]);
    }

    /// The registry in the work tree, as `check` would load it.
    fn current(&self) -> Registry {
        current(&self.registry_path())
    }

    fn read(&self) -> Reservations {
        lockward_branches::read(&self.registry_path(), &self.current())
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn current(registry_path: &Path) -> Registry {
    let text = std::fs::read_to_string(registry_path).unwrap();
    lockward_registry::parse("lockward.toml", &text)
        .expect("the fixture registry parses")
        .registry
}

/// A `[[lock]]` entry for a core constant.
fn constant(id: &str, constant: &str, worker: &str) -> String {
    format!("\n[[lock]]\nid = {id}\nconstant = \"{constant}\"\nworker = \"{worker}\"\n")
}
