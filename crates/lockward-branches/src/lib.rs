//! Ids taken by work that has not landed: lockward's registry as it stands on other git branches.
//!
//! A team takes ids on feature branches. Until a branch lands, the registry on the current branch
//! does not know its ids, and `lockward take` here would hand out the same id again. [`read`]
//! reads the registry file as it stands on every other local branch and remote-tracking branch,
//! straight from git's object store (no checkout, no change to the work tree), and returns the ids
//! found there but absent here as `reserved` entries with source `branch NAME`, ready for
//! [`Registry::add_reservations`]. Two branches that took one id for different constants are
//! reported as an error naming both; a branch whose registry does not parse is a warning, never a
//! failure; outside a git repository the step is skipped with a note. When git is installed but
//! cannot read the repository (it refuses one owned by another user as "dubious ownership"),
//! the step is skipped with a warning and [`Reservations::unreadable`] holds git's message:
//! `lockward take` refuses then, as the next free id is unknown.
//!
//! # Why the `git` command and not a git library
//!
//! The work is three questions to git, whatever the number of branches: where the registry sits
//! in the work tree (`git rev-parse`), which branches exist (`git for-each-ref`), and the
//! registry's bytes on each of them (one `git cat-file --batch` process fed every
//! `<commit>:<path>` at once). That is three process starts, a few milliseconds in all; the bytes
//! then come from git's own pack reader (plus a `git merge-base` and a `git cat-file` for each
//! branch that holds an id of the current registry for another constant, usually none). A library would save those milliseconds and cost more
//! elsewhere: gix brings a large dependency tree (object database, packs, refs, config) and a
//! large share of a clean build on a small machine, and git2 needs libgit2 and a C toolchain.
//! Shelling out also reads exactly what the user's `git` reads: the same config, alternates,
//! worktrees and repository format, including ones newer than a bundled library understands.
//! The cost is a dependency on `git` being installed, which a repository with branches has;
//! without it the step is skipped with a warning. The benchmark (`cargo bench -p
//! lockward-branches`) reads 500 branches, each with its own version of the file.
//!
//! The current work tree's registry is one side of a collision too: an id it holds for one
//! constant and another branch took for a different one is an error on both branches, not only
//! on a third. To tell a take from a rename, that comparison asks git for the registry where the
//! branch forked (`git merge-base`, only for the branches that disagree with the current
//! registry): an id already there was not taken by both sides, and merging sorts out the rest.
//!
//! Each distinct registry blob is parsed once, however many branches share it, so the cost grows
//! with the number of distinct versions of the file, not the number of branches.
#![deny(missing_docs)]

mod claims;
mod diags;
mod git;

use std::path::Path;

use lockward_registry::{Finding, Registry, Reservation};

use crate::git::{GitError, Repo};

/// What the other branches hold that the current registry does not.
#[derive(Debug, Clone, Default)]
pub struct Reservations {
    /// One reservation per id found on another branch and absent here, sorted by id, naming
    /// the first branch (local branches before remote-tracking ones, then by name) that has it.
    /// Feed them to [`Registry::add_reservations`].
    pub locks: Vec<Reservation>,
    /// Collisions between branches (errors), registries that could not be read (warnings), and
    /// why the step was skipped (a note outside a git repository, a warning when git fails).
    pub findings: Vec<Finding>,
    /// How many other branches were looked at.
    pub branches_read: usize,
    /// Why the ids other branches took are not all known, so that `lockward take` must not pick
    /// one: git's message when git is installed but could not read the repository, or the
    /// branches whose registry is not TOML (a registry that only breaks a rule still reserves the
    /// ids it records). `None` when every branch was read, outside a git repository, and when git
    /// is not installed (a repository with branches has git).
    pub unreadable: Option<String>,
}

/// Reads the registry at `registry_path` (the file on disk; its directory is where git is asked)
/// as it stands on every other local and remote-tracking branch, and returns what they reserve
/// compared with `current`, the registry parsed from the work tree.
///
/// A detached HEAD has no current branch: every local branch counts as another one. Findings
/// use the registry's file name as their path; their labels point into other branches' files as
/// `BRANCH:FILE`, as git spells them.
pub fn read(registry_path: &Path, current: &Registry) -> Reservations {
    let file_name = registry_path.file_name().map_or_else(
        || "lockward.toml".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    let dir = match registry_path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    match read_from_git(dir, &file_name, current) {
        Ok((branches_read, taken)) => Reservations {
            locks: taken.reservations,
            findings: taken.findings,
            branches_read,
            unreadable: (!taken.unknown.is_empty()).then(|| taken.unknown.join("; ")),
        },
        Err(GitError::NotARepository) => Reservations {
            findings: vec![diags::not_a_git_repository().file(&file_name)],
            ..Reservations::default()
        },
        Err(GitError::NotRunnable(message)) => Reservations {
            findings: vec![diags::git_unavailable(&message).file(&file_name)],
            ..Reservations::default()
        },
        Err(GitError::Failed(message)) => Reservations {
            findings: vec![diags::git_failed(&message).file(&file_name)],
            unreadable: Some(message),
            ..Reservations::default()
        },
    }
}

fn read_from_git(
    dir: &Path,
    file_name: &str,
    current: &Registry,
) -> Result<(usize, claims::Taken), GitError> {
    let repo = Repo::discover(dir)?;
    let (here, branches) = repo.branches()?;
    let lookups = repo.read_file(&branches, file_name)?;
    let taken = claims::reservations(
        &claims::Sides {
            file_name,
            here: here.as_deref(),
            branches: &branches,
        },
        lookups,
        current,
        |branch| repo.read_file_at_fork(branch, file_name),
    );
    Ok((branches.len(), taken))
}
