use lockward_registry::{Code, Id, KeyShape, Reservation, Severity, Source};
use tempfile::TempDir;

use crate::{BASE, Repo, constant, current, git};

fn reserved(id: i64, literal: &str, name: &str, worker: &str, branch: &str) -> Reservation {
    Reservation {
        id: Id::new(id, literal),
        reason: format!("{name} ({worker}) on branch {branch}"),
        constant: Some(name.to_owned()),
        worker: Some(worker.to_owned()),
        key: KeyShape::Exact,
        branch: branch.to_owned(),
    }
}

fn literals(locks: &[Reservation]) -> Vec<&str> {
    locks.iter().map(|lock| lock.id.literal()).collect()
}

#[test]
fn ids_taken_on_local_branches_are_reserved_with_the_branch_as_source() {
    let repo = Repo::new();
    repo.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );
    repo.branch(
        "feature/export",
        &constant("0xF4630", "ADVISORY_LOCK_EXPORT", "export"),
    );

    let found = repo.read();

    assert_eq!(found.findings, []);
    assert_eq!(found.branches_read, 2);
    assert_eq!(
        found.locks,
        [
            reserved(
                1_001_002,
                "1_001_002",
                "ADVISORY_LOCK_DUNNING",
                "dunning",
                "feature/dunning"
            ),
            reserved(
                0xF_4630,
                "0xF4630",
                "ADVISORY_LOCK_EXPORT",
                "export",
                "feature/export"
            ),
        ]
    );
    assert_eq!(literals(&found.locks), ["1_001_002", "0xF4630"]);
}

#[test]
fn next_free_id_skips_ids_reserved_by_branches() {
    let repo = Repo::new();
    repo.branch(
        "feature/dunning",
        &constant("1_001_005", "ADVISORY_LOCK_DUNNING", "dunning"),
    );
    let mut registry = repo.current();
    assert_eq!(registry.next_free_id([]).unwrap().literal(), "1_001_002");

    registry.add_reservations(repo.read().locks);

    assert_eq!(registry.next_free_id([]).unwrap().literal(), "1_001_006");
    assert_eq!(
        *registry.lock(1_001_005).unwrap().source(),
        Source::Branch("feature/dunning".into())
    );
}

#[test]
fn ids_already_in_the_current_registry_are_not_reserved_again() {
    let repo = Repo::new();
    repo.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );
    repo.git(&["merge", "--quiet", "--no-edit", "feature/dunning"]);

    let found = repo.read();

    assert_eq!(found.branches_read, 1);
    assert_eq!(found.locks, []);
    assert_eq!(found.findings, []);
}

#[test]
fn a_repository_with_no_other_branch_reserves_nothing() {
    let repo = Repo::new();
    repo.take(&constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"));

    let found = repo.read();

    assert_eq!(found.branches_read, 0);
    assert_eq!(found.locks, []);
    assert_eq!(found.findings, []);
}

#[test]
fn remote_tracking_branches_of_a_clone_reserve_their_ids() {
    let origin = Repo::new();
    origin.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );
    let clone_dir = TempDir::new().unwrap();
    let clone = clone_dir.path().join("clone");
    git(
        clone_dir.path(),
        &[
            "clone",
            "--quiet",
            origin.path().to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let registry_path = clone.join("lockward.toml");

    let found = lockward_branches::read(&registry_path, &current(&registry_path));

    // origin/main and origin/feature/dunning; origin/HEAD is a symbolic ref to origin/main.
    assert_eq!(found.branches_read, 2);
    assert_eq!(found.findings, []);
    assert_eq!(
        found.locks,
        [reserved(
            1_001_002,
            "1_001_002",
            "ADVISORY_LOCK_DUNNING",
            "dunning",
            "origin/feature/dunning"
        )]
    );
}

#[test]
fn a_local_branch_is_named_before_its_remote_tracking_copy() {
    let origin = Repo::new();
    origin.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );
    let clone_dir = TempDir::new().unwrap();
    let clone = clone_dir.path().join("clone");
    git(
        clone_dir.path(),
        &[
            "clone",
            "--quiet",
            origin.path().to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    git(
        &clone,
        &[
            "branch",
            "--quiet",
            "feature/dunning",
            "origin/feature/dunning",
        ],
    );
    let registry_path = clone.join("lockward.toml");

    let found = lockward_branches::read(&registry_path, &current(&registry_path));

    assert_eq!(found.findings, []);
    assert_eq!(found.locks.len(), 1);
    assert_eq!(found.locks[0].branch, "feature/dunning");
}

/// A label as a reader checks it: path, line, column, source line, message.
type Shown<'a> = (
    &'a str,
    Option<usize>,
    Option<usize>,
    Option<&'a str>,
    &'a str,
);

#[test]
fn two_branches_taking_one_id_for_different_constants_is_an_error_naming_both() {
    let repo = Repo::new();
    repo.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );
    repo.branch(
        "feature/export",
        &constant("1_001_002", "ADVISORY_LOCK_EXPORT", "export"),
    );

    let found = repo.read();

    assert_eq!(found.findings.len(), 1, "{:#?}", found.findings);
    let finding = &found.findings[0];
    assert_eq!(finding.code, Code::BranchCollision);
    assert_eq!(finding.severity, Severity::Error);
    assert_eq!(finding.path, "lockward.toml");
    assert_eq!(
        finding.message,
        "id 1_001_002 is taken by two branches for different constants: ADVISORY_LOCK_DUNNING \
         on branch feature/dunning and ADVISORY_LOCK_EXPORT on branch feature/export"
    );
    let labels: Vec<Shown> = finding
        .labels
        .iter()
        .map(|label| {
            (
                label.path.as_str(),
                label.line(),
                label.column(),
                label.source_line(),
                label.message.as_str(),
            )
        })
        .collect();
    let line = BASE.lines().count() + 3;
    assert_eq!(
        labels,
        [
            (
                "feature/dunning:lockward.toml",
                Some(line),
                Some(6),
                Some("id = 1_001_002"),
                "taken for ADVISORY_LOCK_DUNNING on branch feature/dunning"
            ),
            (
                "feature/export:lockward.toml",
                Some(line),
                Some(6),
                Some("id = 1_001_002"),
                "taken for ADVISORY_LOCK_EXPORT on branch feature/export"
            ),
        ]
    );
    // The id stays reserved: whichever branch lands first keeps it.
    assert_eq!(literals(&found.locks), ["1_001_002"]);
}

#[test]
fn the_work_tree_and_a_branch_taking_one_id_for_different_constants_collide() {
    let repo = Repo::new();
    repo.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );
    repo.take(&constant("1_001_002", "ADVISORY_LOCK_EXPORT", "export"));

    let found = repo.read();

    assert_eq!(found.findings.len(), 1, "{:#?}", found.findings);
    let finding = &found.findings[0];
    assert_eq!(finding.code, Code::BranchCollision);
    assert_eq!(
        finding.message,
        "id 1_001_002 is taken by two branches for different constants: ADVISORY_LOCK_EXPORT \
         on branch main (this work tree) and ADVISORY_LOCK_DUNNING on branch feature/dunning"
    );
    let paths: Vec<&str> = finding.labels.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["lockward.toml", "feature/dunning:lockward.toml"]);
    // The id is this registry's: nothing is reserved for it.
    assert_eq!(literals(&found.locks), Vec::<&str>::new());
}

#[test]
fn an_entry_changed_on_a_branch_after_it_forked_is_no_collision() {
    let repo = Repo::new();
    repo.take(&constant("1_001_002", "ADVISORY_LOCK_EXPORT", "export"));
    repo.git(&["checkout", "--quiet", "-b", "feature/rename", "main"]);
    let text = std::fs::read_to_string(repo.registry_path()).unwrap();
    repo.write_registry(&text.replace("ADVISORY_LOCK_EXPORT", "ADVISORY_LOCK_NIGHTLY_CSV"));
    repo.commit("rename");
    repo.git(&["checkout", "--quiet", "main"]);

    let found = repo.read();

    assert_eq!(found.findings, []);
}

#[test]
fn two_branches_taking_one_id_for_the_same_constant_are_fine() {
    let repo = Repo::new();
    let entry = constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning");
    repo.branch("feature/dunning", &entry);
    repo.branch("feature/dunning-rebased", &entry);

    let found = repo.read();

    assert_eq!(found.findings, []);
    assert_eq!(
        found.locks,
        [reserved(
            1_001_002,
            "1_001_002",
            "ADVISORY_LOCK_DUNNING",
            "dunning",
            "feature/dunning"
        )]
    );
}

#[test]
fn a_branch_whose_registry_does_not_parse_is_a_warning_naming_the_branch() {
    let repo = Repo::new();
    repo.branch(
        "feature/broken",
        "\n[[lock]]\nid = 1_001_003\nconstant = ADVISORY_LOCK_BROKEN\n",
    );
    repo.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );

    let found = repo.read();

    assert_eq!(found.findings.len(), 1, "{:#?}", found.findings);
    let finding = &found.findings[0];
    assert_eq!(finding.code, Code::BranchRegistryUnreadable);
    assert_eq!(finding.severity, Severity::Warning);
    assert_eq!(
        finding.message,
        "the registry on branch feature/broken does not parse (1 error in it); the ids it \
         takes are not known here, and `lockward take` refuses to pick one"
    );
    assert!(found.unreadable.is_some(), "take must not pick an id");
    assert_eq!(finding.labels.len(), 1);
    assert_eq!(finding.labels[0].path, "feature/broken:lockward.toml");
    assert_eq!(finding.labels[0].line(), Some(BASE.lines().count() + 4));
    // The other branches still count.
    assert_eq!(literals(&found.locks), ["1_001_002"]);
}

#[test]
fn a_branch_whose_registry_is_not_utf8_is_a_warning_naming_the_branch() {
    let repo = Repo::new();
    repo.git(&["checkout", "--quiet", "-b", "feature/latin1", "main"]);
    let mut bytes = BASE.as_bytes().to_vec();
    bytes.extend_from_slice(b"# caf\xE9\n");
    std::fs::write(repo.registry_path(), bytes).unwrap();
    repo.commit("latin-1");
    repo.git(&["checkout", "--quiet", "main"]);

    let found = repo.read();

    assert_eq!(found.findings.len(), 1);
    assert_eq!(found.findings[0].code, Code::BranchRegistryUnreadable);
    assert!(
        found.findings[0]
            .message
            .contains("feature/latin1 does not parse (it is not UTF-8)")
    );
    assert_eq!(found.locks, []);
}

#[test]
fn a_branch_registry_that_breaks_a_rule_still_reserves_the_ids_it_records() {
    // Written before a rule existed (here: a project name with a space), the branch's registry
    // no longer validates; its ids must stay taken, or `take` would hand them out again.
    let repo = Repo::new();
    let text = BASE.replacen("name = \"harbor\"", "name = \"my harbor\"", 1)
        + &constant("1_001_007", "ADVISORY_LOCK_OLD", "old");
    assert!(text.contains("my harbor"), "the fixture names its project");
    repo.git(&["checkout", "--quiet", "-b", "feature/old", "main"]);
    std::fs::write(repo.registry_path(), text).unwrap();
    repo.commit("an old registry");
    repo.git(&["checkout", "--quiet", "main"]);

    let found = repo.read();

    assert_eq!(found.findings.len(), 1, "{:#?}", found.findings);
    assert_eq!(found.findings[0].code, Code::BranchRegistryUnreadable);
    assert!(
        found.findings[0].message.contains("still reserved here"),
        "{}",
        found.findings[0].message
    );
    assert_eq!(literals(&found.locks), ["1_001_007"]);
    assert_eq!(found.unreadable, None, "its ids are known: take may go on");
}

#[test]
fn a_detached_head_counts_every_local_branch_as_another_branch() {
    let repo = Repo::new();
    let first = repo.git(&["rev-parse", "HEAD"]);
    repo.branch(
        "feature/export",
        &constant("1_001_003", "ADVISORY_LOCK_EXPORT", "export"),
    );
    repo.take(&constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"));
    repo.git(&["checkout", "--quiet", "--detach", first.trim()]);

    let found = repo.read();

    assert_eq!(found.findings, []);
    assert_eq!(found.branches_read, 2);
    assert_eq!(
        found.locks,
        [
            reserved(
                1_001_002,
                "1_001_002",
                "ADVISORY_LOCK_DUNNING",
                "dunning",
                "main"
            ),
            reserved(
                1_001_003,
                "1_001_003",
                "ADVISORY_LOCK_EXPORT",
                "export",
                "feature/export"
            ),
        ]
    );
}

#[test]
fn a_branch_without_the_registry_file_is_passed_over() {
    let repo = Repo::new();
    repo.git(&["checkout", "--quiet", "--orphan", "gh-pages"]);
    repo.git(&["rm", "--quiet", "-r", "--force", "."]);
    std::fs::write(repo.path().join("index.html"), "<p>docs</p>\n").unwrap();
    repo.commit("pages");
    repo.git(&["checkout", "--quiet", "main"]);

    let found = repo.read();

    assert_eq!(found.branches_read, 1);
    assert_eq!(found.locks, []);
    assert_eq!(found.findings, []);
}

#[test]
fn a_registry_below_the_top_of_the_work_tree_is_read_at_the_same_path_on_branches() {
    let repo = Repo::with_registry_in("services/harbor");
    repo.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );

    let found = repo.read();

    assert_eq!(found.findings, []);
    assert_eq!(literals(&found.locks), ["1_001_002"]);
}

#[test]
fn a_handover_on_a_branch_is_reserved_and_collides_with_a_constant() {
    let repo = Repo::new();
    repo.branch(
        "feature/billing",
        "\n[[lock]]\nid = 1_001_002\nplugin = \"billing\"\n",
    );
    repo.branch(
        "feature/dunning",
        &constant("1_001_002", "ADVISORY_LOCK_DUNNING", "dunning"),
    );

    let found = repo.read();

    assert_eq!(found.findings.len(), 1);
    assert_eq!(
        found.findings[0].message,
        "id 1_001_002 is taken by two branches for different constants: a handover to plugin \
         billing on branch feature/billing and ADVISORY_LOCK_DUNNING on branch feature/dunning"
    );
    assert_eq!(
        found.locks[0].reason,
        "handover to plugin billing on branch feature/billing"
    );
}

#[test]
fn a_directory_that_is_not_a_repository_is_skipped_with_a_note() {
    let dir = TempDir::new().unwrap();
    let registry_path = dir.path().join("lockward.toml");
    std::fs::write(&registry_path, BASE).unwrap();

    let found = lockward_branches::read(&registry_path, &current(&registry_path));

    assert_eq!(found.locks, []);
    assert_eq!(found.branches_read, 0);
    assert_eq!(found.findings.len(), 1);
    let finding = &found.findings[0];
    assert_eq!(finding.code, Code::NotAGitRepository);
    assert_eq!(finding.severity, Severity::Note);
    assert_eq!(finding.path, "lockward.toml");
    assert!(
        finding.message.starts_with("skipped: not a git repository"),
        "{}",
        finding.message
    );
}
