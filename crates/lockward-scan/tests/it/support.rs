//! A fixture project laid on disk, and helpers to scan it.

use std::path::{Path, PathBuf};

use lockward_registry::{Finding, Registry};
use lockward_scan::{ScanOptions, ScanReport, scan};

/// The registry in `dir/lockward.toml`.
pub(crate) fn registry(dir: &Path) -> Registry {
    let text =
        std::fs::read_to_string(dir.join("lockward.toml")).expect("the registry is readable");
    match lockward_registry::parse("lockward.toml", &text) {
        Ok(loaded) => loaded.registry,
        Err(findings) => panic!("the fixture registry is invalid: {findings:#?}"),
    }
}

/// Scans `dir` against its own registry.
pub(crate) fn scan_dir(dir: &Path) -> ScanReport {
    scan(
        &registry(dir),
        dir,
        &ScanOptions {
            threads: 2,
            ..ScanOptions::default()
        },
    )
}

/// `path:line code` for each finding (`path code` for one about a whole file): what a reader
/// checks first.
pub(crate) fn brief(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .map(|f| match f.line() {
            Some(line) => format!("{}:{line} {}", f.path, f.code.as_str()),
            None => format!("{} {}", f.path, f.code.as_str()),
        })
        .collect()
}

/// The source directory of this crate's test data.
pub(crate) fn data(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(relative)
}

/// A copy of `tests/fixtures/harbor` in a temporary directory, to plant faults in.
pub(crate) struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub(crate) fn harbor() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        copy_tree(&data("fixtures/harbor"), dir.path());
        Self { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn write(&self, relative: &str, text: &str) -> &Self {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
        self
    }

    pub(crate) fn scan(&self) -> ScanReport {
        scan_dir(self.path())
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("the fixture exists") {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}
