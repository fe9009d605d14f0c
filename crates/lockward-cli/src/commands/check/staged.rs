//! `check --staged`: the project as git's index holds it.
//!
//! A pre-commit hook that checked the work tree refused an unrelated commit because of an
//! untracked scratch file (and would pass a commit whose staged registry was broken while the
//! work tree's was fixed). The index's files are exported with `git checkout-index` into a
//! temporary directory laid out as the repository, and the project there is checked: the same
//! checks on exactly what is being committed. The scan cannot read blobs from the index itself,
//! and an export is one git command that git keeps correct (symlinks, executable bits, sparse
//! checkouts), so it is not written here by hand.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;

use crate::UsageError;
use crate::project::Location;

/// The index's files in a temporary directory, removed when dropped, and the registry there.
pub(crate) struct Index {
    _dir: tempfile::TempDir,
    location: Location,
}

impl Index {
    /// The registry's location in the exported copy.
    pub(crate) fn location(&self) -> Location {
        self.location.clone()
    }
}

/// Exports git's index of the repository holding `location`'s registry.
pub(crate) fn export(location: &Location) -> anyhow::Result<Index> {
    let top = git(&location.root, &["rev-parse", "--show-toplevel"]).map_err(|why| {
        UsageError(format!(
            "--staged checks what git's index holds, and {} is not in a git work tree: {why}",
            location.root.display()
        ))
    })?;
    let top = PathBuf::from(top);
    let real_file = std::fs::canonicalize(&location.file)
        .with_context(|| format!("cannot resolve {}", location.file.display()))?;
    let real_top =
        std::fs::canonicalize(&top).with_context(|| format!("cannot resolve {}", top.display()))?;
    let relative = real_file.strip_prefix(&real_top).map_err(|_| {
        UsageError(format!(
            "--staged: the registry {} is outside the git work tree {}",
            location.file.display(),
            top.display()
        ))
    })?;
    let dir = tempfile::Builder::new()
        .prefix("lockward-staged-")
        .tempdir()
        .context("cannot make a temporary directory for the index's files")?;
    // `--prefix` is a path prefix, not a directory: it must end with a separator.
    let prefix = format!("{}/", dir.path().display());
    git(
        &top,
        &["checkout-index", "--all", "--force", "--prefix", &prefix],
    )
    .map_err(|why| anyhow::anyhow!("git checkout-index could not export the index: {why}"))?;
    let file = dir.path().join(relative);
    if file.symlink_metadata().is_err() {
        return Err(UsageError(format!(
            "--staged: {} is not in git's index (`git add` it)",
            relative.display()
        ))
        .into());
    }
    let location = Location::find(Some(&file))?;
    Ok(Index {
        _dir: dir,
        location,
    })
}

/// `git ARGS` in `dir`: its output, trimmed, or git's message.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run git: {error}"))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned());
    }
    Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
}
