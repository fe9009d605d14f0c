//! `lockward render`.

use crate::TestProject;

#[test]
fn render_check_passes_on_the_committed_page_and_fails_on_a_stale_one() {
    let project = TestProject::harbor();
    assert_eq!(project.run(&["render", "--check"]).code, 0);
    project.edit(
        "lockward.toml",
        "worker = \"search reindex\"",
        "worker = \"search reindex v2\"",
    );
    let run = project.run(&["render", "--check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("stale-page"), "{}", run.stdout);
    assert!(
        !project.read("docs/advisory-locks.md").contains("v2"),
        "--check writes nothing"
    );
}

#[test]
fn render_writes_the_page_deterministically() {
    let project = TestProject::harbor();
    let before = project.read("docs/advisory-locks.md");
    std::fs::remove_file(project.path().join("docs/advisory-locks.md")).expect("remove");
    assert_eq!(project.run(&["render"]).code, 0);
    assert_eq!(project.read("docs/advisory-locks.md"), before);
}

#[test]
fn render_output_dash_prints_to_stdout() {
    let project = TestProject::harbor();
    let run = project.run(&["render", "--output", "-"]);
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, project.read("docs/advisory-locks.md"));
    let other = project.path().join("elsewhere.md");
    assert_eq!(
        project
            .run(&["render", "--output", other.to_str().expect("UTF-8")])
            .code,
        0
    );
    assert_eq!(project.read("elsewhere.md"), run.stdout);
    let other = other.to_str().expect("UTF-8");
    assert_eq!(
        project.run(&["render", "--check", "--output", other]).code,
        0
    );
    project.edit("elsewhere.md", "- Core constants: 4", "- Core constants: 3");
    let stale = project.run(&["render", "--check", "--output", other]);
    assert_eq!(stale.code, 1, "{stale:?}");
    assert!(
        stale.stdout.contains("--> elsewhere.md:10:1"),
        "{}",
        stale.stdout
    );
}

/// `--check` compares a file on disk and `--output -` names none: refused as the arguments are
/// validated (exit 2), before the registry is read, and nothing is printed on stdout.
#[test]
fn render_check_with_output_dash_is_refused_before_anything_is_read() {
    let project = TestProject::harbor();
    std::fs::write(project.path().join("lockward.toml"), "not toml [").expect("write");
    let run = project.run(&["render", "--check", "--output", "-"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        "error: `--check` compares a file on disk; `--output -` has none"
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

#[test]
fn render_without_a_page_needs_an_output() {
    let project = TestProject::harbor();
    project.edit("lockward.toml", "page = \"docs/advisory-locks.md\"\n", "");
    let run = project.run(&["render"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--output"), "{}", run.stderr);
}

#[test]
fn render_never_writes_the_page_over_the_registry_or_the_constants_file() {
    let project = TestProject::harbor();
    let before = project.read("lockward.toml");
    let run = project.run(&["render", "--output", "lockward.toml"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("refusing to write the page over"),
        "{}",
        run.stderr
    );
    assert_eq!(project.read("lockward.toml"), before);
    let run = project.run(&["render", "--output", "crates/harbor-core/src/locks.rs"]);
    assert_eq!(run.code, 2, "{run:?}");
}
