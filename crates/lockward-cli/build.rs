//! Puts the commit into `lockward --version`: `LOCKWARD_VERSION` is `0.1.0 (abc1234)`, with
//! `-dirty` when tracked files differ from that commit, when built from a lockward checkout, and
//! the bare `0.1.0` when built from a package (`cargo install lockward-cli`, a wheel's sdist) or
//! where git cannot say.
//!
//! A package is recognised by the `.cargo_vcs_info.json` that `cargo package` writes into it: a
//! package unpacked inside some other git repository (a vendored copy, `cargo package`'s own
//! verification build under `target/package/`) must not report that repository's commit. Nor
//! must a copy of the sources in someone else's repository, so git is only believed when it
//! tracks this very build script.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = env!("CARGO_PKG_VERSION");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let commit = if manifest_dir.join(".cargo_vcs_info.json").exists() {
        None
    } else {
        commit(&manifest_dir)
    };
    match commit {
        Some(commit) => println!("cargo:rustc-env=LOCKWARD_VERSION={version} ({commit})"),
        None => println!("cargo:rustc-env=LOCKWARD_VERSION={version}"),
    }
}

/// `abc1234` or `abc1234-dirty`, and the files whose change must run this script again; `None`
/// when this is not a lockward checkout git can read. (`pub(crate)` for the test that includes
/// this file: `tests/cli/version.rs`.)
pub(crate) fn commit(dir: &Path) -> Option<String> {
    // Watched before anything is decided, so that a build script git does not track yet (one
    // being added) runs again once the index says it does.
    watch(dir)?;
    git(dir, &["ls-files", "--error-unmatch", "build.rs"])?;
    let short = git(dir, &["rev-parse", "--short", "HEAD"])?;
    // `--untracked-files=no`: a scratch file lying in the checkout does not change what is built.
    let changes = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    Some(if changes.is_empty() {
        short
    } else {
        format!("{short}-dirty")
    })
}

/// Tells cargo what to run this script again after. HEAD names the branch (or, detached, the
/// commit); the branch's ref file, or packed-refs when the ref is packed, changes with each
/// commit; the index changes when files are staged, committed or checked out. Edits not yet
/// staged show through the sources: cargo scans the directory of the workspace's crates for
/// files newer than the last run.
fn watch(dir: &Path) -> Option<()> {
    for file in ["HEAD", "index", "packed-refs"] {
        rerun_if_exists(dir, &git(dir, &["rev-parse", "--git-path", file])?);
    }
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        rerun_if_exists(dir, &git(dir, &["rev-parse", "--git-path", &branch])?);
    }
    rerun_if_exists(dir, "..");
    Some(())
}

/// A path git printed (relative to `dir` unless absolute): cargo reruns this script when it
/// changes. A path that does not exist is left out, since cargo would rerun on every build.
fn rerun_if_exists(dir: &Path, path: &str) {
    let path = dir.join(path);
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// What `git ARGS` prints in `dir`, trimmed; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        // `git status` refreshes the index's file times and writes it back when it can; that
        // write would change the index this script watches and run it again on every build.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8(output.stdout).ok()?.trim().to_owned())
}
