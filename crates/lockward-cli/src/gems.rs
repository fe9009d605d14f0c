//! Which Ruby gems the project depends on, from its `Gemfile` and `Gemfile.lock` files: `check`
//! warns about ids Que's job ids will reach when the project uses Que.
//!
//! The files are those git tracks or would track (not ignored) anywhere in the project (one
//! `git ls-files` call, no walk of the tree); outside a git repository, those at the registry's
//! directory.

use std::path::Path;
use std::process::Command;

/// The first `Gemfile` or `Gemfile.lock` of the project (relative to `root`, `/`-separated) that
/// names the `que` gem, if any.
pub(crate) fn que_user(root: &Path) -> Option<String> {
    gemfiles(root)
        .into_iter()
        .find(|relative| names_que(&root.join(relative)))
}

/// The gem files git tracks or would track under `root`, else those at `root`.
fn gemfiles(root: &Path) -> Vec<String> {
    let listed = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            ":(glob)**/Gemfile",
            ":(glob)**/Gemfile.lock",
        ])
        .output()
        .ok()
        .filter(|output| output.status.success());
    match listed {
        Some(output) => String::from_utf8_lossy(&output.stdout)
            .split('\0')
            .filter(|path| !path.is_empty())
            .map(str::to_owned)
            .collect(),
        None => ["Gemfile.lock", "Gemfile"]
            .into_iter()
            .filter(|name| root.join(name).is_file())
            .map(str::to_owned)
            .collect(),
    }
}

/// Whether the file names the `que` gem: `gem "que"` in a Gemfile, `    que (2.3.0)` or
/// `  que` in a lockfile's specs or dependencies.
fn names_que(path: &Path) -> bool {
    let Ok(bytes) =
        lockward_registry::file::read_regular(path, lockward_registry::file::MAX_PROJECT_FILE)
    else {
        return false;
    };
    String::from_utf8_lossy(&bytes).lines().any(|line| {
        let trimmed = line.trim();
        let gem = trimmed
            .strip_prefix("gem")
            .filter(|rest| rest.starts_with([' ', '(']))
            .map(|rest| rest.trim_start_matches([' ', '(']));
        match gem {
            Some(rest) => rest.starts_with("\"que\"") || rest.starts_with("'que'"),
            None => {
                line.starts_with(' ')
                    && (trimmed == "que" || trimmed.starts_with("que (") || trimmed == "que!")
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gemfile_or_lockfile_naming_que_is_found_and_queue_gems_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        write(
            "Gemfile",
            "source 'https://rubygems.org'\ngem 'sidekiq'\ngem \"que_scheduler\"\n",
        );
        write("Gemfile.lock", "GEM\n  specs:\n    queue_classic (4.0.0)\n");
        assert_eq!(que_user(dir.path()), None);
        write("Gemfile", "gem 'rails'\ngem 'que', '~> 2.3'\n");
        assert_eq!(que_user(dir.path()).as_deref(), Some("Gemfile"));
        write("Gemfile", "gem 'rails'\n");
        write(
            "Gemfile.lock",
            "GEM\n  specs:\n    que (2.3.0)\n\nDEPENDENCIES\n  que\n",
        );
        assert_eq!(que_user(dir.path()).as_deref(), Some("Gemfile.lock"));
    }

    /// In a git repository, a service's Gemfile deeper in the tree counts (tracked or not), and
    /// an ignored one does not.
    #[test]
    fn in_git_a_gemfile_anywhere_not_ignored_counts() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let output = Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .output()
                .expect("git runs");
            assert!(output.status.success(), "git {args:?}: {output:?}");
        };
        git(&["init", "-q"]);
        std::fs::create_dir_all(dir.path().join("vendor/old")).unwrap();
        std::fs::create_dir_all(dir.path().join("services/jobs")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "vendor/\n").unwrap();
        std::fs::write(dir.path().join("vendor/old/Gemfile"), "gem 'que'\n").unwrap();
        assert_eq!(que_user(dir.path()), None, "an ignored Gemfile");
        std::fs::write(dir.path().join("services/jobs/Gemfile"), "gem \"que\"\n").unwrap();
        assert_eq!(
            que_user(dir.path()).as_deref(),
            Some("services/jobs/Gemfile")
        );
    }
}
