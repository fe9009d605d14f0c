//! `lockward retire`: refuses while the id is in use, rewrites only its entry, re-renders the page.

use crate::TestProject;

const HARBOR_CONSTANTS: &str = "crates/harbor-core/src/locks.rs";

#[test]
fn retire_refuses_while_core_still_defines_the_constant_then_force_retires() {
    let project = TestProject::harbor();
    let before = project.read("lockward.toml");

    let run = project.run(&[
        "retire",
        "1_001_006",
        "--reason",
        "reindexing moved to the search service",
    ]);

    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .contains("id 1_001_006 (ADVISORY_LOCK_SEARCH_REINDEX) is still in use")
            && run.stderr.contains(
                "crates/harbor-core/src/locks.rs:13: defines ADVISORY_LOCK_SEARCH_REINDEX"
            )
            && run.stderr.contains("--force"),
        "{}",
        run.stderr
    );
    assert_eq!(project.read("lockward.toml"), before);

    let run = project.run(&[
        "retire",
        "1_001_006",
        "--reason",
        "reindexing moved to the search service",
        "--force",
    ]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "1_001_006\n");
    assert!(
        run.stderr.contains("warning: retiring id 1_001_006"),
        "{}",
        run.stderr
    );
    assert_eq!(
        project.read("lockward.toml"),
        before.replace(
            "id = 1_001_006\n",
            "id = 1_001_006\nretired = \"reindexing moved to the search service\"\n"
        )
    );
    let page = project.read("docs/advisory-locks.md");
    assert!(page.contains("| `1_001_006` | `ADVISORY_LOCK_SEARCH_REINDEX` | retired | retired: reindexing moved to the search service |"), "{page}");
    assert_eq!(project.run(&["render", "--check"]).code, 0);
}

#[test]
fn retire_succeeds_once_the_constant_is_gone_and_keeps_the_name_taken() {
    let project = TestProject::harbor();
    project.edit(
        HARBOR_CONSTANTS,
        "/// search reindex\npub const ADVISORY_LOCK_SEARCH_REINDEX: i64 = 1_001_006;\n",
        "",
    );
    // The migration that took the lock by its literal id goes too: nothing uses the id now.
    std::fs::remove_file(project.path().join("migrations/0042_search_reindex.sql")).unwrap();

    let run = project.run(&[
        "retire",
        "ADVISORY_LOCK_SEARCH_REINDEX",
        "--reason",
        "gone",
        "--format",
        "json",
    ]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json(),
        serde_json::json!({
            "id": 1_001_006,
            "literal": "1_001_006",
            "retired": true,
            "written": ["lockward.toml", "docs/advisory-locks.md"],
        })
    );
    assert_eq!(project.run(&["check"]).code, 0);
    // A retired id is never handed out again, and its name stays taken.
    let run = project.run(&["take", "ADVISORY_LOCK_SEARCH_REINDEX", "--worker", "again"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("id 1_001_006 (retired)"),
        "{}",
        run.stderr
    );
    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_SEARCH_REINDEX_V2",
        "--worker",
        "again",
    ]);
    assert_eq!(run.stdout, "1_001_007\n");
}

#[test]
fn retire_refuses_while_any_code_still_uses_the_id_not_only_the_constants_file() {
    let project = TestProject::harbor();
    project.edit(
        HARBOR_CONSTANTS,
        "/// search reindex\npub const ADVISORY_LOCK_SEARCH_REINDEX: i64 = 1_001_006;\n",
        "",
    );
    // The constant is gone, but the migration still takes the lock by its literal id.
    let run = project.run(&["retire", "1_001_006", "--reason", "gone"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "migrations/0042_search_reindex.sql:5: calls pg_try_advisory_xact_lock with the id"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn retire_refuses_a_handover_a_plugin_still_declares() {
    let project = TestProject::harbor();
    let run = project.run(&["retire", "1001002", "--reason", "billing is gone"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("plugins/billing/plugin.toml:")
            && run.stderr.contains("plugin `billing` declares it"),
        "{}",
        run.stderr
    );
}

#[test]
fn retire_rewrites_a_reservation_in_place() {
    let project = TestProject::harbor();
    let before = project.read("lockward.toml");
    let run = project.run(&["retire", "1_001_005", "--reason", "dunning was dropped"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        project.read("lockward.toml"),
        before.replace(
            "id = 1_001_005\nreserved = \"dunning reminders, branch feature/dunning\"\n",
            "id = 1_001_005\nretired = \"dunning was dropped\"\n"
        )
    );
    assert_eq!(project.run(&["check"]).code, 0);
}

#[test]
fn retire_takes_a_negative_id_as_an_id_not_an_option() {
    let project = TestProject::harbor();
    project.edit(
        "lockward.toml",
        "id = 1_001_005\n",
        "id = -5\nreserved = \"a legacy negative key\"\n\n[[lock]]\nid = 1_001_005\n",
    );
    let run = project.run(&["retire", "-5", "--reason", "dropped"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "-5\n"),
        "{}",
        run.stderr
    );
    assert!(
        project
            .read("lockward.toml")
            .contains("id = -5\nretired = \"dropped\"\n\n"),
    );
}

#[test]
fn retire_refuses_unknown_and_already_retired_ids_with_exit_2() {
    let project = TestProject::harbor();
    let run = project.run(&["retire", "1_001_777", "--reason", "x"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("`1_001_777` is not registered"),
        "{}",
        run.stderr
    );

    let run = project.run(&["retire", "1_001_003", "--reason", "x"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("id 1_001_003 is already retired: merged into the invoice rollup"),
        "{}",
        run.stderr
    );

    let run = project.run(&["retire", "1_001_005", "--reason", ""]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("the reason must not be empty"),
        "{}",
        run.stderr
    );
}

#[test]
fn retire_dry_run_writes_nothing() {
    let project = TestProject::harbor();
    let before = project.read("lockward.toml");
    let run = project.run(&["retire", "1_001_005", "--reason", "dropped", "--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "-reserved = \"dunning reminders, branch feature/dunning\"\n+retired = \"dropped\"\n"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(project.read("lockward.toml"), before);
}

/// A lock taken by name is in use while the code takes it by that name (issue 19): `retire`
/// names the call; once it is gone, the named entry is retired at its key.
#[test]
fn retire_refuses_a_named_lock_the_code_still_takes_by_name() {
    let project = TestProject::harbor();
    project.write(
        "services/api/search.py",
        "from django_pglocks import advisory_lock\n\n\ndef reindex():\n    with advisory_lock(\"reindex\"):\n        pass\n",
    );
    let take = |worker: &str| {
        project.run(&[
            "take",
            "--name",
            "reindex",
            "--hash",
            "django-pglocks",
            "--worker",
            worker,
        ])
    };
    let taken = take("search reindex");
    assert_eq!(taken.code, 0, "{}", taken.stderr);
    let run = project.run(&["retire", "-118288247", "--reason", "gone"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("services/api/search.py:5: takes it by name, \"reindex\" (django-pglocks)"),
        "{}",
        run.stderr
    );
    project.write("services/api/search.py", "");
    let run = project.run(&["retire", "-118288247", "--reason", "search moved out"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let registry = project.read("lockward.toml");
    // The name and its library stay as the record of what the key was.
    assert!(
        registry.ends_with("[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nretired = \"search moved out\"\nworker = \"search reindex\"\n"),
        "{registry}"
    );
    // A retired key is never handed out again, by name either.
    let again = take("again");
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(
        again.stderr.contains("(retired) already"),
        "{}",
        again.stderr
    );
    assert_eq!(
        project.run(&["check"]).code,
        0,
        "{}",
        project.run(&["check"]).stdout
    );
}
