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

/// The build script itself, to drive its `commit` on a repository of the test's own.
#[allow(dead_code)]
#[path = "../../build.rs"]
mod build_script;

/// `--version` was never checked to say `-dirty`: the build script's `commit` on a repository
/// holding a copy of it, clean, with a tracked file changed, and with only an untracked one.
#[test]
fn the_version_says_dirty_when_a_tracked_file_differs_from_the_commit() {
    let repo = tempfile::tempdir().expect("temp dir");
    let dir = repo.path();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs"),
        dir.join("build.rs"),
    )
    .expect("copy build.rs");
    std::fs::write(dir.join("lib.rs"), "// a source\n").unwrap();
    git(&["init", "-q"]);
    git(&["add", "build.rs", "lib.rs"]);
    git(&["commit", "-q", "-m", "first"]);
    let clean = build_script::commit(dir).expect("a checkout git can read");
    assert!(
        clean.len() >= 7 && !clean.ends_with("-dirty"),
        "clean: {clean}"
    );
    std::fs::write(dir.join("scratch.txt"), "not tracked\n").unwrap();
    assert_eq!(
        build_script::commit(dir).as_deref(),
        Some(clean.as_str()),
        "an untracked file leaves it clean"
    );
    std::fs::write(dir.join("lib.rs"), "// changed\n").unwrap();
    assert_eq!(
        build_script::commit(dir),
        Some(format!("{clean}-dirty")),
        "a changed tracked file makes it dirty"
    );
}
