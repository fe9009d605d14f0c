//! End-to-end tests of the `lockward` binary, run against temporary copies of fixture projects.

mod alerts;
mod browser;
mod check;
mod completions;
mod confinement;
mod docs;
mod fleet;
mod init;
mod layout;
mod list;
mod live;
mod man;
mod partition;
mod plugins;
mod regression;
mod render;
mod retire;
mod run;
mod scan;
mod serve;
mod take;
mod take_existing;
mod templates;
mod tour;
mod version;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary copy of a project on disk, and a way to run `lockward` in it.
pub(crate) struct TestProject {
    dir: tempfile::TempDir,
}

/// What one run of the binary did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Stdout parsed as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|error| panic!("stdout is not JSON ({error}): {}", self.stdout))
    }
}

impl TestProject {
    /// A copy of the example project shipped in the repository, `examples/harbor`.
    pub(crate) fn harbor() -> Self {
        Self::copy_of(&repo_root().join("examples/harbor"))
    }

    /// A copy of the directory `source`.
    pub(crate) fn copy_of(source: &Path) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        copy_dir(source, dir.path());
        Self { dir }
    }

    /// The project's directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `text` to `relative`, creating directories.
    pub(crate) fn write(&self, relative: &str, text: &str) -> &Self {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
        self
    }

    /// Reads `relative`.
    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path().join(relative)).expect("read")
    }

    /// Replaces `from` by `to` in `relative`, which must contain it.
    pub(crate) fn edit(&self, relative: &str, from: &str, to: &str) -> &Self {
        let text = self.read(relative);
        assert!(text.contains(from), "{relative} does not contain {from:?}");
        self.write(relative, &text.replacen(from, to, 1))
    }

    /// `git ARGS` in the project's directory (with an identity of its own), which must succeed.
    pub(crate) fn git(&self, args: &[&str]) -> &Self {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(self.path())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
        self
    }

    /// Makes the project a git repository with everything committed.
    pub(crate) fn commit_all(&self) -> &Self {
        self.git(&["init", "-q"])
            .git(&["add", "-A"])
            .git(&["commit", "-q", "-m", "the project"])
    }

    /// Runs `lockward ARGS` in the project's directory.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_in(self.path(), args)
    }

    /// Runs `lockward ARGS` in `dir`.
    pub(crate) fn run_in(&self, dir: &Path, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_lockward"))
            .args(args)
            .current_dir(dir)
            .env_remove("DATABASE_URL")
            .env_remove("LOCKWARD_LOG")
            .env_remove("LOCKWARD_HOST")
            .output()
            .expect("run lockward");
        let filter = |bytes: Vec<u8>| {
            String::from_utf8(bytes)
                .expect("UTF-8 output")
                .replace(&self.path().display().to_string(), "[PROJECT]")
        };
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: filter(output.stdout),
            stderr: filter(output.stderr),
        }
    }
}

/// Where `sarif` breaks the SARIF 2.1.0 schema (OASIS's, kept in the fixtures), one line each.
pub(crate) fn sarif_schema_errors(sarif: &serde_json::Value) -> Vec<String> {
    let schema_path =
        repo_root().join("crates/lockward-cli/tests/cli/fixtures/sarif/sarif-2.1.0-rtm.5.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).expect("schema")).expect("JSON");
    let validator = jsonschema::draft4::new(&schema).expect("a valid schema");
    validator
        .iter_errors(sarif)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect()
}

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            if entry.file_name() == "target" {
                continue;
            }
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}
