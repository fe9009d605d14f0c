//! `lockward init`: a registry drafted from the code, that `check` passes.

use std::path::PathBuf;

use crate::{Run, TestProject};

/// A copy of the seed-like monorepo fixture (a core constants file in Python, ids in other
/// files and languages, a call-site literal, a SQL literal, two plugins, a dynamic key) in a
/// directory named `seed`, so the drafted project name is stable.
fn seed() -> (TestProject, PathBuf) {
    let project = TestProject::copy_of(&fixture_dir().join("empty"));
    let dir = project.path().join("seed");
    std::fs::create_dir_all(&dir).expect("mkdir");
    crate::copy_dir(&fixture_dir().join("seed"), &dir);
    (project, dir)
}

fn fixture_dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures")
}

const PLUGINS: [&str; 4] = [
    "--plugins",
    "plugins/*/plugin.toml",
    "--plugins",
    "plugins/*/plugin.json",
];

fn init(project: &TestProject, dir: &std::path::Path, extra: &[&str]) -> Run {
    let mut args = vec!["init"];
    args.extend_from_slice(extra);
    project.run_in(dir, &args)
}

fn assert_check_clean(project: &TestProject, dir: &std::path::Path) {
    let check = project.run_in(dir, &["check"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains("check: no errors, no warnings"),
        "{}",
        check.stdout
    );
}

#[test]
fn init_drafts_every_id_of_a_seed_monorepo_and_check_passes_on_it() {
    let (project, dir) = seed();
    let run = init(&project, &dir, &PLUGINS);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let written = std::fs::read_to_string(dir.join("lockward.toml")).expect("written");
    insta::assert_snapshot!(written);
    // Every fixed id of the fixture, each of its kinds.
    for id in [
        "id = 1_001_001",
        "id = 1_001_002",
        "id = 1_001_004",
        "id = 1_001_005",
        "id = 1_001_009",
        "id = 7_200_001",
        "id = 7_300_001",
        "id = 8_675_309",
        "id = 9_001_042",
        // A call of the tree's own wrapper, with a literal key.
        "id = 7_400_001\nsite = \"with_report_lock()\"",
    ] {
        assert!(written.contains(id), "{id} missing:\n{written}");
    }
    // The shipping plugin's id lies outside core's block: it is the manifest's alone.
    assert!(!written.contains("5_550_001") && !written.contains("5550001"));
    assert!(
        run.stdout
            .contains("4 core constants from core/seed/locks.py (block 1_001_000..=1_001_999), 5 externals, 1 handover"),
        "{}",
        run.stdout
    );
    assert_check_clean(&project, &dir);
    let plugins = project.run_in(&dir, &["plugins"]);
    assert_eq!(plugins.code, 0, "{}{}", plugins.stdout, plugins.stderr);
}

#[test]
fn init_prints_the_dynamic_keys_it_left_for_a_person() {
    let (project, dir) = seed();
    let run = init(&project, &dir, &PLUGINS);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("left as dynamic or not read, for a person to look at (1 note):\n  core/seed/jobs.py:26:26: note[dynamic-key]:"),
        "{}",
        run.stdout
    );
}

#[test]
fn init_takes_each_worker_from_the_comment_beside_or_above_the_definition_else_the_name() {
    let (project, dir) = seed();
    assert_eq!(init(&project, &dir, &PLUGINS).code, 0);
    let written = std::fs::read_to_string(dir.join("lockward.toml")).expect("written");
    // Beside: `ADVISORY_LOCK_SEARCH_REINDEX = 1_001_002  # search reindex`.
    assert!(written.contains(
        "constant = \"ADVISORY_LOCK_SEARCH_REINDEX\"\nworker = \"search reindex\"   # from the comment at core/seed/locks.py:5\n"
    ), "{written}");
    // Above: `# The invoice rollup worker.`
    assert!(
        written.contains("worker = \"The invoice rollup worker\""),
        "{written}"
    );
    // Above the call that holds the keyword, three lines up.
    assert!(written.contains(
        "site = \"PeriodicTask(advisory_lock_id=)\"\nworker = \"Refreshes BigQuery write visibility every five minutes\""
    ), "{written}");
    // No comment: the name's words.
    assert!(
        written.contains(
            "worker = \"nightly export\"   # from the name `ADVISORY_LOCK_NIGHTLY_EXPORT`"
        ),
        "{written}"
    );
}

#[test]
fn init_refuses_to_overwrite_a_registry_and_writes_nothing() {
    let project = TestProject::harbor();
    let before = project.read("lockward.toml");
    let run = project.run(&["init"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("lockward.toml: a registry exists already"),
        "{}",
        run.stderr
    );
    assert_eq!(project.read("lockward.toml"), before);
}

#[test]
fn init_dry_run_prints_the_draft_and_writes_nothing() {
    let (project, dir) = seed();
    let run = init(&project, &dir, &["--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("# lockward.toml: the advisory lock ids of seed")
    );
    assert!(run.stderr.contains("dry run: nothing was written"));
    assert!(!dir.join("lockward.toml").exists());
}

#[test]
fn init_says_when_the_plugins_glob_matches_no_manifest() {
    let (project, dir) = seed();
    let run = init(&project, &dir, &["--plugins", "addons/*/plugin.toml"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("--plugins addons/*/plugin.toml: no manifest matches"),
        "{}",
        run.stdout
    );
}

/// Two constants files: `app/locks.py` defines two ids, `legacy/locks.rb` one.
fn two_files() -> TestProject {
    let project = TestProject::copy_of(&fixture_dir().join("empty"));
    project
        .write(
            "app/locks.py",
            "ADVISORY_LOCK_ROLLUP = 2_000_001\nADVISORY_LOCK_EXPORT = 2_000_002\n",
        )
        .write(
            "legacy/locks.rb",
            "module Locks\n  ADVISORY_LOCK_MAILER = 0x6E697374 # mailer\nend\n",
        );
    project
}

#[test]
fn init_picks_the_file_with_the_most_constants_and_constants_overrides_it() {
    let project = two_files();
    let run = project.run(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = project.read("lockward.toml");
    assert!(
        written.contains(
            "constants = \"app/locks.py\"\nblock = { start = 2_000_000, end = 2_000_999 }"
        ),
        "{written}"
    );
    assert!(
        written.contains("id = 0x6E697374\nconstant = \"ADVISORY_LOCK_MAILER\"\nworker = \"mailer\"   # from the comment at legacy/locks.rb:2\ndefined_in = [\"legacy/locks.rb\"]"),
        "{written}"
    );
    assert_check_clean(&project, project.path());

    let project = two_files();
    let run = project.run(&["init", "--constants", "legacy/locks.rb"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = project.read("lockward.toml");
    assert!(
        written.contains(
            "constants = \"legacy/locks.rb\"\nblock = { start = 0x6E697120, end = 0x6E697507 }"
        ),
        "{written}"
    );
    assert!(
        written.contains("defined_in = [\"app/locks.py\"]"),
        "{written}"
    );
    assert_check_clean(&project, project.path());
}

#[test]
fn init_refuses_a_constants_file_it_cannot_use() {
    let project = two_files();
    project.write("db/locks.sql", "SELECT pg_advisory_lock(5);\n");
    for (path, why) in [
        ("nowhere.py", "--constants nowhere.py: no such file"),
        (
            "db/locks.sql",
            "cannot write constants in this file's language",
        ),
    ] {
        let run = project.run(&["init", "--constants", path]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(why), "{}", run.stderr);
    }
    let run = TestProject::copy_of(&fixture_dir().join("empty")).run(&["init"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("pass --constants PATH"),
        "{}",
        run.stderr
    );
}

#[test]
fn init_leaves_an_id_under_two_names_and_a_copied_core_id_for_a_person() {
    let project = two_files();
    project
        .write("app/jobs.py", "ADVISORY_LOCK_EXPORT_AGAIN = 2_000_002\n")
        .write("db/cron.sql", "SELECT pg_advisory_lock(2_000_001);\n");
    let run = project.run(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "`lockward check` will report (2 errors):\n  app/jobs.py:1:1: error[undeclared-site]"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "app/jobs.py:1:1: `ADVISORY_LOCK_EXPORT_AGAIN` = 2000002 is also `ADVISORY_LOCK_EXPORT`"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("db/cron.sql:1:8: core's id 2_000_001 (`ADVISORY_LOCK_ROLLUP`) is written as a literal here; SQL cannot import it"),
        "{}",
        run.stdout
    );
    // Init does not paper over a collision: check reports both.
    let check = project.run(&["check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    for at in ["--> app/jobs.py:1:1", "--> db/cron.sql:1:8"] {
        assert!(check.stdout.contains(at), "{at}: {}", check.stdout);
    }
}

#[test]
fn init_with_page_writes_the_page_too_and_check_passes_on_both() {
    let (project, dir) = seed();
    let mut args = PLUGINS.to_vec();
    args.extend(["--page", "docs/advisory-locks.md"]);
    let run = init(&project, &dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("wrote lockward.toml, docs/advisory-locks.md"),
        "{}",
        run.stderr
    );
    let page = std::fs::read_to_string(dir.join("docs/advisory-locks.md")).expect("page");
    assert!(page.contains("1_001_010"), "the next free id: {page}");
    assert_check_clean(&project, &dir);

    // A page that exists is not overwritten.
    std::fs::remove_file(dir.join("lockward.toml")).expect("rm");
    let run = init(&project, &dir, &args);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("a file is there already"),
        "{}",
        run.stderr
    );
    assert!(!dir.join("lockward.toml").exists());
}

#[test]
fn init_json_reports_the_draft_the_dynamic_keys_and_what_was_written() {
    let (project, dir) = seed();
    let mut args = PLUGINS.to_vec();
    args.extend(["--format", "json"]);
    let run = init(&project, &dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(report["written"], serde_json::json!(["lockward.toml"]));
    assert_eq!(report["constants"], "core/seed/locks.py");
    assert_eq!(
        report["block"],
        serde_json::json!({"start": 1_001_000, "end": 1_001_999})
    );
    assert_eq!(
        (
            &report["constants_registered"],
            &report["externals"],
            &report["handovers"]
        ),
        (
            &serde_json::json!(4),
            &serde_json::json!(5),
            &serde_json::json!(1)
        )
    );
    assert_eq!(report["dynamic"][0]["code"], "dynamic-key");
    assert_eq!(report["dynamic"][0]["path"], "core/seed/jobs.py");
    assert_eq!(report["to_look_at"], serde_json::json!([]));
    assert_eq!(report["findings"], serde_json::json!([]));
}

#[test]
fn init_on_harbor_without_its_registry_drafts_one_check_passes_on() {
    let project = TestProject::harbor();
    std::fs::remove_file(project.path().join("lockward.toml")).expect("rm");
    std::fs::remove_file(project.path().join("docs/advisory-locks.md")).expect("rm");
    let mut args = vec!["init"];
    args.extend(PLUGINS);
    args.extend(["--page", "docs/advisory-locks.md"]);
    let run = project.run(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The SQL literal of a core id is exempted on its line already: nothing to look at.
    assert!(!run.stdout.contains("to look at"), "{}", run.stdout);
    assert!(!run.stdout.contains("will report"), "{}", run.stdout);
    let written = project.read("lockward.toml");
    for entry in [
        "id = 1_001_002\nplugin = \"billing\"",
        "id = 0x6E69_7374\nconstant = \"ADVISORY_LOCK_NIGHTLY_EXPORT\"",
        "defined_in = [\"services/api/catalog.py\", \"services/api/catalog_sync.py\"]",
        "site = \"PeriodicTask(advisory_lock_id=)\"",
        "constant = \"ADVISORY_LOCK_RELOAD_BASE\"\nworker = \"reload instance lock: a family, one key per instance",
    ] {
        assert!(written.contains(entry), "{entry}:\n{written}");
    }
    let check = project.run(&["check", "--format", "json"]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    let summary = &check.json()["summary"];
    // The one warning is harbor's legacy id outside the block, as with its own registry.
    assert_eq!(
        (summary["errors"].as_u64(), summary["warnings"].as_u64()),
        (Some(0), Some(1))
    );
}

#[test]
fn init_gives_one_name_with_two_ids_in_two_files_an_entry_each() {
    let project = two_files();
    project
        .write(
            "services/a.py",
            "_ADVISORY_LOCK_KEY = 8_000_001\n\ndef run(c):\n    c.execute(\"SELECT pg_advisory_lock(%s)\", (_ADVISORY_LOCK_KEY,))\n",
        )
        .write(
            "services/b.py",
            "_ADVISORY_LOCK_KEY = 8_000_002\n\ndef run(c):\n    c.execute(\"SELECT pg_advisory_lock(%s)\", (_ADVISORY_LOCK_KEY,))\n",
        );
    let run = project.run(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = project.read("lockward.toml");
    for (id, file) in [
        ("8_000_001", "services/a.py"),
        ("8_000_002", "services/b.py"),
    ] {
        assert!(
            written.contains(&format!(
                "id = {id}\nconstant = \"_ADVISORY_LOCK_KEY\"\nworker = \"advisory lock key\"   # from the name `_ADVISORY_LOCK_KEY`\ndefined_in = [\"{file}\"]"
            )),
            "{written}"
        );
    }
    assert_check_clean(&project, project.path());
}

#[test]
fn init_names_an_uncommented_call_site_literal_after_what_the_call_is_assigned_to() {
    let project = two_files();
    project.write(
        "jobs/tasks.py",
        "cleanup_uploads = PeriodicTask(\n    cleanup,\n    advisory_lock_id=9_001_080,\n)\n",
    );
    let run = project.run(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = project.read("lockward.toml");
    assert!(
        written.contains(
            "id = 9_001_080\nsite = \"PeriodicTask(advisory_lock_id=)\"\nworker = \"cleanup uploads\"   # from the name `cleanup_uploads`\ndefined_in = [\"jobs/tasks.py\"]"
        ),
        "{written}"
    );
    assert_check_clean(&project, project.path());
}

/// `init --plugins 'plugins/*/plugin.toml'` (the README's walkthrough) missed the shipping
/// plugin's `plugin.json` and drafted its ids as core externals without a hint.
#[test]
fn init_names_a_manifest_no_plugins_pattern_matched_and_the_pattern_that_would() {
    let project = TestProject::harbor();
    std::fs::remove_file(project.path().join("lockward.toml")).unwrap();
    let run = project.run(&["init", "--plugins", "plugins/*/plugin.toml"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains(
            "plugins/shipping/plugin.json reads as plugin `shipping`'s manifest \
             (advisory_lock_ids 7300001, 7300002), but no --plugins pattern matches it"
        ) && said.contains("--plugins 'plugins/*/plugin.json'"),
        "{said}"
    );
    assert!(
        !said.contains("plugins/billing/plugin.toml reads as"),
        "{said}"
    );
}

/// `init` merged `pg_advisory_xact_lock(4242)` and `pg_advisory_xact_lock(4242, job.id)` into one
/// family: they are two locks. The draft registers the one-key lock and says why; `check` then
/// reports the pair call.
#[test]
fn init_keeps_one_key_and_pair_uses_of_an_id_apart_and_says_so() {
    let project = TestProject::copy_of(&fixture_dir().join("empty"));
    project.write("app/locks.py", "ADVISORY_LOCK_REAPER = 1_001_001\n");
    project.write(
        "app/jobs.py",
        "def run(cur, job):\n    cur.execute(\"SELECT pg_advisory_xact_lock(4242)\")\n    cur.execute(\"SELECT pg_advisory_xact_lock(4242, %s)\", (job.id,))\n",
    );
    let run = project.run(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains(
            "id 4242 is taken as one bigint key (app/jobs.py:2) and as the first int4 of a pair \
             (app/jobs.py:3)"
        ),
        "{said}"
    );
    let registry = project.read("lockward.toml");
    assert!(!registry.contains("key = \"family\""), "{registry}");
    let check = project.run(&["check", "--format", "json"]);
    assert!(
        check.stdout.contains("key-shape-mismatch") && check.stdout.contains("\"line\": 3"),
        "{}",
        check.stdout
    );
}

/// A lock the code takes by name is an id like any other (issue 19): `init` drafts it as a named
/// entry, `name` and `hash` as the code has them and no `id`, and `check` passes on the draft.
/// Two names on one key are left to `check`, with a note.
#[test]
fn init_drafts_locks_taken_by_name_as_named_entries() {
    let project = TestProject::copy_of(&fixture_dir().join("empty"));
    project.write("app/locks.py", "ADVISORY_LOCK_REAPER = 1_001_001\n");
    project.write(
        "app/tasks.py",
        "from django_pglocks import advisory_lock\n\n\ndef locked(name):\n    return advisory_lock(name)\n\n\ndef reindex():\n    # Rebuilds the search index.\n    with advisory_lock(\"reindex\"):\n        pass\n\n\ndef compact():\n    with locked(\"compact-tables\"):\n        pass\n\n\ndef sweep():\n    with advisory_lock(\"job-guszrictzu\"):\n        pass\n    with advisory_lock(\"job-kpgfslzdni\"):\n        pass\n",
    );
    project.write(
        "jobs/sync.rb",
        "class CatalogSync\n  def run\n    Catalog.with_advisory_lock(\"sync-catalog\") { sync! }\n  end\nend\n",
    );
    let run = project.run(&["init"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let registry = project.read("lockward.toml");
    for entry in [
        "[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"Rebuilds the search index\"   # from the comment at app/tasks.py:9\n",
        "[[lock]]\nname = \"compact-tables\"\nhash = \"django-pglocks\"\nworker = \"compact-tables\"   # from the lock's name\n",
        "[[lock]]\nname = \"sync-catalog\"\nhash = \"with_advisory_lock\"\nworker = \"sync-catalog\"   # from the lock's name\n",
        "[[lock]]\nname = \"job-guszrictzu\"\n",
    ] {
        assert!(registry.contains(entry), "{entry} missing:\n{registry}");
    }
    assert!(!registry.contains("job-kpgfslzdni"), "{registry}");
    assert!(
        run.stdout.contains("4 locks taken by name"),
        "{}",
        run.stdout
    );
    // crc32 of both names is 2439489156: django-pglocks' key -1855478140 for each.
    assert!(
        run.stdout.contains(
            "app/tasks.py:22:10: the lock named \"job-kpgfslzdni\" (django-pglocks) takes key \
             -1855478140, which the lock named \"job-guszrictzu\" has already"
        ),
        "{}",
        run.stdout
    );
    let list = project.run(&["list", "--format", "json"]);
    assert!(
        list.stdout.contains("\"id\": -118288247"),
        "{}",
        list.stdout
    );
    let check = project.run(&["check", "--format", "json"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    // What is left is the collision, at each of the two names; every name is registered.
    assert_eq!(
        check.stdout.matches("\"severity\": \"error\"").count(),
        2,
        "{}",
        check.stdout
    );
    assert_eq!(
        check
            .stdout
            .matches("\"code\": \"name-key-collision\"")
            .count(),
        2,
        "{}",
        check.stdout
    );
}
