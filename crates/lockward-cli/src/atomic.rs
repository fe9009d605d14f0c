//! Changing the project's files safely: one writer at a time, and all files or none, even when
//! the writer is killed.
//!
//! `take` and `retire` change up to three files (the registry, core's constants file, the page)
//! that must agree with each other. Three things can go wrong: two runs at once read the same
//! registry and hand out the same id; a run that fails halfway leaves a registry entry without
//! its constant; and a run that is killed halfway (SIGKILL, a power cut) leaves the same, plus
//! its temporary files. [`ProjectLock`] serialises the runs. [`ProjectLock::write_all`] writes
//! every new text to a temporary file beside its target, then records the whole change in a
//! journal (`.lockward-journal` in the registry's directory, published by a rename, so it is
//! either complete or absent), then renames the temporary files into place, then removes the
//! journal. The next lockward command that loads the project finds the journal and finishes the
//! change ([`recover`]): it renames the temporary files still there into place (the new texts
//! were all on disk before the journal was). A change that failed while renaming is put back
//! from the originals' copies the journal names, and a journal marked so is rolled back, not
//! forward. Temporary files left by a run killed before its journal was published are removed,
//! under the lock.
//!
//! Every temporary file is created exclusively (`O_CREAT | O_EXCL`, which does not follow a
//! symlink) under a random name, `.NAME.lockward-XXXXXX.tmp`: nothing planted at a name the
//! next run would use can redirect its write.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

/// The journal's name, in the registry's directory.
const JOURNAL: &str = ".lockward-journal";

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
/// to, which every run that writes that file reaches, whichever link it came through. The
/// journal lives there too.
#[derive(Debug)]
pub(crate) struct ProjectLock {
    _file: File,
    /// The directory locked, where the journal is.
    dir: PathBuf,
}

impl ProjectLock {
    /// Waits for, then takes, the exclusive lock on the project whose registry is `registry`.
    pub(crate) fn acquire(registry: &Path) -> anyhow::Result<Self> {
        let dir = lock_dir(registry);
        let file = open_lock_target(&dir)
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
        Ok(Self { _file: file, dir })
    }

    /// Writes every change or none: each new text goes to a temporary file in the target's
    /// directory (so the rename stays on one file system and is atomic), synced to disk, beside
    /// a copy of the original; then the journal naming them all is published; then the
    /// temporary files are renamed over their targets and the journal removed. A failure while
    /// writing removes the temporary files and leaves every target as it was; a failed rename
    /// puts back the targets already replaced; a run killed after the journal is published is
    /// finished by the next one ([`recover`]). Changes whose contents equal the file on disk
    /// are skipped; two changes of one file (through links too) are refused before anything is
    /// written. Returns the paths written.
    pub(crate) fn write_all(&self, changes: &[Change]) -> anyhow::Result<Vec<PathBuf>> {
        self.commit(changes, |from, to| std::fs::rename(from, to))
    }

    fn commit(
        &self,
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
        if staged.is_empty() {
            return Ok(Vec::new());
        }
        let journal_path = self.dir.join(JOURNAL);
        let mut journal = Journal {
            state: State::Commit,
            files: staged.iter().map(|one| one.entry.clone()).collect(),
        };
        if let Err(error) = publish(&journal_path, &journal) {
            discard(&staged);
            return Err(error);
        }
        for one in &staged {
            if let Err(error) = rename(&one.entry.temporary, &one.entry.target) {
                journal.state = State::Rollback;
                let rolled_back = publish(&journal_path, &journal)
                    .and_then(|()| finish(&journal_path, &journal, &|_| true));
                let target = one.entry.target.display();
                return Err(anyhow::Error::new(error).context(match rolled_back {
                    Ok(()) => {
                        format!("cannot replace {target}; the files already replaced were put back")
                    }
                    Err(undo) => format!(
                        "cannot replace {target}, and putting back the files already replaced \
                         failed ({undo:#}); the next lockward command on this project finishes \
                         the change"
                    ),
                }));
            }
        }
        finish(&journal_path, &journal, &|_| true)?;
        Ok(staged.into_iter().map(|one| one.shown).collect())
    }
}

/// The directory a project's lock is taken on: the one holding the registry, links resolved.
fn lock_dir(registry: &Path) -> PathBuf {
    let registry = resolve_links(registry);
    match registry.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Finishes what a killed run left behind: a journal is replayed (its change completed, or
/// rolled back when it was being rolled back), and the temporary files of runs killed before
/// they published a journal are removed from the directories of the registry and of `files`
/// (the other files lockward writes: core's constants file, the page). Returns whether a
/// journal was replayed, so the caller reads the files again. Does nothing, and takes no lock,
/// when there is nothing to do; otherwise works under the project lock (`held` when the caller
/// has it), so a run still writing is waited for, never undone.
///
/// The journal is a file in the work tree, so it is not trusted further than the tree: each of
/// its temporary files must sit beside the file it replaces and be named after it (a journal
/// cannot move a file from elsewhere), and only the project's own files are removed when a
/// creation is rolled back.
pub(crate) fn recover(
    registry: &Path,
    files: &[PathBuf],
    held: Option<&ProjectLock>,
) -> anyhow::Result<bool> {
    let registry_dir = lock_dir(registry);
    let mut dirs: Vec<PathBuf> = std::iter::once(registry_dir.clone())
        .chain(files.iter().map(|file| lock_dir(file)))
        .collect();
    dirs.dedup();
    let pending = registry_dir.join(JOURNAL).symlink_metadata().is_ok()
        || dirs.iter().any(|dir| !leftovers(dir).is_empty());
    if !pending {
        return Ok(false);
    }
    let acquired;
    let lock = if let Some(lock) = held {
        lock
    } else {
        acquired = ProjectLock::acquire(registry)?;
        &acquired
    };
    let journal_path = lock.dir.join(JOURNAL);
    let replayed = match std::fs::read(&journal_path) {
        Ok(bytes) => {
            let written: Journal = serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{}: the journal of an interrupted lockward write does not parse; compare \
                     the files it names with their `.lockward-*.tmp` copies, then delete it",
                    journal_path.display()
                )
            })?;
            let journal = written.map_paths(|path| lock.dir.join(path));
            if let Some(stray) = journal
                .files
                .iter()
                .find(|entry| !entry.is_beside_its_target())
            {
                anyhow::bail!(
                    "{}: the journal names {} as the new contents of {}, which lockward never \
                     writes there; delete the journal",
                    journal_path.display(),
                    stray.temporary.display(),
                    stray.target.display()
                );
            }
            let own: Vec<PathBuf> = std::iter::once(registry)
                .chain(files.iter().map(PathBuf::as_path))
                .map(resolve_links)
                .collect();
            finish(&journal_path, &journal, &|target| {
                own.iter().any(|file| file == target)
            })?;
            let files: Vec<String> = written
                .files
                .iter()
                .map(|entry| entry.target.display().to_string())
                .collect();
            stderrln!(
                "note: {} the change of an interrupted lockward run: {}",
                match journal.state {
                    State::Commit => "completed",
                    State::Rollback => "rolled back",
                },
                files.join(", ")
            );
            true
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", journal_path.display()));
        }
    };
    for dir in &dirs {
        for leftover in leftovers(dir) {
            match std::fs::remove_file(&leftover) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error).with_context(|| {
                        format!(
                            "cannot remove {}, left by an interrupted lockward run",
                            leftover.display()
                        )
                    });
                }
            }
        }
    }
    Ok(replayed)
}

/// The temporary files in `dir` (`.NAME.lockward-XXXXXX.tmp`, the journal's own included).
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with('.') && name.contains(".lockward-") && name.ends_with(".tmp")
        })
        .map(|entry| entry.path())
        .collect()
}

/// A file's new contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// Where the file is (or will be).
    pub(crate) path: PathBuf,
    /// Its new contents.
    pub(crate) contents: String,
}

/// A change on disk, in the order it is applied: what the next run needs to finish it or undo
/// it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    state: State,
    files: Vec<Entry>,
}

impl Journal {
    /// The journal with every path passed through `map`: paths are written relative to the
    /// journal's directory where they are inside it, so a project moved or mounted elsewhere
    /// after a crash is still finished where it now is.
    fn map_paths(&self, map: impl Fn(&Path) -> PathBuf) -> Self {
        Self {
            state: self.state,
            files: self
                .files
                .iter()
                .map(|entry| Entry {
                    target: map(&entry.target),
                    temporary: map(&entry.temporary),
                    backup: entry.backup.as_deref().map(&map),
                })
                .collect(),
        }
    }
}

impl Entry {
    /// Whether the temporary file and the backup are where and as lockward writes them: in the
    /// target's directory, named `.NAME.lockward-XXXXXX.tmp` after it.
    fn is_beside_its_target(&self) -> bool {
        let Some(name) = self.target.file_name() else {
            return false;
        };
        let prefix = format!(".{}.lockward-", name.to_string_lossy());
        let beside = |path: &Path| {
            path.parent() == self.target.parent()
                && path.file_name().is_some_and(|file| {
                    let file = file.to_string_lossy();
                    file.starts_with(&prefix) && file.ends_with(".tmp")
                })
        };
        beside(&self.temporary) && self.backup.as_deref().is_none_or(beside)
    }
}

/// Which way a journal goes when it is replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum State {
    /// Every temporary file is complete: rename the ones still there into place.
    Commit,
    /// A rename failed: put every original back.
    Rollback,
}

/// One file of a change.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// The file replaced: the changed path with symlinks resolved.
    target: PathBuf,
    /// The new contents, until renamed over `target`.
    temporary: PathBuf,
    /// A copy of the original, for a rollback; `None` when `target` did not exist.
    backup: Option<PathBuf>,
}

/// One change on its way.
struct Staged {
    /// The path as the change named it.
    shown: PathBuf,
    entry: Entry,
}

fn stage(change: &Change) -> anyhow::Result<Option<Staged>> {
    let path = resolve_links(&change.path);
    let original = match crate::project_file::read_project_file(&path) {
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
    let temporary = write_temporary(dir, &path, change.contents.as_bytes())
        .with_context(|| format!("cannot write a temporary file in {}", dir.display()))?;
    let backup = match &original {
        None => None,
        Some(bytes) => match write_temporary(dir, &path, bytes) {
            Ok(backup) => Some(backup),
            Err(error) => {
                let _ = std::fs::remove_file(&temporary);
                return Err(error).with_context(|| {
                    format!("cannot write a temporary file in {}", dir.display())
                });
            }
        },
    };
    Ok(Some(Staged {
        shown: change.path.clone(),
        entry: Entry {
            target: path,
            temporary,
            backup,
        },
    }))
}

/// Writes `bytes` to a new file in `dir` named `.NAME.lockward-XXXXXX.tmp` after `target`,
/// created exclusively under a random name, with the permissions of `target` (when it exists;
/// else the umask's), synced so that a rename publishes complete contents. The file stays when
/// the process is killed; [`recover`] finds it by its name.
fn write_temporary(dir: &Path, target: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let name = target
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy());
    let prefix = format!(".{name}.lockward-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    let umask_mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o666);
    #[cfg(unix)]
    builder.permissions(umask_mode);
    let mut file = builder.tempfile_in(dir)?;
    file.write_all(bytes)?;
    if let Ok(metadata) = std::fs::metadata(target) {
        file.as_file().set_permissions(metadata.permissions())?;
        keep_owner(file.as_file(), &metadata)?;
    }
    file.as_file().sync_all()?;
    let (_, path) = file.keep().map_err(|error| error.error)?;
    Ok(path)
}

/// Gives `file` the owner and group of the file it replaces (`take` run as root in a user's
/// checkout left the user's files owned by root). Only root may give a file away; another user
/// keeps what it may: the group, when it is one of theirs. A file it cannot give its owner back
/// stays theirs, as a plain write would leave it.
#[cfg(unix)]
fn keep_owner(file: &File, original: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    let current = file.metadata()?;
    if (current.uid(), current.gid()) == (original.uid(), original.gid()) {
        return Ok(());
    }
    match std::os::unix::fs::fchown(file, Some(original.uid()), Some(original.gid())) {
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => {
            let _ = std::os::unix::fs::fchown(file, None, Some(original.gid()));
            Ok(())
        }
        other => other,
    }
}

#[cfg(not(unix))]
fn keep_owner(_file: &File, _original: &std::fs::Metadata) -> std::io::Result<()> {
    Ok(())
}

/// Writes `journal` to `path` through a temporary file and a rename, synced, so that the
/// journal on disk is always a whole one.
fn publish(path: &Path, journal: &Journal) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let bytes = serde_json::to_vec(&journal.map_paths(|path| {
        path.strip_prefix(dir)
            .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
    }))
    .context("cannot encode the journal")?;
    let temporary = write_temporary(dir, path, &bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if let Err(error) = std::fs::rename(&temporary, path) {
        let _ = std::fs::remove_file(&temporary);
        return Err(error).with_context(|| format!("cannot write {}", path.display()));
    }
    sync_parent(path);
    Ok(())
}

/// Applies `journal` (forward or back), then removes it. Every step can be repeated: a run
/// killed while finishing is finished by the next one. Rolling back the creation of a file
/// removes it only when `removable` says it may.
fn finish(path: &Path, journal: &Journal, removable: &dyn Fn(&Path) -> bool) -> anyhow::Result<()> {
    let gone = |result: std::io::Result<()>, what: &Path| match result {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(error).with_context(|| format!("cannot finish the change of {}", what.display()))
        }
        _ => Ok(()),
    };
    for entry in &journal.files {
        match journal.state {
            State::Commit => {
                if entry.temporary.symlink_metadata().is_ok() {
                    std::fs::rename(&entry.temporary, &entry.target)
                        .with_context(|| format!("cannot replace {}", entry.target.display()))?;
                }
            }
            State::Rollback => {
                match &entry.backup {
                    Some(backup) if backup.symlink_metadata().is_ok() => {
                        std::fs::rename(backup, &entry.target).with_context(|| {
                            format!("cannot put back {}", entry.target.display())
                        })?;
                    }
                    // The file did not exist: it exists now only if the rename happened.
                    None if entry.temporary.symlink_metadata().is_err()
                        && removable(&entry.target) =>
                    {
                        gone(std::fs::remove_file(&entry.target), &entry.target)?;
                    }
                    // Put back already, or never replaced.
                    _ => {}
                }
                gone(std::fs::remove_file(&entry.temporary), &entry.target)?;
            }
        }
    }
    for entry in &journal.files {
        sync_parent(&entry.target);
        if let Some(backup) = &entry.backup {
            gone(std::fs::remove_file(backup), &entry.target)?;
        }
    }
    gone(std::fs::remove_file(path), path)?;
    sync_parent(path);
    Ok(())
}

fn discard(staged: &[Staged]) {
    for one in staged {
        let _ = std::fs::remove_file(&one.entry.temporary);
        if let Some(backup) = &one.entry.backup {
            let _ = std::fs::remove_file(backup);
        }
    }
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

#[cfg(unix)]
fn open_lock_target(dir: &Path) -> std::io::Result<File> {
    File::open(dir)
}

#[cfg(not(unix))]
fn open_lock_target(dir: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lockward.lock"))
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

    fn lock(dir: &Path) -> ProjectLock {
        ProjectLock::acquire(&dir.join("lockward.toml")).unwrap()
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
        let written = lock(dir.path())
            .write_all(&[
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
        let error = lock(dir.path())
            .commit(
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
    fn a_run_killed_between_its_renames_is_completed_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lockward.toml"), "old registry").unwrap();
        std::fs::write(dir.path().join("locks.py"), "old constants").unwrap();
        let held = lock(dir.path());
        // A panic out of the second rename leaves the disk as a kill there would.
        let mut calls = 0;
        let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            held.commit(
                &[
                    change(dir.path(), "lockward.toml", "new registry"),
                    change(dir.path(), "locks.py", "new constants"),
                ],
                |from, to| {
                    calls += 1;
                    assert!(calls < 2, "killed");
                    std::fs::rename(from, to)
                },
            )
        }));
        assert!(killed.is_err());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("locks.py")).unwrap(),
            "old constants"
        );
        drop(held);

        recover(&dir.path().join("lockward.toml"), &[], None).unwrap();

        assert_eq!(
            std::fs::read_to_string(dir.path().join("lockward.toml")).unwrap(),
            "new registry"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("locks.py")).unwrap(),
            "new constants"
        );
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }

    #[test]
    fn a_project_moved_after_a_kill_is_finished_where_it_now_is() {
        let outer = tempfile::tempdir().unwrap();
        let before = outer.path().join("before");
        std::fs::create_dir_all(before.join("src")).unwrap();
        std::fs::write(before.join("lockward.toml"), "old registry").unwrap();
        std::fs::write(before.join("src/locks.py"), "old constants").unwrap();
        let held = lock(&before);
        let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            held.commit(
                &[
                    change(&before, "lockward.toml", "new registry"),
                    change(&before, "src/locks.py", "new constants"),
                ],
                |_, _| panic!("killed before the first rename"),
            )
        }));
        assert!(killed.is_err());
        drop(held);
        let after = outer.path().join("after");
        std::fs::rename(&before, &after).unwrap();

        recover(
            &after.join("lockward.toml"),
            &[after.join("src/locks.py")],
            None,
        )
        .unwrap();

        assert_eq!(
            std::fs::read_to_string(after.join("lockward.toml")).unwrap(),
            "new registry"
        );
        assert_eq!(
            std::fs::read_to_string(after.join("src/locks.py")).unwrap(),
            "new constants"
        );
        assert!(leftovers(&after).is_empty(), "{:?}", leftovers(&after));
        assert!(leftovers(&after.join("src")).is_empty());
    }

    #[test]
    fn a_rollback_killed_midway_is_rolled_back_by_the_next_run() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lockward.toml"), "old registry").unwrap();
        let held = lock(dir.path());
        let staged: Vec<Staged> = [
            change(dir.path(), "lockward.toml", "new registry"),
            change(dir.path(), "page.md", "new page"),
        ]
        .iter()
        .map(|change| stage(change).unwrap().unwrap())
        .collect();
        // Both renames happened, then one failed to be undone: the journal says "roll back".
        for one in &staged {
            std::fs::rename(&one.entry.temporary, &one.entry.target).unwrap();
        }
        let journal = Journal {
            state: State::Rollback,
            files: staged.iter().map(|one| one.entry.clone()).collect(),
        };
        publish(&dir.path().join(JOURNAL), &journal).unwrap();

        let replayed = recover(
            &dir.path().join("lockward.toml"),
            &[dir.path().join("page.md")],
            Some(&held),
        )
        .unwrap();

        assert!(replayed);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lockward.toml")).unwrap(),
            "old registry"
        );
        assert!(!dir.path().join("page.md").exists());
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }

    #[test]
    fn a_journal_planted_in_the_tree_moves_and_removes_nothing_outside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lockward.toml"), "registry").unwrap();
        std::fs::write(outside.path().join("secret"), "secret").unwrap();
        std::fs::write(outside.path().join("victim"), "victim").unwrap();
        let registry = dir.path().join("lockward.toml");
        // A journal that would move a file from elsewhere into the tree.
        let moving = Journal {
            state: State::Commit,
            files: vec![Entry {
                target: dir.path().join("leak"),
                temporary: outside.path().join("secret"),
                backup: None,
            }],
        };
        publish(&dir.path().join(JOURNAL), &moving).unwrap();
        let error = recover(&registry, &[], None).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("which lockward never writes there"),
            "{error}"
        );
        assert!(outside.path().join("secret").exists());
        assert!(!dir.path().join("leak").exists());

        // A journal that would "roll back the creation" of a file that is not the project's.
        let removing = Journal {
            state: State::Rollback,
            files: vec![Entry {
                target: outside.path().join("victim"),
                temporary: outside.path().join(".victim.lockward-gone.tmp"),
                backup: None,
            }],
        };
        publish(&dir.path().join(JOURNAL), &removing).unwrap();
        recover(&registry, &[], None).unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path().join("victim")).unwrap(),
            "victim"
        );
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn temporary_files_of_a_run_killed_before_its_journal_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("lockward.toml"), "registry").unwrap();
        std::fs::write(dir.path().join(".lockward.toml.lockward-4242.tmp"), "half").unwrap();
        std::fs::write(dir.path().join("docs/.page.md.lockward-x1y2z3.tmp"), "half").unwrap();
        std::fs::write(dir.path().join("docs/.keep"), "").unwrap();

        recover(
            &dir.path().join("lockward.toml"),
            &[dir.path().join("docs/page.md")],
            None,
        )
        .unwrap();

        assert!(leftovers(dir.path()).is_empty());
        assert!(leftovers(&dir.path().join("docs")).is_empty());
        assert!(dir.path().join("docs/.keep").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("lockward.toml")).unwrap(),
            "registry"
        );
    }

    #[test]
    fn two_changes_of_one_file_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lockward.toml"), "registry").unwrap();
        let error = lock(dir.path())
            .write_all(&[
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
        let error = lock(dir.path())
            .write_all(&[
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
        let written = lock(dir.path())
            .write_all(&[change(dir.path(), "lockward.toml", "new")])
            .unwrap();
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
        let written = lock(dir.path())
            .write_all(&[change(dir.path(), "docs/locks.md", "page")])
            .unwrap();
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
