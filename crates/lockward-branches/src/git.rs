//! The three `git` processes this crate runs: find the repository, list the branches, read one
//! file from each of them.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

/// Why the branches could not be listed.
#[derive(Debug)]
pub(crate) enum GitError {
    /// The directory is not inside a git work tree.
    NotARepository,
    /// `git` could not be started (not installed, not on the `PATH`).
    NotRunnable(String),
    /// `git` ran and failed: the repository cannot be read (dubious ownership, a repository
    /// format it does not know, a broken object store). Its message is kept whole.
    Failed(String),
}

/// `git` could not be started.
fn not_runnable(error: &io::Error) -> GitError {
    GitError::NotRunnable(format!("could not run git: {error}"))
}

/// A git work tree, seen from the registry's directory.
#[derive(Debug)]
pub(crate) struct Repo<'a> {
    dir: &'a Path,
    /// The registry's directory relative to the top of the work tree: empty, or ending in `/`.
    prefix: String,
}

/// A branch other than the one checked out.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    /// `feature/x` for a local branch, `origin/feature/x` for a remote-tracking one.
    pub(crate) name: String,
    /// The commit it points at, as a full object id.
    pub(crate) commit: String,
}

/// What one branch holds at the registry's path.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// The file is there: its blob id and bytes.
    Blob { oid: String, bytes: Vec<u8> },
    /// No file at that path on this branch (it predates the registry, or moved it).
    Missing,
    /// Something other than a file is at that path.
    NotAFile(String),
}

impl<'a> Repo<'a> {
    /// The repository containing `dir`.
    pub(crate) fn discover(dir: &'a Path) -> Result<Self, GitError> {
        let output = git(dir)
            .args(["rev-parse", "--is-inside-work-tree", "--show-prefix"])
            .output()
            .map_err(|error| not_runnable(&error))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut lines = stdout.lines();
        if !output.status.success() || lines.next() != Some("true") {
            let stderr = String::from_utf8_lossy(&output.stderr);
            if stderr.contains("not a git repository") || output.status.success() {
                return Err(GitError::NotARepository);
            }
            return Err(failed("git rev-parse", &output.stderr));
        }
        let prefix = lines.next().unwrap_or_default().to_owned();
        Ok(Self { dir, prefix })
    }

    /// The branch checked out (`None` on a detached HEAD), and every local and remote-tracking
    /// branch except it, sorted by ref name (local branches first). Symbolic refs such as
    /// `origin/HEAD` are left out: they name a branch that is listed anyway.
    pub(crate) fn branches(&self) -> Result<(Option<String>, Vec<Branch>), GitError> {
        let output = git(self.dir)
            .args([
                "for-each-ref",
                "--format=%(HEAD)%00%(symref)%00%(objectname)%00%(refname)",
                "refs/heads",
                "refs/remotes",
            ])
            .output()
            .map_err(|error| not_runnable(&error))?;
        if !output.status.success() {
            return Err(failed("git for-each-ref", &output.stderr));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut current = None;
        let branches = stdout
            .lines()
            .filter_map(|line| {
                let mut fields = line.split('\0');
                let (head, symref, commit, refname) = (
                    fields.next()?,
                    fields.next()?,
                    fields.next()?,
                    fields.next()?,
                );
                let name = refname
                    .strip_prefix("refs/heads/")
                    .or_else(|| refname.strip_prefix("refs/remotes/"))?;
                if head == "*" {
                    current = Some(name.to_owned());
                    return None;
                }
                if !symref.is_empty() {
                    return None;
                }
                Some(Branch {
                    name: name.to_owned(),
                    commit: commit.to_owned(),
                })
            })
            .collect();
        Ok((current, branches))
    }

    /// The registry file as it stood where `branch` forked from the commit checked out (their
    /// merge base); `None` when they share no history or git cannot say.
    pub(crate) fn read_file_at_fork(&self, branch: &Branch, file_name: &str) -> Option<Lookup> {
        let output = git(self.dir)
            .args(["merge-base", "HEAD", &branch.commit])
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        let base = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let fork = Branch {
            name: branch.name.clone(),
            commit: base,
        };
        self.read_file(std::slice::from_ref(&fork), file_name)
            .ok()?
            .pop()
    }

    /// The file `file_name` (in the registry's directory) as it stands on each branch, in order,
    /// read by one `git cat-file --batch` process.
    pub(crate) fn read_file(
        &self,
        branches: &[Branch],
        file_name: &str,
    ) -> Result<Vec<Lookup>, GitError> {
        if branches.is_empty() {
            return Ok(Vec::new());
        }
        let mut child = git(self.dir)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| not_runnable(&error))?;
        let mut requests = String::new();
        for branch in branches {
            let _ = writeln!(requests, "{}:{}{file_name}", branch.commit, self.prefix);
        }
        let mut stdin = child.stdin.take().expect("stdin is piped");
        // Written from another thread: with many branches, git fills its output pipe before it
        // has read all of its input, and both sides would wait for each other.
        let writer = std::thread::spawn(move || stdin.write_all(requests.as_bytes()));
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let lookups = branches
            .iter()
            .map(|_| read_one(&mut stdout))
            .collect::<io::Result<Vec<_>>>();
        drop(stdout);
        let written = writer.join().expect("the writer thread does not panic");
        let output = child
            .wait_with_output()
            .map_err(|error| GitError::Failed(format!("git cat-file: {error}")))?;
        match (lookups, written) {
            (Ok(lookups), Ok(())) if output.status.success() => Ok(lookups),
            (Err(error), _) | (_, Err(error)) => Err(GitError::Failed(format!(
                "git cat-file: {error} {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ))),
            _ => Err(failed("git cat-file", &output.stderr)),
        }
    }
}

/// Reads one answer of `git cat-file --batch`: `<oid> <type> <size>\n<bytes>\n`, or
/// `<name> missing\n`.
fn read_one(stdout: &mut impl BufRead) -> io::Result<Lookup> {
    let mut header = String::new();
    if stdout.read_line(&mut header)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "git stopped answering",
        ));
    }
    let header = header.trim_end_matches('\n');
    if header.ends_with(" missing") || header.ends_with(" ambiguous") {
        return Ok(Lookup::Missing);
    }
    let mut fields = header.split(' ');
    let (Some(oid), Some(kind), Some(size)) = (fields.next(), fields.next(), fields.next()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad header {header:?}"),
        ));
    };
    let size: usize = size.parse().map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidData, format!("bad header {header:?}"))
    })?;
    let mut bytes = vec![0; size + 1];
    stdout.read_exact(&mut bytes)?;
    bytes.pop();
    Ok(if kind == "blob" {
        Lookup::Blob {
            oid: oid.to_owned(),
            bytes,
        }
    } else {
        Lookup::NotAFile(kind.to_owned())
    })
}

/// `git` run in `dir`, with messages in English (they are matched) and no pager or prompt.
///
/// The repository is the one around the registry's directory. Git hooks (a pre-commit hook
/// running `lockward check`) export `GIT_DIR` and friends relative to the hook's directory,
/// which would point elsewhere once `-C` moves; they are not passed on.
fn git(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_PREFIX")
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    command
}

fn failed(what: &str, stderr: &[u8]) -> GitError {
    let stderr = String::from_utf8_lossy(stderr);
    GitError::Failed(format!("{what} failed: {}", stderr.trim()))
}
