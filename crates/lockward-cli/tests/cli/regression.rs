//! One test per reported bug, named after what broke (the way ripgrep keeps `tests/regression.rs`).
//! Each one reproduces the report as it was filed and fails without its fix.

// ---------------------------------------------------------------------------------------------
// Crashes, terminal output and wording.

// ---------------------------------------------------------------------------------------------
// `take`, `retire` and other branches' reservations.

// ---------------------------------------------------------------------------------------------
// The registry, plugin manifests and the runtime's identity.

use crate::TestProject;

/// The codes of `check --format json`'s findings, in report order.
fn codes(run: &crate::Run) -> Vec<String> {
    run.json()["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|finding| finding["code"].as_str().expect("code").to_owned())
        .collect()
}

#[test]
fn registry_errors_are_reported_in_one_pass_not_round_by_round() {
    // Each of these used to hide the next: a missing [project] stopped before the entries, a
    // duplicate id skipped its entry's own checks, conflicting kinds skipped the rest of theirs.
    let project = TestProject::harbor();
    project.write(
        "lockward.toml",
        "[core]\n\
         constants = \"crates/harbor-core/src/locks.rs\"\n\
         block = { start = 1_001_001, end = 1_001_999 }\n\
         \n\
         [[lock]]\n\
         id = 1_001_001\n\
         constant = \"ADVISORY_LOCK_INVOICE_ROLLUP\"\n\
         worker = \"invoice rollup\"\n\
         \n\
         [[lock]]\n\
         id = 1_001_001\n\
         constant = \"ADVISORY-LOCK-COPY\"\n\
         \n\
         [[lock]]\n\
         id = 1_001_002\n\
         plugin = \"billing\"\n\
         retired = \"gone\"\n\
         constant = \"2FAST\"\n\
         \n\
         [[lock]]\n\
         id = 0x1_0000_0000\n\
         constant = \"ADVISORY_LOCK_WIDE\"\n\
         worker = \"wide\"\n\
         key = \"family\"\n",
    );
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let mut codes = codes(&run);
    codes.sort();
    codes.dedup();
    for code in [
        "missing-field",
        "duplicate-id",
        "invalid-constant-name",
        "missing-worker",
        "conflicting-kinds",
        "family-out-of-range",
    ] {
        assert!(codes.iter().any(|c| c == code), "{code} missing: {codes:?}");
    }
}

#[test]
fn an_external_written_as_a_literal_at_a_call_site_needs_no_constant() {
    // The seed's row: `1_001_042 | PeriodicTask(advisory_lock_id=) | core, out of registry`.
    // It was refused with "external id … needs the constant it is defined as".
    let project = TestProject::harbor();
    let check = project.run(&["check", "--format", "json"]);
    assert_eq!(check.code, 0, "{check:?}");
    let list = project.run(&["list", "--format", "json"]);
    let locks = list.json()["locks"].clone();
    let site = locks
        .as_array()
        .expect("locks")
        .iter()
        .find(|lock| lock["id"] == 9_001_042)
        .expect("the call-site external is listed")
        .clone();
    assert_eq!(site["kind"], "external");
    assert_eq!(site["constant"], serde_json::Value::Null);
    assert_eq!(site["site"], "PeriodicTask(advisory_lock_id=)");
    assert_eq!(site["owner"], "core");
    let table = project.run(&["list"]);
    assert!(
        table
            .stdout
            .contains("literal at PeriodicTask(advisory_lock_id=)"),
        "{}",
        table.stdout
    );
    assert!(
        project
            .read("docs/advisory-locks.md")
            .contains("| `9_001_042` | literal at `PeriodicTask(advisory_lock_id=)` | core |"),
        "the page shows how the id is defined"
    );

    // The scan holds the entry to its file: gone from there, it is not found; written
    // elsewhere, it is undeclared there.
    project.edit(
        "services/worker/background_task.py",
        "advisory_lock_id=9_001_042",
        "advisory_lock_id=lock_id",
    );
    project.write(
        "services/api/reindex.py",
        "task = PeriodicTask(run, advisory_lock_id=9_001_042)\n",
    );
    let codes = codes(&project.run(&["check", "--format", "json"]));
    assert!(
        codes.contains(&"external-not-found".to_owned()),
        "{codes:?}"
    );
    assert!(codes.contains(&"undeclared-site".to_owned()), "{codes:?}");
}

#[test]
fn a_site_belongs_to_an_external_without_a_constant() {
    let project = TestProject::harbor();
    project.edit(
        "lockward.toml",
        "site = \"PeriodicTask(advisory_lock_id=)\"",
        "site = \"PeriodicTask(advisory_lock_id=)\"\nconstant = \"BQ_LOCK_ID\"",
    );
    project.write(
        "lockward.toml",
        &format!(
            "{}\n[[lock]]\nid = 9_001_043\nsite = \"PeriodicTask(advisory_lock_id=)\"\nworker = \"w\"\n",
            project.read("lockward.toml")
        ),
    );
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let codes = codes(&run);
    assert!(codes.contains(&"conflicting-kinds".to_owned()), "{codes:?}");
    assert!(codes.contains(&"missing-field".to_owned()), "{codes:?}");
}

#[test]
fn retiring_a_call_site_external_keeps_its_site_as_the_record() {
    // The retired entry kept `site` and lost `defined_in`, which the registry then refused.
    let project = TestProject::harbor();
    project.edit(
        "services/worker/background_task.py",
        "advisory_lock_id=9_001_042",
        "advisory_lock_id=lock_id",
    );
    let run = project.run(&["retire", "9_001_042", "--reason", "the task is gone"]);
    assert_eq!(run.code, 0, "{run:?}");
    let registry = project.read("lockward.toml");
    assert!(
        registry.contains("retired = \"the task is gone\""),
        "{registry}"
    );
    let list = project.run(&["list", "--format", "json"]);
    let retired = list.json()["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .find(|lock| lock["id"] == 9_001_042)
        .expect("still listed")
        .clone();
    assert_eq!(retired["kind"], "retired");
    assert_eq!(retired["site"], "PeriodicTask(advisory_lock_id=)");
}

#[test]
fn manifest_globs_that_leave_the_project_are_refused_at_the_glob() {
    // `../../../../etc/passwd` and `/etc/*.conf` were read, and their lines printed.
    let project = TestProject::harbor();
    project.edit(
        "lockward.toml",
        "manifests = [",
        "manifests = [\"../../../../../../../../etc/passwd\", \"/etc/*.conf\", ",
    );
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let outside: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|finding| finding["code"] == "glob-outside-project")
        .collect();
    assert_eq!(outside.len(), 2, "{}", run.stdout);
    for finding in &outside {
        assert_eq!(finding["path"], "lockward.toml");
    }
    assert!(!run.stdout.contains("root:"), "{}", run.stdout);
    let plugins = project.run(&["plugins"]);
    assert!(!plugins.stdout.contains("root:"), "{}", plugins.stdout);
    assert_ne!(plugins.code, 0, "{plugins:?}");
}

#[test]
fn a_manifest_symlinked_out_of_the_project_is_not_read() {
    let project = TestProject::harbor();
    std::fs::create_dir_all(project.path().join("plugins/evil")).expect("mkdir");
    std::os::unix::fs::symlink(
        "/etc/passwd",
        project.path().join("plugins/evil/plugin.toml"),
    )
    .expect("symlink");
    let run = project.run(&["plugins", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!run.stdout.contains("root:"), "{}", run.stdout);
    let report = run.json();
    let finding = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|finding| finding["code"] == "glob-outside-project")
        .unwrap_or_else(|| panic!("no glob-outside-project: {}", run.stdout))
        .clone();
    assert_eq!(finding["path"], "lockward.toml");
    assert!(
        finding["message"]
            .as_str()
            .is_some_and(|m| m.contains("plugins/evil/plugin.toml")),
        "{finding}"
    );
}

#[test]
fn a_project_name_with_a_space_is_refused_where_it_is_written() {
    // `my app` made every replica of every worker a "collision": the name travels in each lock
    // session's application_name, which was split on spaces.
    let project = TestProject::harbor();
    project.edit("lockward.toml", "name = \"harbor\"", "name = \"my app\"");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let finding = &report["findings"][0];
    assert_eq!(finding["code"], "invalid-project-name", "{}", run.stdout);
    assert_eq!(finding["path"], "lockward.toml");
    let human = project.run(&["check"]);
    assert!(
        human.stdout.contains("lockward.toml:6:8"),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains("ASCII letters, digits"),
        "{}",
        human.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_leads_on_an_admitted_plugins_own_id() {
    // A worker could not be built from an admitted plugin's id: only the registry's handovers
    // were holdable. shipping's manifest declares 7300001, outside core's block.
    let project = TestProject::harbor();
    let db = lockward_pg::testing::TestDb::new().await;
    let out = project.path().join("led.txt");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_lockward"))
        .args(["run", "--plugin", "shipping", "--lock", "7300001"])
        .args(["--every", "200ms", "--database-url"])
        .arg(db.url())
        .args([
            "--",
            "sh",
            "-c",
            "echo \"$LOCKWARD_LOCK $LOCKWARD_LOCK_ID\" > \"$0\"",
        ])
        .arg(&out)
        .current_dir(project.path())
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start lockward run");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let led = || std::fs::read_to_string(&out).unwrap_or_default();
    while !led().ends_with('\n') {
        if let Some(status) = child.try_wait().expect("try_wait") {
            let mut stderr = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().expect("piped"), &mut stderr)
                .expect("stderr");
            panic!("lockward run exited with {status}: {stderr}");
        }
        assert!(std::time::Instant::now() < deadline, "no cycle was led");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert_eq!(led().trim(), "shipping.7300001 7300001");
}
