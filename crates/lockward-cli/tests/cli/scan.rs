//! The code scan as `lockward check` reports it, in every format.

use crate::TestProject;

/// The example project with three planted faults: a retired id in use, a constant whose value
/// differs from the registry, and an unregistered literal; plus an allowed line.
fn planted() -> TestProject {
    let project = TestProject::harbor();
    project.edit(
        "crates/harbor-core/src/locks.rs",
        "ADVISORY_LOCK_SEARCH_REINDEX: i64 = 1_001_006;",
        "ADVISORY_LOCK_SEARCH_REINDEX: i64 = 1_001_016;",
    );
    project.write(
        "services/api/reports.py",
        "def nightly(cur):\n    cur.execute(\"SELECT pg_try_advisory_lock(1001003)\")\n    \
         cur.execute(\"SELECT pg_advisory_lock(424242)\")\n    \
         cur.execute(\"SELECT pg_advisory_lock(525252)\")  # lockward: allow(unregistered-id)\n",
    );
    project
}

#[test]
fn planted_faults_are_found_with_their_codes_and_locations() {
    let project = planted();
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let found: Vec<(String, String, u64)> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_owned(),
                f["path"].as_str().unwrap_or_default().to_owned(),
                f["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        found.contains(&(
            "constant-value-mismatch".into(),
            "crates/harbor-core/src/locks.rs".into(),
            13
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "retired-id-in-use".into(),
            "services/api/reports.py".into(),
            2
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "unregistered-id".into(),
            "services/api/reports.py".into(),
            3
        )),
        "{found:?}"
    );
    assert!(
        !found
            .iter()
            .any(|(_, path, line)| path == "services/api/reports.py" && *line == 4),
        "the allowed line"
    );
    assert!(
        report["summary"]["files_scanned"]
            .as_u64()
            .is_some_and(|n| n > 5)
    );
    insta::assert_json_snapshot!(report["findings"]);
}

#[test]
fn the_human_report_is_rustc_like_with_the_source_line() {
    let run = planted().run(&["check"]);
    assert_eq!(run.code, 1);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn the_sarif_report_carries_the_scan_findings() {
    let run = planted().run(&["check", "--format", "sarif"]);
    assert_eq!(run.code, 1);
    let sarif = run.json();
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules");
    for result in sarif["runs"][0]["results"].as_array().expect("results") {
        let index =
            usize::try_from(result["ruleIndex"].as_u64().expect("ruleIndex")).expect("small");
        assert_eq!(
            rules[index]["id"], result["ruleId"],
            "ruleIndex points at the result's rule"
        );
    }
    insta::assert_json_snapshot!(sarif["runs"][0]["results"]);
}

#[test]
fn the_sarif_report_is_valid_against_the_sarif_2_1_0_schema() {
    let sarif = planted().run(&["check", "--format", "sarif"]).json();
    let errors = crate::sarif_schema_errors(&sarif);
    assert!(errors.is_empty(), "{errors:#?}");
    let mut broken = sarif;
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(
        !crate::sarif_schema_errors(&broken).is_empty(),
        "the schema catches a bad level"
    );
}

#[test]
fn a_git_ignored_file_is_not_read() {
    let project = TestProject::harbor();
    project.write(".gitignore", "generated/\n");
    project.write(
        "generated/locks.py",
        "ADVISORY_LOCK_GENERATED = 999_999_999\n",
    );
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("generated/locks.py"), "{}", run.stdout);
}

/// A helper whose parameter becomes the key: its call with an unregistered literal is an error at
/// the call, in a file with no trigger word; a call whose key is built at run time is a note
/// that shows the whole expression; a declared library helper counts without its source.
#[test]
fn calls_of_wrappers_are_checked_like_lock_calls() {
    let project = TestProject::harbor();
    project.edit(
        "lockward.toml",
        "[scan]\n",
        "[scan]\nwrappers = [{ name = \"hold_lock\", keyword = \"lock_id\" }]\n",
    );
    project.write(
        "services/api/locking.py",
        "def with_lock(cur, lock_id):\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (lock_id,))\n",
    );
    project.write(
        "services/api/purge.py",
        "from services.api.locking import with_lock\n\ndef purge(cur, tenant):\n    with_lock(cur, 4242)\n    with_lock(cur, tenant.lock_key())\n    hold_lock(cur, lock_id=4343)\n",
    );
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let report = run.json();
    let found: Vec<String> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["path"] == "services/api/purge.py")
        .map(|f| {
            format!(
                "{}:{} {} {}",
                f["line"],
                f["column"],
                f["code"].as_str().unwrap_or_default(),
                f["message"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            "4:5 unregistered-id advisory lock id 4242 is not in the registry",
            "5:5 dynamic-key the key of this `with_lock` call, `tenant.lock_key()`, cannot be resolved to an id",
            "6:5 unregistered-id advisory lock id 4343 is not in the registry",
        ],
        "{report:#}"
    );
}

/// Issue 9: a codebase full of ids the scan could not follow checked "no errors, no warnings, no
/// notes". What it could not see is now said, and counted in both summaries.
#[test]
fn what_the_scan_cannot_see_is_counted_in_the_summary_and_the_json() {
    let project = TestProject::harbor();
    project.write(
        "services/api/derived.py",
        "ADVISORY_LOCK_FROM_ENV = int(os.environ[\"LOCK\"])\nADVISORY_LOCK_REPORT = compute()\n",
    );
    project.write("services/api/blob.py", "ADVISORY_LOCK_BLOB = 1\n\0binary\n");
    std::os::unix::fs::symlink(
        "/nonexistent/locks.py",
        project.path().join("services/api/gone.py"),
    )
    .expect("symlink");

    let human = project.run(&["check"]);
    let json = project.run(&["check", "--format", "json"]);

    assert_eq!(human.code, 0, "notes fail nothing: {human:?}");
    assert!(
        human.stdout.contains(
            "note[unresolved-constant]: `ADVISORY_LOCK_REPORT` matches the lock constant patterns but its value `compute()` is not a value the scan can compute"
        ),
        "{}",
        human.stdout
    );
    assert!(
        human.stdout.contains(
            "note[file-not-read]: `services/api/gone.py` was not scanned: it is a symbolic link"
        ),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains(", 0 dynamic keys, 2 unresolved constants, 2 files not read)\n"),
        "{}",
        human.stdout
    );
    let summary = &json.json()["summary"];
    assert_eq!(summary["unresolved_constants"], 2);
    assert_eq!(
        summary["files_not_read"],
        serde_json::json!({"binary": 1, "too_large": 0, "not_followed": 1, "unreadable": 0})
    );
}

/// The harbor example with a dict of ids in `services/jobs/locks.py`, its `reindex` entry
/// registered by its member name, and the page rendered.
fn with_a_dict_of_ids(entries: &str) -> TestProject {
    let project = TestProject::harbor();
    let registry = project.read("lockward.toml");
    project.write(
        "lockward.toml",
        &format!(
            "{registry}\n[[lock]]\nid = 1_001_050\nconstant = 'ADVISORY_LOCKS[\"reindex\"]'\n\
             worker = \"search reindex\"\ndefined_in = [\"services/jobs/locks.py\"]\n"
        ),
    );
    project.write(
        "services/jobs/locks.py",
        &format!(
            "ADVISORY_LOCKS = {{\n{entries}}}\n\n\ndef reindex(cur):\n    \
             cur.execute(\"SELECT pg_advisory_lock(%s)\", (ADVISORY_LOCKS[\"reindex\"],))\n"
        ),
    );
    let render = project.run(&["render"]);
    assert_eq!(render.code, 0, "{render:?}");
    project
}

#[test]
fn a_registered_dict_entry_checks_clean_and_is_listed_by_its_member_name() {
    let project = with_a_dict_of_ids("    \"reindex\": 1_001_050,\n");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    let errors: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "error" || f["path"] == "services/jobs/locks.py")
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let list = project.run(&["list", "--format", "json"]);
    assert_eq!(list.code, 0, "{list:?}");
    let constants: Vec<String> = list.json()["locks"]
        .as_array()
        .expect("locks")
        .iter()
        .filter_map(|lock| lock["constant"].as_str().map(str::to_owned))
        .collect();
    assert!(
        constants.contains(&"ADVISORY_LOCKS[\"reindex\"]".to_owned()),
        "{constants:?}"
    );
    assert!(
        project
            .read("docs/advisory-locks.md")
            .contains("ADVISORY_LOCKS[\"reindex\"]")
    );
}

#[test]
fn an_allow_comment_that_allows_nothing_warns_and_an_unknown_code_fails() {
    let project = TestProject::harbor();
    project.write(
        "services/api/allows.py",
        "RETRIES = 3  # lockward: allow(undeclared-site)\nTIMEOUT = 5  # lockward: allow(undeclared-sites)\n",
    );

    let run = project.run(&["check"]);

    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("warning[unused-allow]: `lockward: allow(undeclared-site)` allows nothing: no `undeclared-site` finding is on this line\n --> services/api/allows.py:1:32\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("error[unknown-allow-code]: `lockward: allow(undeclared-sites)` names no finding code\n --> services/api/allows.py:2:32\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("did you mean `undeclared-site`?"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_repository_with_a_dict_of_unregistered_ids_no_longer_checks_clean() {
    let project = with_a_dict_of_ids("    \"reindex\": 1_001_050,\n    \"vacuum\": 1_001_051,\n");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let errors: Vec<(String, String, u64)> = run.json()["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_owned(),
                f["path"].as_str().unwrap_or_default().to_owned(),
                f["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [(
            "unregistered-id".to_owned(),
            "services/jobs/locks.py".to_owned(),
            3
        )]
    );
}

#[test]
fn a_registered_member_whose_entry_is_gone_from_the_code_is_reported() {
    let project = with_a_dict_of_ids("    \"vacuum\": 1_001_051,\n");
    let run = project.run(&["check", "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let codes: Vec<String> = run.json()["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| f["code"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        codes.contains(&"external-not-found".to_owned()),
        "{codes:?}"
    );
    assert!(codes.contains(&"unregistered-id".to_owned()), "{codes:?}");
}

#[test]
fn take_refuses_a_member_name() {
    let project = TestProject::harbor();
    let run = project.run(&["take", "ADVISORY_LOCKS[\"reindex\"]", "--worker", "reindex"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("plain constants only"), "{run:?}");
}
