//! `lockward take`: the registry entry, the constant in every language, the page, the lock.

use std::process::{Command, Stdio};

use crate::TestProject;

const HARBOR_CONSTANTS: &str = "crates/harbor-core/src/locks.rs";

/// The constants files of the `languages` fixture, one per language, all defining the same id.
const CONSTANTS_FILES: &[&str] = &[
    "locks.py",
    "locks.rs",
    "locks.go",
    "locks.ts",
    "locks.cjs",
    "locks.rb",
    "Locks.java",
    "Locks.kt",
];

/// A copy of the `languages` fixture with `file` as core's constants file, the other languages'
/// files removed (they define the same id, which the code scan would rightly report).
fn languages(file: &str) -> TestProject {
    let project = TestProject::copy_of(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures/languages"),
    );
    project.edit(
        "lockward.toml",
        "constants = \"locks.py\"",
        &format!("constants = \"{file}\""),
    );
    for other in CONSTANTS_FILES.iter().filter(|&&other| other != file) {
        std::fs::remove_file(project.path().join(other)).expect("remove");
    }
    project
}

#[test]
fn take_appends_the_entry_the_constant_and_the_page_and_prints_the_id() {
    let project = TestProject::harbor();
    let registry_before = project.read("lockward.toml");
    let constants_before = project.read(HARBOR_CONSTANTS);

    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_DUNNING",
        "--worker",
        "dunning reminders",
    ]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "1_001_007\n");
    let registry = project.read("lockward.toml");
    assert_eq!(
        registry.strip_prefix(registry_before.as_str()),
        Some(
            "\n[[lock]]\nid = 1_001_007\nconstant = \"ADVISORY_LOCK_DUNNING\"\nworker = \"dunning reminders\"\n"
        )
    );
    assert_eq!(
        project
            .read(HARBOR_CONSTANTS)
            .strip_prefix(constants_before.as_str()),
        Some("\n/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_007;\n")
    );
    let page = project.read("docs/advisory-locks.md");
    assert!(page.contains("- Next free id: `1_001_008`"), "{page}");
    assert!(page.contains("| `1_001_007` | `ADVISORY_LOCK_DUNNING` | core | dunning reminders |"));
    assert_eq!(project.run(&["check"]).code, 0);
    assert_eq!(project.run(&["render", "--check"]).code, 0);
}

#[test]
fn take_writes_the_constant_in_the_language_of_the_constants_file() {
    let cases = [
        (
            "locks.py",
            "\n# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_002\n",
        ),
        (
            "locks.rs",
            "\n/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_002;\n",
        ),
        (
            "locks.ts",
            "\n// dunning reminders\nexport const ADVISORY_LOCK_DUNNING = 1_001_002;\n",
        ),
        (
            "locks.cjs",
            "\n// dunning reminders\nmodule.exports.ADVISORY_LOCK_DUNNING = 1_001_002;\n",
        ),
    ];
    for (file, appended) in cases {
        let project = languages(file);
        let before = project.read(file);
        let run = project.run(&[
            "take",
            "ADVISORY_LOCK_DUNNING",
            "--worker",
            "dunning reminders",
        ]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, "1_001_002\n"),
            "{file}: {}",
            run.stderr
        );
        assert_eq!(
            project.read(file).strip_prefix(before.as_str()),
            Some(appended),
            "{file}"
        );
        assert_eq!(project.run(&["check"]).code, 0, "{file}");
    }
}

#[test]
fn take_puts_the_constant_inside_go_blocks_ruby_modules_and_java_and_kotlin_bodies() {
    let cases = [
        (
            "locks.go",
            "\t// invoice rollup\n\tADVISORY_LOCK_INVOICE_ROLLUP int64 = 1_001_001\n",
            "\t// dunning reminders\n\tADVISORY_LOCK_DUNNING int64 = 1_001_002\n)\n",
        ),
        (
            "locks.rb",
            "    ADVISORY_LOCK_INVOICE_ROLLUP = 1_001_001\n",
            "    # dunning reminders\n    ADVISORY_LOCK_DUNNING = 1_001_002\n  end\nend\n",
        ),
        (
            "Locks.java",
            "    public static final long ADVISORY_LOCK_INVOICE_ROLLUP = 1_001_001L;\n",
            "\n    /** dunning reminders */\n    public static final long ADVISORY_LOCK_DUNNING = 1_001_002L;\n}\n",
        ),
        (
            "Locks.kt",
            "    const val ADVISORY_LOCK_INVOICE_ROLLUP: Long = 1_001_001L\n",
            "    /** dunning reminders */\n    const val ADVISORY_LOCK_DUNNING: Long = 1_001_002L\n}\n",
        ),
    ];
    for (file, sibling, rest) in cases {
        let project = languages(file);
        let run = project.run(&[
            "take",
            "ADVISORY_LOCK_DUNNING",
            "--worker",
            "dunning reminders",
        ]);
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        let text = project.read(file);
        assert!(
            text.ends_with(&format!("{sibling}{rest}")),
            "{file}:\n{text}"
        );
    }
}

#[test]
fn take_with_plugin_records_a_handover_and_leaves_core_constants_alone() {
    let project = TestProject::harbor();
    let constants_before = project.read(HARBOR_CONSTANTS);

    let run = project.run(&[
        "take",
        "BILLING_REFUNDS_LOCK_ID",
        "--worker",
        "refunds",
        "--plugin",
        "billing",
    ]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "1_001_007\n");
    assert!(
        run.stderr.contains("add it to the plugin's manifest"),
        "{}",
        run.stderr
    );
    assert!(project.read("lockward.toml").ends_with(
        "id = 1_001_007\nconstant = \"BILLING_REFUNDS_LOCK_ID\"\nworker = \"refunds\"\nplugin = \"billing\"\n"
    ));
    assert_eq!(project.read(HARBOR_CONSTANTS), constants_before);
    let list = project.run(&["list", "--format", "json"]).json();
    let entry = list["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|lock| lock["id"] == 1_001_007)
        .cloned()
        .unwrap();
    assert_eq!(entry["kind"], "handover");
    assert_eq!(entry["owner"], "plugin:billing");
    // The handover no manifest declares yet is a warning, not an error.
    assert_eq!(project.run(&["check"]).code, 0);
}

#[test]
fn take_with_family_marks_the_key() {
    let project = TestProject::harbor();
    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_TENANT_BASE",
        "--worker",
        "per tenant",
        "--family",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        project
            .read("lockward.toml")
            .ends_with("worker = \"per tenant\"\nkey = \"family\"\n")
    );
    assert_eq!(project.run(&["check"]).code, 0);
}

#[test]
fn dry_run_prints_the_id_and_the_changes_and_writes_nothing() {
    let project = TestProject::harbor();
    let files = ["lockward.toml", HARBOR_CONSTANTS, "docs/advisory-locks.md"];
    let before: Vec<String> = files.iter().map(|file| project.read(file)).collect();

    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_DUNNING",
        "--worker",
        "dunning reminders",
        "--dry-run",
    ]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("1_001_007\n--- lockward.toml\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("\n+id = 1_001_007\n"));
    assert!(
        run.stdout
            .contains("\n+pub const ADVISORY_LOCK_DUNNING: i64 = 1_001_007;\n")
    );
    assert!(run.stdout.contains("\n-- Next free id: `1_001_007`\n"));
    assert!(run.stdout.contains("\n+- Next free id: `1_001_008`\n"));
    assert!(run.stderr.contains("nothing was written"));
    let after: Vec<String> = files.iter().map(|file| project.read(file)).collect();
    assert_eq!(before, after);
}

#[cfg(unix)]
#[test]
fn a_take_waiting_for_the_project_lock_says_so_then_goes_ahead() {
    use std::io::BufRead as _;

    let project = TestProject::harbor();
    // Another run holds the project lock: it is on the registry's directory.
    let held = std::fs::File::open(project.path()).expect("open the project directory");
    held.lock().expect("lock the project");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockward"))
        .args(["take", "ADVISORY_LOCK_DUNNING", "--worker", "w"])
        .current_dir(project.path())
        .env_remove("LOCKWARD_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lockward take");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let (line, first_line) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut first = String::new();
        let _ = stderr.read_line(&mut first);
        let _ = line.send(first);
        // Keep reading: a closed pipe would fail the run's next line on stderr.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
    });
    // Bounded, so that a run that says nothing fails this test instead of hanging it.
    let said = first_line.recv_timeout(std::time::Duration::from_secs(30));
    drop(held);
    let first = said.unwrap_or_else(|_| first_line.recv().unwrap_or_default());
    assert_eq!(
        first,
        "note: waiting for another lockward run on this project to finish\n"
    );
    let output = child.wait_with_output().expect("wait for lockward take");
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "1_001_007\n");
}

#[test]
fn take_json_reports_the_id_and_the_files_written() {
    let project = TestProject::harbor();
    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_DUNNING",
        "--worker",
        "w",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json(),
        serde_json::json!({
            "id": 1_001_007,
            "literal": "1_001_007",
            "constant": "ADVISORY_LOCK_DUNNING",
            "kind": "constant",
            "written": ["lockward.toml", HARBOR_CONSTANTS, "docs/advisory-locks.md"],
        })
    );
}

#[test]
fn take_refuses_a_registered_name_and_writes_nothing() {
    let project = TestProject::harbor();
    let before = project.read("lockward.toml");
    for name in ["ADVISORY_LOCK_INVOICE_ROLLUP", "_CATALOG_LOCK_KEY"] {
        let run = project.run(&["take", name, "--worker", "again"]);
        assert_eq!(run.code, 2, "{name}");
        assert!(
            run.stderr
                .contains(&format!("constant `{name}` is already registered")),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
    assert_eq!(project.read("lockward.toml"), before);
}

#[test]
fn take_refuses_bad_names_a_defined_constant_and_a_missing_constants_file() {
    let project = TestProject::harbor();
    let run = project.run(&["take", "1_BAD-NAME", "--worker", "w"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("is not an identifier"),
        "{}",
        run.stderr
    );

    let run = project.run(&["take", "ADVISORY_LOCK_X", "--worker", "  "]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("the worker must not be empty"),
        "{}",
        run.stderr
    );

    // A lock constant defined there is registered with the id it has (`take_existing`); any
    // other definition of the name blocks it.
    project.edit(
        HARBOR_CONSTANTS,
        "/// search reindex",
        "pub const WIP_MUTEX: i64 = 5;\n/// search reindex",
    );
    let run = project.run(&["take", "WIP_MUTEX", "--worker", "w"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("`WIP_MUTEX` is already defined in core's constants file"),
        "{}",
        run.stderr
    );

    std::fs::remove_file(project.path().join(HARBOR_CONSTANTS)).unwrap();
    let before = project.read("lockward.toml");
    let run = project.run(&["take", "ADVISORY_LOCK_Y", "--worker", "w"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("core's constants file does not exist"),
        "{}",
        run.stderr
    );
    assert_eq!(project.read("lockward.toml"), before);
}

#[test]
fn take_refuses_when_the_block_is_used_up_and_on_an_invalid_registry() {
    let project = TestProject::harbor();
    project.edit("lockward.toml", "end = 1_001_999", "end = 1_001_006");
    let run = project.run(&["take", "ADVISORY_LOCK_X", "--worker", "w"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("core's block 1_001_001..=1_001_006 is used up"),
        "{}",
        run.stderr
    );

    project.edit(
        "lockward.toml",
        "worker = \"invoice rollup\"",
        "wroker = \"invoice rollup\"",
    );
    let run = project.run(&["take", "ADVISORY_LOCK_X", "--worker", "w"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("did you mean `worker`?"),
        "{}",
        run.stderr
    );
}

#[test]
fn take_without_a_page_writes_the_registry_and_the_constant_only() {
    let project = languages("locks.py");
    project.edit("lockward.toml", "page = \"docs/locks.md\"\n", "");
    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_DUNNING",
        "--worker",
        "w",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json()["written"],
        serde_json::json!(["lockward.toml", "locks.py"])
    );
    assert!(!project.path().join("docs/locks.md").exists());
}

#[test]
fn twelve_takes_at_once_get_twelve_distinct_consecutive_ids() {
    let project = TestProject::harbor();
    let children: Vec<_> = (0..12)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_lockward"))
                .args([
                    "take",
                    &format!("ADVISORY_LOCK_WORKER_{i}"),
                    "--worker",
                    &format!("worker {i}"),
                ])
                .current_dir(project.path())
                .env_remove("LOCKWARD_LOG")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn lockward")
        })
        .collect();
    let mut ids: Vec<i64> = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().expect("wait");
            let stdout = String::from_utf8(output.stdout).unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            stdout
                .trim()
                .replace('_', "")
                .parse()
                .expect("an id on stdout")
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1_001_007..1_001_019).collect::<Vec<i64>>());

    let check = project.run(&["check"]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    let list = project.run(&["list", "--format", "json"]).json();
    assert_eq!(list["core_constants"], 4 + 12);
    let constants = project.read(HARBOR_CONSTANTS);
    for i in 0..12 {
        assert_eq!(
            constants
                .matches(&format!("ADVISORY_LOCK_WORKER_{i}:"))
                .count(),
            1
        );
    }
}

#[test]
fn take_skips_ids_another_git_branch_took() {
    let project = TestProject::harbor();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=test",
                "-c",
                "user.email=test@example.invalid",
            ])
            .args(args)
            .current_dir(project.path())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "harbor"]);
    git(&["checkout", "-q", "-b", "feature/dunning"]);
    let registry = project.read("lockward.toml");
    project.write(
        "lockward.toml",
        &format!("{registry}\n[[lock]]\nid = 1_001_007\nconstant = \"ADVISORY_LOCK_DUNNING\"\nworker = \"dunning\"\n"),
    );
    git(&["commit", "-q", "-am", "take 1_001_007 for dunning"]);
    git(&["checkout", "-q", "main"]);

    let run = project.run(&["take", "ADVISORY_LOCK_EXPORT", "--worker", "export"]);

    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "1_001_008\n");
    // The branch's constant name is taken too: the two would collide when it lands.
    let run = project.run(&["take", "ADVISORY_LOCK_DUNNING", "--worker", "dunning"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("id 1_001_007 (reserved, on branch feature/dunning)"),
        "{}",
        run.stderr
    );
    // The page take wrote is the one `lockward render` writes.
    assert_eq!(project.run(&["render", "--check"]).code, 0);
}

#[test]
fn take_from_another_directory_with_registry_and_json_dry_run() {
    let project = TestProject::harbor();
    let registry = project.path().join("lockward.toml");
    let registry = registry.to_str().expect("UTF-8");
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let before = project.read("lockward.toml");

    let run = project.run_in(
        elsewhere.path(),
        &[
            "--registry",
            registry,
            "take",
            "ADVISORY_LOCK_X",
            "--worker",
            "x",
            "--dry-run",
            "--format",
            "json",
        ],
    );

    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["literal"], "1_001_007");
    assert_eq!(json["dry_run"], true);
    let paths: Vec<&str> = json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["lockward.toml", HARBOR_CONSTANTS, "docs/advisory-locks.md"]
    );
    assert!(
        json["changes"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("\n+constant = \"ADVISORY_LOCK_X\"\n")
    );
    assert_eq!(project.read("lockward.toml"), before);

    let run = project.run_in(
        elsewhere.path(),
        &[
            "--registry",
            registry,
            "take",
            "ADVISORY_LOCK_X",
            "--worker",
            "x",
        ],
    );
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "1_001_007\n"),
        "{}",
        run.stderr
    );
    assert_eq!(project.run(&["check"]).code, 0);
}

/// `take` could not land a `reserved` entry: the README's own reserved 1_001_005 got a new id.
#[test]
fn take_reserved_lands_the_reservation_in_place_for_its_worker() {
    let project = TestProject::harbor();
    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_DUNNING",
        "--worker",
        "dunning reminders",
        "--reserved",
        "1_001_005",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "1_001_005");
    let registry = project.read("lockward.toml");
    assert!(
        registry.contains(
            "[[lock]]\nid = 1_001_005\nconstant = \"ADVISORY_LOCK_DUNNING\"\nworker = \"dunning reminders\"\n"
        ),
        "{registry}"
    );
    assert!(
        !registry.contains("reserved = \"dunning reminders"),
        "{registry}"
    );
    assert!(
        project
            .read("crates/harbor-core/src/locks.rs")
            .contains("pub const ADVISORY_LOCK_DUNNING: i64 = 1_001_005;")
    );
    assert_eq!(project.run(&["check"]).code, 0);
    // Only a reservation of this registry lands.
    let run = project.run(&[
        "take",
        "ADVISORY_LOCK_OTHER",
        "--worker",
        "other",
        "--reserved",
        "1_001_001",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("id 1_001_001 is not reserved (its entry is `constant`)"),
        "{}",
        run.stderr
    );
}

/// `lockward take NEW_LOCK --worker x`, then `check`: `constant-missing ... no definition of it
/// was found`, though `take` had just written it (no constant pattern matched the name). Any name
/// `take` accepts, `check` then finds, in every language `take` writes.
#[test]
fn any_name_take_accepts_check_then_finds_in_every_constants_language() {
    // A fixed sequence of names from a seed: upper, lower and mixed case, digits, underscores.
    let mut seed: u64 = 0x7a6e_0001_d00d_5eed;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let alphabet: Vec<char> = ('A'..='Z')
        .chain('a'..='z')
        .chain('0'..='9')
        .chain(['_'])
        .collect();
    let mut names: Vec<String> = vec!["NEW_LOCK".into(), "x".into(), "Reaper2".into()];
    while names.len() < 10 {
        let length = 1 + next(14);
        let name: String = (0..length)
            .map(|_| alphabet[usize::try_from(next(alphabet.len() as u64)).unwrap()])
            .collect();
        if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            names.push(name);
        }
    }
    for (file, header) in [
        ("crates/harbor-core/src/locks.rs", None),
        ("services/locks.py", Some("# locks\n")),
        ("internal/locks/locks.go", Some("package locks\n")),
        ("web/locks.ts", Some("// locks\n")),
    ] {
        let project = TestProject::harbor();
        if let Some(header) = header {
            project.edit(
                "lockward.toml",
                "constants = \"crates/harbor-core/src/locks.rs\"",
                &format!("constants = \"{file}\""),
            );
            // The earlier constants stay in the Rust file: `constant-missing` for them is not
            // what this test looks at.
            project.write(file, header);
        }
        let mut taken = Vec::new();
        for name in &names {
            let run = project.run(&["take", name, "--worker", "w"]);
            if run.code == 0 {
                taken.push(name.clone());
            }
        }
        assert!(taken.len() >= 5, "{file}: take accepted only {taken:?}");
        let check = project.run(&["check", "--format", "json"]);
        let findings = check.json();
        let missing: Vec<&serde_json::Value> = findings["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|finding| finding["code"] == "constant-missing")
            .filter(|finding| {
                taken.iter().any(|name| {
                    finding["message"]
                        .as_str()
                        .unwrap_or("")
                        .contains(&format!("`{name}`"))
                })
            })
            .collect();
        assert!(
            missing.is_empty(),
            "{file}: taken {taken:?}, yet {missing:#?}"
        );
    }
}

/// `take --name NAME --hash LIBRARY` (issue 19): registers a lock the code takes by name at the
/// key its library computes, re-renders the page, and refuses a name whose key is taken (the
/// same name again, or another name on the same key) or a library it does not know.
#[test]
fn take_name_registers_a_lock_taken_by_name_at_its_librarys_key() {
    let project = crate::TestProject::harbor();
    let run = project.run(&[
        "take",
        "--name",
        "reindex",
        "--hash",
        "django-pglocks",
        "--worker",
        "search reindex",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "-118288247\n");
    assert!(
        project
            .read("lockward.toml")
            .ends_with("\n[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"search reindex\"\n"),
        "{}",
        project.read("lockward.toml")
    );
    let check = project.run(&["check"]);
    assert_eq!(check.code, 0, "the page was rendered too: {check:?}");
    let page = project.read("docs/advisory-locks.md");
    assert!(
        page.contains(
            "| `-118288247` | named `reindex` (django-pglocks) | core | search reindex |"
        ),
        "{page}"
    );

    let again = project.run(&[
        "take",
        "--name",
        "reindex",
        "--hash",
        "django-pglocks",
        "--worker",
        "again",
    ]);
    assert_eq!(again.code, 2, "{again:?}");
    assert!(
        again.stderr.contains(
            "which is id -118288247 (the lock named \"reindex\", django-pglocks) already"
        ),
        "{}",
        again.stderr
    );
    // crc32("job-guszrictzu") == crc32("job-kpgfslzdni").
    let first = project.run(&[
        "take",
        "--name",
        "job-guszrictzu",
        "--hash",
        "django-pglocks",
        "--worker",
        "a",
    ]);
    assert_eq!(first.code, 0, "{first:?}");
    let second = project.run(&[
        "take",
        "--name",
        "job-kpgfslzdni",
        "--hash",
        "django-pglocks",
        "--worker",
        "b",
    ]);
    assert_eq!(second.code, 2, "{second:?}");
    assert!(
        second.stderr.contains("takes key -1855478140"),
        "{}",
        second.stderr
    );

    let unknown = project.run(&["take", "--name", "x", "--hash", "crc64", "--worker", "w"]);
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(
        unknown.stderr.contains("known: django-pglocks"),
        "{}",
        unknown.stderr
    );
    let no_hash = project.run(&["take", "--name", "x", "--worker", "w"]);
    assert_eq!(no_hash.code, 2, "{no_hash:?}");
    let both = project.run(&[
        "take",
        "ADVISORY_LOCK_X",
        "--name",
        "x",
        "--hash",
        "good_job",
        "--worker",
        "w",
    ]);
    assert_eq!(both.code, 2, "a CONSTANT and --name: {both:?}");
}
