//! Changing the project's files safely: one writer at a time, and all files or none.
//!
//! `take` and `retire` change up to three files (the registry, core's constants file, the page)
//! that must agree with each other. Two things can go wrong: two runs at once read the same
//! registry and hand out the same id, and a run that fails halfway leaves a registry entry
//! without its constant. [`ProjectLock`] serialises the runs; [`write_all`] writes every file
//! to a temporary file beside it first, then renames them into place, and puts the originals
//! back if a rename fails.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// An exclusive lock on a project, held until dropped (the OS releases it when the process
/// ends, however it ends).
///
/// The lock is taken on the registry's directory, not on the registry file: the file is
/// replaced by a rename, so a second run waiting on the old file's lock would get it on a file
/// no longer in the tree while a third run locks the new one, and both would go ahead. The
/// directory stays the same inode for as long as the project exists, and locking it leaves no
/// lock file in the work tree. Where a directory cannot be opened as a file (Windows), the
/// lock is a `.lockward.lock` file in that directory instead.
///
/// When the registry is a symlink, the directory locked is the one holding the file it points
/// to, which every run that writes that file reaches, whichever link it came through.
#[derive(Debug)]
pub(crate) struct ProjectLock {
    _file: File,
}

impl ProjectLock {
    /// Waits for, then takes, the exclusive lock on the project whose registry is `registry`.
    pub(crate) fn acquire(registry: &Path) -> anyhow::Result<Self> {
        let registry = resolve_links(registry);
        let dir = match registry.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let file = open_lock_target(dir)
            .with_context(|| format!("cannot open {} to lock it", dir.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                // Said at every log level: without it a run that waits looks like one that hangs.
                stderrln!("note: waiting for another lockward run on this project to finish");
                file.lock()
                    .with_context(|| format!("cannot lock {}", dir.display()))?;
            }
            Err(std::fs::TryLockError::Error(error)) => {
                return Err(error).with_context(|| format!("cannot lock {}", dir.display()));
            }
        }
        Ok(Self { _file: file })
    }
}

#[cfg(unix)]
fn open_lock_target(dir: &Path) -> std::io::Result<File> {
    File::open(dir)
}

#[cfg(not(unix))]
fn open_lock_target(dir: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lockward.lock"))
}

/// A file's new contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// Where the file is (or will be).
    pub(crate) path: PathBuf,
    /// Its new contents.
    pub(crate) contents: String,
}

/// One change on its way: the temporary file holding the new contents and what to put back.
struct Staged {
    /// The path as the change named it.
    shown: PathBuf,
    /// The file the rename replaces: `shown` with symlinks resolved.
    path: PathBuf,
    temporary: PathBuf,
    original: Option<Vec<u8>>,
}

/// Writes every change or none: each new text goes to a temporary file in the target's
/// directory (so the rename stays on one file system and is atomic), synced to disk; only when
/// all are written are they renamed over their targets. A failure while writing removes the
/// temporary files and leaves every target as it was; a failed rename puts back the targets
/// already replaced. Changes whose contents equal the file on disk are skipped; two changes of
/// one file (through links too) are refused before anything is written. Returns the paths
/// written.
pub(crate) fn write_all(changes: &[Change]) -> anyhow::Result<Vec<PathBuf>> {
    commit(changes, |from, to| std::fs::rename(from, to))
}

fn commit(
    changes: &[Change],
    mut rename: impl FnMut(&Path, &Path) -> std::io::Result<()>,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut targets = std::collections::HashSet::with_capacity(changes.len());
    for change in changes {
        if !targets.insert(resolve_links(&change.path)) {
            anyhow::bail!(
                "{} would be written twice: two of the files this command writes are one file \
                 (is `[project] page` the registry or core's constants file?)",
                change.path.display()
            );
        }
    }
    let mut staged: Vec<Staged> = Vec::with_capacity(changes.len());
    for change in changes {
        match stage(change) {
            Ok(Some(one)) => staged.push(one),
            Ok(None) => {}
            Err(error) => {
                discard(&staged);
                return Err(error);
            }
        }
    }
    for (done, one) in staged.iter().enumerate() {
        if let Err(error) = rename(&one.temporary, &one.path) {
            restore(&staged[..done]);
            discard(&staged[done..]);
            return Err(error).with_context(|| {
                format!(
                    "cannot replace {}; the files already replaced were put back",
                    one.path.display()
                )
            });
        }
    }
    for one in &staged {
        sync_parent(&one.path);
    }
    Ok(staged.into_iter().map(|one| one.shown).collect())
}

fn stage(change: &Change) -> anyhow::Result<Option<Staged>> {
    let path = &resolve_links(&change.path);
    let original = match std::fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    };
    if original.as_deref() == Some(change.contents.as_bytes()) {
        return Ok(None);
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let temporary = temporary_path(path);
    let written = write_synced(&temporary, change.contents.as_bytes(), path);
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(error).with_context(|| format!("cannot write {}", temporary.display()));
    }
    Ok(Some(Staged {
        shown: change.path.clone(),
        path: path.clone(),
        temporary,
        original,
    }))
}

/// Where `path` leads through its symlinks: a rename over a link would replace the link with a
/// file, so the new contents go where it points. That holds for a link whose target does not
/// exist yet too (a page linked into a directory of generated files): it is followed as far as
/// the links go.
fn resolve_links(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    // As many links as Linux follows before it gives up with ELOOP.
    let mut path = path.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&path) else {
            break;
        };
        path = path.parent().unwrap_or(Path::new("")).join(target);
    }
    path
}

/// `dir/.NAME.lockward-PID.tmp`: hidden, beside its target, and unique to this process.
fn temporary_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy());
    path.with_file_name(format!(".{name}.lockward-{}.tmp", std::process::id()))
}

/// Writes `bytes` to a new file at `temporary` with the permissions of `target` (when it
/// exists), and syncs it, so the rename publishes complete contents.
fn write_synced(temporary: &Path, bytes: &[u8], target: &Path) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(temporary)?;
    file.write_all(bytes)?;
    if let Ok(metadata) = std::fs::metadata(target) {
        file.set_permissions(metadata.permissions())?;
    }
    file.sync_all()
}

fn discard(staged: &[Staged]) {
    for one in staged {
        let _ = std::fs::remove_file(&one.temporary);
    }
}

/// Puts back the originals of targets already replaced (best effort: this runs after a
/// failure, and reports nothing more than that failure).
fn restore(replaced: &[Staged]) {
    for one in replaced {
        match &one.original {
            Some(bytes) => {
                let temporary = temporary_path(&one.path);
                if write_synced(&temporary, bytes, &one.path).is_ok() {
                    let _ = std::fs::rename(&temporary, &one.path);
                } else {
                    let _ = std::fs::remove_file(&temporary);
                    let _ = std::fs::write(&one.path, bytes);
                }
            }
            None => {
                let _ = std::fs::remove_file(&one.path);
            }
        }
    }
}

/// Syncs the directory holding `path`, so the rename itself survives a crash.
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    if let Some(parent) = path.parent()
        && let Ok(dir) = File::open(parent)
    {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(dir: &Path, name: &str, contents: &str) -> Change {
        Change {
            path: dir.join(name),
            contents: contents.to_owned(),
        }
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with('.') && name.contains(".lockward-"))
            .collect()
    }

    #[test]
    fn every_file_is_written_and_unchanged_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "old a").unwrap();
        std::fs::write(dir.path().join("same"), "same").unwrap();
        let written = write_all(&[
            change(dir.path(), "a", "new a"),
            change(dir.path(), "same", "same"),
            change(dir.path(), "sub/b", "new b"),
        ])
        .unwrap();
        assert_eq!(
            written,
            vec![dir.path().join("a"), dir.path().join("sub/b")]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a")).unwrap(),
            "new a"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/b")).unwrap(),
            "new b"
        );
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_failed_rename_puts_back_the_files_already_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "old a").unwrap();
        std::fs::write(dir.path().join("b"), "old b").unwrap();
        let mut calls = 0;
        let error = commit(
            &[
                change(dir.path(), "a", "new a"),
                change(dir.path(), "c", "new c"),
                change(dir.path(), "b", "new b"),
            ],
            |from, to| {
                calls += 1;
                if calls == 3 {
                    return Err(std::io::Error::other("disk on fire"));
                }
                std::fs::rename(from, to)
            },
        )
        .unwrap_err();
        assert!(format!("{error:#}").contains("disk on fire"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a")).unwrap(),
            "old a"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b")).unwrap(),
            "old b"
        );
        assert!(!dir.path().join("c").exists());
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn two_changes_of_one_file_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lockward.toml"), "registry").unwrap();
        let error = write_all(&[
            change(dir.path(), "lockward.toml", "new registry"),
            change(dir.path(), "locks.py", "constants"),
            change(dir.path(), "lockward.toml", "page"),
        ])
        .unwrap_err();
        assert!(
            error.to_string().ends_with(
                "lockward.toml would be written twice: two of the files this command writes are \
                 one file (is `[project] page` the registry or core's constants file?)"
            ),
            "{error}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lockward.toml")).unwrap(),
            "registry"
        );
        assert!(!dir.path().join("locks.py").exists());
    }

    #[test]
    fn a_failed_write_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "old a").unwrap();
        std::fs::write(dir.path().join("blocker"), "a file, not a directory").unwrap();
        let error = write_all(&[
            change(dir.path(), "a", "new a"),
            change(dir.path(), "blocker/b", "new b"),
        ])
        .unwrap_err();
        assert!(format!("{error:#}").contains("blocker"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a")).unwrap(),
            "old a"
        );
        assert!(leftovers(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_is_written_through_its_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("real.toml"), "old").unwrap();
        std::os::unix::fs::symlink("real.toml", dir.path().join("lockward.toml")).unwrap();
        let written = write_all(&[change(dir.path(), "lockward.toml", "new")]).unwrap();
        assert_eq!(written, vec![dir.path().join("lockward.toml")]);
        assert!(dir.path().join("lockward.toml").is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("real.toml")).unwrap(),
            "new"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_file_not_yet_written_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::os::unix::fs::symlink("../generated/locks.md", dir.path().join("docs/locks.md"))
            .unwrap();
        let written = write_all(&[change(dir.path(), "docs/locks.md", "page")]).unwrap();
        assert_eq!(written, vec![dir.path().join("docs/locks.md")]);
        assert!(dir.path().join("docs/locks.md").is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("generated/locks.md")).unwrap(),
            "page"
        );
    }

    #[cfg(unix)]
    #[test]
    fn projects_sharing_a_registry_through_links_share_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["shared", "a", "b"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("shared/lockward.toml"), "").unwrap();
        for project in ["a", "b"] {
            std::os::unix::fs::symlink(
                "../shared/lockward.toml",
                dir.path().join(project).join("lockward.toml"),
            )
            .unwrap();
        }
        let held = ProjectLock::acquire(&dir.path().join("a/lockward.toml")).unwrap();
        let through_b = File::open(dir.path().join("shared")).unwrap();
        assert!(matches!(
            through_b.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        through_b.try_lock().unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_project_lock_excludes_a_second_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lockward.toml"), "").unwrap();
        let held = ProjectLock::acquire(&dir.path().join("lockward.toml")).unwrap();
        let other = File::open(dir.path()).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
    }
}
