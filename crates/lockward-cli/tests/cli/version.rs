//! `lockward --version`: the version, and the commit when built from a checkout.

use std::process::Command;

use crate::{TestProject, repo_root};

/// `git ARGS` in the repository this test was built from; `None` when it is not a git checkout
/// (built from a package) or git is missing.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(repo_root())
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    output.status.success().then(|| {
        String::from_utf8(output.stdout)
            .expect("UTF-8")
            .trim()
            .to_owned()
    })
}

#[test]
fn version_names_the_commit_the_binary_was_built_from() {
    let run = TestProject::harbor().run(&["--version"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let version = env!("CARGO_PKG_VERSION");
    let line = run
        .stdout
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("not one line: {:?}", run.stdout));
    let rest = line
        .strip_prefix(&format!("lockward {version}"))
        .unwrap_or_else(|| panic!("not `lockward {version}...`: {line}"));
    let Some(head) = git(&["rev-parse", "HEAD"]) else {
        assert_eq!(rest, "", "built outside a checkout, yet: {line}");
        return;
    };
    let commit = rest
        .strip_prefix(" (")
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("built from a checkout, yet no `(commit)`: {line}"));
    let hash = commit.strip_suffix("-dirty").unwrap_or(commit);
    assert!(
        hash.len() >= 7 && hash.bytes().all(|byte| byte.is_ascii_hexdigit()),
        "not a short hash: {line}"
    );
    assert!(head.starts_with(hash), "{line}, but HEAD is {head}");
}

#[test]
fn every_command_reports_the_same_version() {
    let project = TestProject::harbor();
    let top = project.run(&["--version"]).stdout;
    let check = project.run(&["check", "--version"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert_eq!(
        check.stdout,
        top.replacen("lockward ", "lockward-check ", 1)
    );
}
