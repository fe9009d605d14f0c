//! `lockward take` of an id the code already has, and `check`'s help that prints the command.

use crate::{Run, TestProject};

/// The command in a help text: the first backticked text that starts `lockward take`.
fn command_in_help(check: &Run) -> Vec<String> {
    let start = check
        .stdout
        .find("`lockward take ")
        .unwrap_or_else(|| panic!("no take command in:\n{}", check.stdout));
    let text = &check.stdout[start + 1..];
    let end = text.find('`').expect("closing backtick");
    shell_words(&text[..end])
}

/// Splits a command line as a POSIX shell does for words in double and single quotes.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c == ' ' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            None => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The errors and warnings `check --format json` reports.
fn problems(project: &TestProject) -> (u64, u64) {
    let summary = project.run(&["check", "--format", "json"]).json()["summary"].clone();
    (
        summary["errors"].as_u64().expect("errors"),
        summary["warnings"].as_u64().expect("warnings"),
    )
}

/// Plants `text` in harbor, runs `check`, runs the `take` its help prints, and checks that
/// `check` is back to harbor's own findings (no error; its one legacy-id warning).
fn help_command_registers(relative: &str, text: &str) -> (TestProject, Vec<String>) {
    let project = TestProject::harbor();
    let before = problems(&project);
    assert_eq!(before.0, 0, "harbor checks without errors");
    if relative.ends_with("locks.rs") {
        let old = project.read(relative);
        project.write(relative, &format!("{old}{text}"));
    } else {
        project.write(relative, text);
    }
    let check = project.run(&["check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(
        check.stdout.contains("error[unregistered-id]"),
        "{}",
        check.stdout
    );
    let command = command_in_help(&check);
    let args: Vec<&str> = command.iter().skip(1).map(String::as_str).collect();
    let constants_before = project.read("crates/harbor-core/src/locks.rs");
    let run = project.run(&args);
    assert_eq!(run.code, 0, "{command:?}: {}{}", run.stdout, run.stderr);
    assert_eq!(
        project.read("crates/harbor-core/src/locks.rs"),
        constants_before,
        "no constant is written for an id the code has"
    );
    assert_eq!(
        problems(&project),
        before,
        "{}",
        project.run(&["check"]).stdout
    );
    (project, command)
}

#[test]
fn checks_help_for_a_core_constant_not_registered_is_a_take_that_registers_the_id_it_has() {
    let (project, command) = help_command_registers(
        "crates/harbor-core/src/locks.rs",
        "\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_007;\n",
    );
    assert_eq!(
        command,
        [
            "lockward",
            "take",
            "ADVISORY_LOCK_DUNNING",
            "--worker",
            "..."
        ]
    );
    let registry = project.read("lockward.toml");
    assert!(
        registry.ends_with(
            "[[lock]]\nid = 1_001_007\nconstant = \"ADVISORY_LOCK_DUNNING\"\nworker = \"...\"\n"
        ),
        "{registry}"
    );
    // The page says the next free id is past the one registered.
    assert!(project.read("docs/advisory-locks.md").contains("1_001_008"));
}

#[test]
fn checks_help_for_a_constant_elsewhere_is_a_take_that_registers_an_external_with_its_files() {
    let (project, command) = help_command_registers(
        "services/api/reports.py",
        "_REPORTS_LOCK_KEY = 8_675_400  # reports\n",
    );
    assert_eq!(
        command,
        [
            "lockward",
            "take",
            "_REPORTS_LOCK_KEY",
            "--worker",
            "...",
            "--defined-in",
            "services/api/reports.py"
        ]
    );
    let registry = project.read("lockward.toml");
    assert!(
        registry.ends_with("id = 8_675_400\nconstant = \"_REPORTS_LOCK_KEY\"\nworker = \"...\"\ndefined_in = [\"services/api/reports.py\"]\n"),
        "{registry}"
    );
}

#[test]
fn checks_help_for_a_literal_at_a_call_site_is_a_take_that_registers_it_where_it_is() {
    let (project, command) = help_command_registers(
        "services/worker/cleanup.py",
        "cleanup = PeriodicTask(\n    cleanup_uploads,\n    advisory_lock_id=9_001_077,\n)\n",
    );
    assert_eq!(
        command,
        [
            "lockward",
            "take",
            "9001077",
            "--worker",
            "...",
            "--defined-in",
            "services/worker/cleanup.py"
        ]
    );
    let registry = project.read("lockward.toml");
    assert!(
        registry.ends_with("id = 9_001_077\nsite = \"PeriodicTask(advisory_lock_id=)\"\nworker = \"...\"\ndefined_in = [\"services/worker/cleanup.py\"]\n"),
        "{registry}"
    );
}

#[test]
fn a_help_command_quotes_a_path_with_a_space() {
    let (_, command) = help_command_registers(
        "services/old api/reports.py",
        "_REPORTS_LOCK_KEY = 8_675_400\n",
    );
    assert_eq!(
        command.last().map(String::as_str),
        Some("services/old api/reports.py")
    );
}

#[test]
fn take_of_an_existing_constant_refuses_an_id_reserved_or_declared_by_a_plugin() {
    for (line, why) in [
        (
            "pub const ADVISORY_LOCK_DUNNING: i64 = 1_001_005;\n",
            "id 1_001_005 is registered already (reserved entry)",
        ),
        (
            "pub const ADVISORY_LOCK_LABELS: i64 = 7_300_001;\n",
            "plugin `shipping` declares id 7_300_001",
        ),
    ] {
        let project = TestProject::harbor();
        let old = project.read("crates/harbor-core/src/locks.rs");
        project.write("crates/harbor-core/src/locks.rs", &format!("{old}{line}"));
        let before = project.read("lockward.toml");
        let name = line
            .split_whitespace()
            .nth(2)
            .expect("name")
            .trim_end_matches(':');
        let run = project.run(&["take", name, "--worker", "w"]);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(why), "{}", run.stderr);
        assert_eq!(project.read("lockward.toml"), before);
    }
}

#[test]
fn take_defined_in_refuses_a_file_without_the_definition_and_values_that_differ() {
    let project = TestProject::harbor();
    project
        .write("services/a.py", "_X_LOCK_KEY = 8_000_001\n")
        .write("services/b.py", "_X_LOCK_KEY = 8_000_002\n");
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "--defined-in",
                "services/a.py",
                "--defined-in",
                "services/b.py",
            ],
            "`_X_LOCK_KEY` is 8000001 in services/a.py but 8000002 in services/b.py",
        ),
        (
            &["--defined-in", "services/api/catalog.py"],
            "`_X_LOCK_KEY` is not defined in services/api/catalog.py",
        ),
        (
            &["--defined-in", "services/none.py"],
            "--defined-in services/none.py: no such file",
        ),
    ];
    for (extra, why) in cases {
        let mut args = vec!["take", "_X_LOCK_KEY", "--worker", "w"];
        args.extend_from_slice(extra);
        let run = project.run(&args);
        assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(why), "{why}: {}", run.stderr);
    }
    // Both files at once, when they agree.
    project.write("services/b.py", "_X_LOCK_KEY = 8_000_001\n");
    let run = project.run(&[
        "take",
        "_X_LOCK_KEY",
        "--worker",
        "w",
        "--defined-in",
        "services/a.py",
        "--defined-in",
        "services/b.py",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "8_000_001\n");
    assert!(
        project
            .read("lockward.toml")
            .contains("defined_in = [\"services/a.py\", \"services/b.py\"]")
    );
}

#[test]
fn take_of_a_literal_json_reports_an_external_without_a_constant() {
    let project = TestProject::harbor();
    project.write("db/cron.sql", "SELECT pg_try_advisory_lock(9_001_078);\n");
    let run = project.run(&[
        "take",
        "9_001_078",
        "--worker",
        "cron",
        "--defined-in",
        "db/cron.sql",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json(),
        serde_json::json!({
            "id": 9_001_078,
            "literal": "9_001_078",
            "constant": null,
            "kind": "external",
            "defined_in": ["db/cron.sql"],
            "written": ["lockward.toml", "docs/advisory-locks.md"],
        })
    );
    assert!(project.read("lockward.toml").ends_with(
        "site = \"pg_try_advisory_lock()\"\nworker = \"cron\"\ndefined_in = [\"db/cron.sql\"]\n"
    ));
}

#[test]
fn checks_help_for_a_literal_passed_to_a_wrapper_is_a_take_that_registers_it_where_it_is() {
    let (project, _) = help_command_registers(
        "services/worker/reports.py",
        "def with_report_lock(conn, key):\n    conn.execute(\"SELECT pg_advisory_lock(%s)\", (key,))\n\n\ndef nightly(conn):\n    with_report_lock(conn, 9_001_079)\n",
    );
    assert!(
        project
            .read("lockward.toml")
            .ends_with("id = 9_001_079\nsite = \"with_report_lock()\"\nworker = \"...\"\ndefined_in = [\"services/worker/reports.py\"]\n")
    );
}

/// Issue 9: a dict of ids under a matching name is ids; its entry is registered by its member
/// name where it is, with the command `check`'s help prints.
#[test]
fn checks_help_for_a_dict_entry_is_a_take_that_registers_the_member_where_it_is() {
    let (project, command) = help_command_registers(
        "services/api/locks.py",
        "ADVISORY_LOCKS = {\n    \"reindex\": 7_000_100,  # search reindex\n}\n",
    );
    assert_eq!(
        command,
        [
            "lockward",
            "take",
            "ADVISORY_LOCKS[\"reindex\"]",
            "--worker",
            "...",
            "--defined-in",
            "services/api/locks.py"
        ]
    );
    let registry = project.read("lockward.toml");
    assert!(
        registry.ends_with(
            "[[lock]]\nid = 7_000_100\nconstant = 'ADVISORY_LOCKS[\"reindex\"]'\nworker = \"...\"\n\
             defined_in = [\"services/api/locks.py\"]\n"
        ),
        "{registry}"
    );
}

/// A lock taken by name is an id the registry must know (issue 19): `check`'s help is the
/// `take --name` that registers it, and it works when pasted.
#[test]
fn checks_help_for_a_lock_taken_by_name_is_a_take_that_registers_the_name() {
    let (project, command) = help_command_registers(
        "services/api/search.py",
        "from django_pglocks import advisory_lock\n\n\ndef reindex():\n    with advisory_lock(\"reindex\"):\n        pass\n",
    );
    assert_eq!(
        command,
        [
            "lockward",
            "take",
            "--name",
            "reindex",
            "--hash",
            "django-pglocks",
            "--worker",
            "..."
        ]
    );
    let registry = project.read("lockward.toml");
    assert!(
        registry.ends_with(
            "[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"...\"\n"
        ),
        "{registry}"
    );
}
