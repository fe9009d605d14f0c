//! Keeping every file lockward reads or writes inside the project.
//!
//! The registry names files by paths relative to its directory (`[core] constants`, `[project]
//! page`, `init --page`), and any of them, or a directory on the way, may be a symlink. A path
//! that is absolute, climbs out with `..`, or goes through a link that points outside would
//! have `render`, `take` or `init` write (and `check` read) a file of someone else's:
//! `docs/advisory-locks.md -> /tmp/victim/page.md` had `render` overwrite the victim.
//!
//! [`Root::resolve`] is the one way from such a path to a file on disk: it walks the path one
//! component at a time from the project's real directory, following each symlink itself (a
//! relative link from where it sits, an absolute one only when it lands inside the project), and
//! never stepping above the root. What comes out is the real path of the file inside the
//! project, links resolved (a file that does not exist yet included), so the writer that gets it
//! has no link left to follow out of the project; what cannot stay inside is refused, naming the
//! link or the component that leaves. The standard library has no `openat2(RESOLVE_BENEATH)`,
//! and the walk is short, so it is written here rather than taken from a crate.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// As many links as Linux follows in one lookup before it gives up with `ELOOP`.
const MAX_LINKS: usize = 40;

/// The project's directory, with every symlink in it resolved.
#[derive(Debug, Clone)]
pub(crate) struct Root {
    real: PathBuf,
}

/// Why a path cannot be used: it would reach outside the project.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Escape {
    /// The path is absolute.
    #[error("`{path}` is absolute: paths in the registry are relative to its directory")]
    Absolute { path: String },
    /// A `..` climbs above the project's directory.
    #[error("`{path}` climbs out of the project's directory with `..`")]
    Climbs { path: String },
    /// A symlink on the way points outside the project.
    #[error(
        "`{path}` goes through the symlink {link}, which points outside the project ({target})"
    )]
    Link {
        path: String,
        link: String,
        target: String,
    },
    /// The links go round in a loop.
    #[error("`{path}`: more than {MAX_LINKS} symlinks on the way (a loop?)")]
    Loop { path: String },
}

impl Root {
    /// The project's directory `dir`, resolved once (a project reached through a link is fine:
    /// inside is inside the directory it is).
    pub(crate) fn new(dir: &Path) -> std::io::Result<Self> {
        Ok(Self {
            real: std::fs::canonicalize(dir)?,
        })
    }

    /// The project's real directory.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.real
    }

    /// The real path, inside the project, of `path` (relative to the project's directory), or
    /// why it would leave the project. Components that do not exist are kept as written.
    pub(crate) fn resolve(&self, path: impl AsRef<Path>) -> Result<PathBuf, Escape> {
        let path = path.as_ref();
        let shown = || path.display().to_string();
        if path.has_root() || path.is_absolute() {
            return Err(Escape::Absolute { path: shown() });
        }
        let mut at = self.real.clone();
        let mut pending: VecDeque<OsString> = VecDeque::new();
        push_front(&mut pending, path);
        let mut links = 0;
        while let Some(part) = pending.pop_front() {
            match part.to_str() {
                Some("" | ".") => continue,
                Some("..") => {
                    if at == self.real {
                        return Err(Escape::Climbs { path: shown() });
                    }
                    at.pop();
                    continue;
                }
                _ => {}
            }
            let next = at.join(&part);
            let Ok(target) = std::fs::read_link(&next) else {
                // Not a link (a file, a directory, or nothing yet): step into it.
                at = next;
                continue;
            };
            links += 1;
            if links > MAX_LINKS {
                return Err(Escape::Loop { path: shown() });
            }
            if target.has_root() {
                // An absolute link is followed only to a place inside the project, which it
                // names through the project's real directory.
                let inside = std::fs::canonicalize(&target)
                    .ok()
                    .and_then(|real| real.strip_prefix(&self.real).ok().map(Path::to_path_buf))
                    .or_else(|| target.strip_prefix(&self.real).ok().map(Path::to_path_buf));
                let Some(inside) = inside else {
                    return Err(Escape::Link {
                        path: shown(),
                        link: self.shown(&next),
                        target: target.display().to_string(),
                    });
                };
                at.clone_from(&self.real);
                push_front(&mut pending, &inside);
            } else {
                // A relative link reads from the directory it sits in; its `..` are checked
                // like any other.
                if climbs_out(&at, &target, &self.real) {
                    return Err(Escape::Link {
                        path: shown(),
                        link: self.shown(&next),
                        target: target.display().to_string(),
                    });
                }
                push_front(&mut pending, &target);
            }
        }
        Ok(at)
    }

    /// `path` (inside the project) as the registry's directory would name it.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.real).map_or_else(
            |_| path.display().to_string(),
            |inside| inside.display().to_string(),
        )
    }
}

/// Puts `path`'s components before the ones still to walk.
fn push_front(pending: &mut VecDeque<OsString>, path: &Path) {
    for component in path.components().rev() {
        match component {
            Component::Normal(name) => pending.push_front(name.to_owned()),
            Component::ParentDir => pending.push_front("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

/// Whether a relative link `target`, read from the directory `at`, climbs above `root`.
fn climbs_out(at: &Path, target: &Path, root: &Path) -> bool {
    let mut depth = at
        .strip_prefix(root)
        .map_or(0, |inside| inside.components().count());
    for component in target.components() {
        match component {
            Component::ParentDir if depth == 0 => return true,
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("project/docs")).expect("dirs");
        let root = Root::new(&dir.path().join("project")).expect("root");
        (dir, root)
    }

    #[test]
    fn plain_and_not_yet_existing_paths_stay_as_written_under_the_root() {
        let (_dir, root) = project();
        assert_eq!(
            root.resolve("docs/page.md").unwrap(),
            root.path().join("docs/page.md")
        );
        assert_eq!(
            root.resolve("./new/dir/../file").unwrap(),
            root.path().join("new/file")
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_are_followed_and_links_out_refused() {
        let (dir, root) = project();
        let outside = dir.path().join("victim");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(outside.join("page.md"), root.path().join("docs/out.md"))
            .unwrap();
        std::os::unix::fs::symlink("../../victim", root.path().join("docs/up")).unwrap();
        std::os::unix::fs::symlink("real.md", root.path().join("docs/in.md")).unwrap();
        std::os::unix::fs::symlink(root.path().join("docs"), root.path().join("abs")).unwrap();
        std::os::unix::fs::symlink("loop", root.path().join("loop")).unwrap();
        assert_eq!(
            root.resolve("docs/in.md").unwrap(),
            root.path().join("docs/real.md")
        );
        assert_eq!(root.resolve("abs/x").unwrap(), root.path().join("docs/x"));
        for (path, escape) in [
            ("docs/out.md", "symlink docs/out.md"),
            ("docs/up/p.md", "symlink docs/up"),
            ("../victim/p.md", "climbs out"),
            ("loop", "a loop"),
        ] {
            let error = root.resolve(path).expect_err(path).to_string();
            assert!(error.contains(escape), "{path}: {error}");
        }
        let absolute = outside.join("p.md");
        assert!(matches!(
            root.resolve(&absolute),
            Err(Escape::Absolute { .. })
        ));
    }
}
