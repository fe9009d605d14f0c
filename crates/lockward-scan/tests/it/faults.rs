//! Planted faults: the harbor fixture is clean, and each fault planted in it yields exactly the
//! finding a user expects, where they expect it.

use lockward_registry::Severity;
use lockward_scan::{PluginDir, ScanOptions, SiteForm, scan};

use crate::support::{Project, brief, registry};

#[test]
fn the_clean_fixture_has_no_findings() {
    let report = Project::harbor().scan();
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    assert_eq!(report.dynamic_keys, 0, "rollup.rs binds `$1` to a constant");
    assert_eq!(report.files_scanned, 6);
}

#[test]
fn an_unregistered_literal_is_reported_where_it_is_written() {
    let project = Project::harbor();
    project.write(
        "services/jobs/cleanup.py",
        "def run(cur):\n    cur.execute(\"SELECT pg_advisory_lock(4242)\")\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/cleanup.py:2 unregistered-id"]
    );
    let finding = &report.findings[0];
    assert_eq!(finding.column(), Some(25), "the call, inside the string");
    assert_eq!(
        finding.source_line(),
        Some("    cur.execute(\"SELECT pg_advisory_lock(4242)\")")
    );
    assert!(finding.help.is_some());
}

#[test]
fn a_constant_whose_value_differs_from_the_registry_is_a_mismatch() {
    let project = Project::harbor();
    let locks = "pub const ADVISORY_LOCK_INVOICE_ROLLUP: i64 = 1_001_009;\npub const ADVISORY_LOCK_RELOAD_BASE: i32 = 1_001_004;\n";
    project.write("crates/harbor-core/src/locks.rs", locks);
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["crates/harbor-core/src/locks.rs:1 constant-value-mismatch"]
    );
    assert!(
        report.findings[0].message.contains("1_001_001"),
        "{}",
        report.findings[0].message
    );
}

#[test]
fn a_retired_id_in_use_is_reported() {
    let project = Project::harbor();
    project.write(
        "services/jobs/old.go",
        "package jobs\n\nconst q = \"SELECT pg_try_advisory_lock(1001003)\"\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/old.go:3 retired-id-in-use"]
    );
}

#[test]
fn a_plugins_id_in_core_code_is_reported_however_it_is_written() {
    let project = Project::harbor();
    project.write(
        "crates/harbor-core/src/billing.rs",
        "const SQL: &str = \"SELECT pg_advisory_lock(1001002)\";\nconst BY_NAME: &str = \"SELECT pg_advisory_unlock({BILLING_LOCK_ID})\";\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        [
            "crates/harbor-core/src/billing.rs:1 handover-in-core-code",
            "crates/harbor-core/src/billing.rs:2 handover-in-core-code",
        ]
    );
    assert!(report.findings[0].message.contains("plugins/billing/"));
}

#[test]
fn plugin_directories_can_be_given_instead_of_found() {
    let project = Project::harbor();
    let options = ScanOptions {
        threads: 1,
        plugins: Some(vec![PluginDir {
            name: "billing".into(),
            dir: "elsewhere".into(),
            ids: vec![1_001_002],
        }]),
        ..ScanOptions::default()
    };
    let report = scan(&registry(project.path()), project.path(), &options);
    assert_eq!(
        brief(&report.findings),
        [
            "plugins/billing/worker.py:1 handover-in-core-code",
            "plugins/billing/worker.py:5 handover-in-core-code",
            // The list given is the whole truth: shipping is left out, so its id is unknown.
            "plugins/shipping/shipping/labels.py:3 unregistered-id",
        ]
    );
}

#[test]
fn an_external_id_in_a_file_its_entry_does_not_list_is_undeclared() {
    let project = Project::harbor();
    project.write(
        "services/api/catalog_admin.py",
        "_CATALOG_LOCK_KEY = 8_675_309\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/api/catalog_admin.py:1 undeclared-site"]
    );
    assert!(
        report.findings[0]
            .help
            .as_deref()
            .unwrap_or("")
            .contains("services/api/catalog_admin.py")
    );
}

#[test]
fn a_core_constant_used_by_its_literal_value_outside_the_constants_file_is_undeclared() {
    let project = Project::harbor();
    project.write(
        "services/jobs/rollup.rb",
        "conn.execute('SELECT pg_advisory_lock(1001001)')\n",
    );
    project.write(
        "services/jobs/by_name.rb",
        "conn.execute(\"SELECT pg_advisory_lock(#{Locks::ADVISORY_LOCK_INVOICE_ROLLUP})\")\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/rollup.rb:1 undeclared-site"]
    );
}

#[test]
fn a_git_ignored_file_is_never_read() {
    let project = Project::harbor();
    let baseline = project.scan();
    project.write("generated/locks.py", "ADVISORY_LOCK_GENERATED = 4242\n");
    let report = project.scan();
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    assert_eq!(report.files_scanned, baseline.files_scanned);
    assert_eq!(report.bytes_scanned, baseline.bytes_scanned);
}

#[test]
fn an_excluded_glob_is_never_read() {
    let project = Project::harbor();
    let baseline = project.scan();
    project.write("vendor/lib/locks.py", "ADVISORY_LOCK_VENDORED = 4242\n");
    let report = project.scan();
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    assert_eq!(report.bytes_scanned, baseline.bytes_scanned);
}

#[test]
fn an_allowed_line_is_exempt_but_still_a_site() {
    let project = Project::harbor();
    project.write(
        "services/jobs/legacy.py",
        "cur.execute(\"SELECT pg_advisory_lock(4242)\")  # lockward: allow(unregistered-id)\ncur.execute(\"SELECT pg_advisory_lock(4243)\")  # lockward: allow(dynamic-key)\n",
    );
    let report = project.scan();
    // Line 2's allow names a code its line does not have: it allows nothing.
    assert_eq!(
        brief(&report.findings),
        [
            "services/jobs/legacy.py:2 unregistered-id",
            "services/jobs/legacy.py:2 unused-allow"
        ]
    );
    assert_eq!(report.uses_of(4242).count(), 1);
}

#[test]
fn a_registered_constant_missing_from_the_constants_file_is_reported() {
    let project = Project::harbor();
    project.write(
        "crates/harbor-core/src/locks.rs",
        "pub const ADVISORY_LOCK_INVOICE_ROLLUP: i64 = 1_001_001;\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["crates/harbor-core/src/locks.rs constant-missing"]
    );
    assert!(
        report.findings[0]
            .message
            .contains("ADVISORY_LOCK_RELOAD_BASE")
    );
}

#[test]
fn a_definition_whose_value_the_formatter_wrapped_is_still_a_definition() {
    let project = Project::harbor();
    project.write(
        "crates/harbor-core/src/locks.rs",
        "pub const ADVISORY_LOCK_INVOICE_ROLLUP: i64 = 1_001_001;\npub const ADVISORY_LOCK_RELOAD_BASE: i32 =\n    1_001_004;\n",
    );
    project.write(
        "services/api/Billing.java",
        "class Billing {\n  static final long BILLING_LOCK_ID =\n      4_242L;\n}\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/api/Billing.java:2 unregistered-id"]
    );
}

#[test]
fn a_mismatched_copy_elsewhere_does_not_hide_the_missing_constant() {
    let project = Project::harbor();
    project.write(
        "crates/harbor-core/src/locks.rs",
        "pub const ADVISORY_LOCK_INVOICE_ROLLUP: i64 = 1_001_001;\n",
    );
    project.write("tests/mock_locks.py", "ADVISORY_LOCK_RELOAD_BASE = 5\n");
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        [
            "crates/harbor-core/src/locks.rs constant-missing",
            "tests/mock_locks.py:1 constant-value-mismatch",
        ]
    );
}

#[test]
fn an_external_defined_in_none_of_its_files_is_not_found() {
    let project = Project::harbor();
    project.write("services/api/catalog.py", "def write(cur):\n    pass\n");
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/api/catalog.py external-not-found"]
    );
}

#[test]
fn one_id_under_two_names_is_a_duplicate_definition() {
    let project = Project::harbor();
    project.write(
        "crates/harbor-core/src/locks.rs",
        "pub const ADVISORY_LOCK_INVOICE_ROLLUP: i64 = 1_001_001;\npub const ADVISORY_LOCK_RELOAD_BASE: i32 = 1_001_004;\npub const ADVISORY_LOCK_ROLLUP_AGAIN: i64 = 1_001_001;\n",
    );
    project.write("tools/a.py", "ADVISORY_LOCK_TOOL = 5555\n");
    project.write("tools/b.py", "TOOL_LOCK_ID = 5555\n");
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        [
            "crates/harbor-core/src/locks.rs:3 duplicate-definition",
            "tools/a.py:1 unregistered-id",
            "tools/b.py:1 unregistered-id",
            "tools/b.py:1 duplicate-definition",
        ]
    );
    assert_eq!(report.findings[3].labels[0].path, "tools/a.py");
}

#[test]
fn messages_show_ids_as_the_code_writes_them() {
    let project = Project::harbor();
    let locks = "pub const ADVISORY_LOCK_INVOICE_ROLLUP: i64 = 1_001_009;\npub const ADVISORY_LOCK_RELOAD_BASE: i32 = 1_001_004;\n";
    project.write("crates/harbor-core/src/locks.rs", locks);
    project.write("tools/a.kt", "const val ADVISORY_LOCK_TOOL = 0X7A_0009L\n");
    project.write(
        "tools/b.go",
        "package b\n\nconst ToolLockId int64 = 0x7a_0009\n",
    );
    project.write(
        "tools/c.sql",
        "SELECT pg_advisory_lock(- 0x1_F);\nSELECT pg_advisory_lock(4_242::bigint);\n",
    );
    let report = project.scan();
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`ADVISORY_LOCK_INVOICE_ROLLUP` is 1_001_009 here, but the registry gives it id 1_001_001",
            "advisory lock id 0X7A_0009L (`ADVISORY_LOCK_TOOL`) is not in the registry",
            "advisory lock id 0x7a_0009 (`ToolLockId`) is not in the registry",
            "id 0x7a_0009 is defined by two constants, `ADVISORY_LOCK_TOOL` and `ToolLockId`",
            "advisory lock id -0x1_F is not in the registry",
            "advisory lock id 4_242 is not in the registry",
        ]
    );
    assert_eq!(
        report.findings[3].labels[0].message,
        "`ADVISORY_LOCK_TOOL` defines 0X7A_0009L here"
    );
}

#[test]
fn uses_of_lists_every_site_of_an_id_for_retire() {
    let report = Project::harbor().scan();
    let uses: Vec<(String, usize)> = report
        .uses_of(1_001_001)
        .map(|s| (s.path.clone(), s.line))
        .collect();
    assert_eq!(
        uses,
        [
            ("crates/harbor-core/src/locks.rs".to_owned(), 4),
            ("crates/harbor-core/src/rollup.rs".to_owned(), 5)
        ]
    );
    let family: Vec<&SiteForm> = report.uses_of(1_001_004).map(|s| &s.form).collect();
    assert_eq!(family.len(), 2, "{family:?}");
    assert!(report.uses_of(1_001_003).next().is_none());
}

#[test]
fn planted_faults_snapshot() {
    let project = Project::harbor();
    project.write(
        "services/jobs/cleanup.py",
        "cur.execute(\"SELECT pg_try_advisory_lock(4242)\")\n",
    );
    project.write(
        "services/jobs/old.go",
        "package jobs\n\nconst q = \"SELECT pg_try_advisory_lock(1001003)\"\n",
    );
    project.write(
        "crates/harbor-core/src/billing.rs",
        "const SQL: &str = \"SELECT pg_advisory_lock(1001002)\";\n",
    );
    project.write(
        "services/api/catalog_admin.py",
        "_CATALOG_LOCK_KEY = 8_675_309\n",
    );
    let report = project.scan();
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.severity != Severity::Warning)
    );
    insta::assert_json_snapshot!("planted_faults", report.findings);
}

#[test]
fn include_globs_limit_the_scan_but_never_read_ignored_files() {
    let project = Project::harbor();
    let registry = std::fs::read_to_string(project.path().join("lockward.toml")).expect("readable");
    project.write(
        "lockward.toml",
        &registry.replace(
            "[scan]\n",
            "[scan]\ninclude = [\"services\", \"generated\"]\n",
        ),
    );
    project.write("generated/locks.py", "ADVISORY_LOCK_GENERATED = 4242\n");
    project.write("tools/locks.py", "ADVISORY_LOCK_TOOL = 4243\n");
    let report = project.scan();
    assert_eq!(report.files_scanned, 2, "only services/api/*.py");
    assert_eq!(
        brief(&report.findings),
        [
            "crates/harbor-core/src/locks.rs constant-missing",
            "crates/harbor-core/src/locks.rs constant-missing"
        ]
    );
}

#[test]
fn progress_counts_what_the_report_counts() {
    let project = Project::harbor();
    let progress = std::sync::Arc::new(lockward_scan::Progress::default());
    let options = ScanOptions {
        threads: 2,
        progress: Some(progress.clone()),
        ..ScanOptions::default()
    };
    let report = scan(&registry(project.path()), project.path(), &options);
    assert_eq!(
        (progress.files(), progress.bytes()),
        (report.files_scanned, report.bytes_scanned)
    );
    assert!(report.bytes_scanned > 0);
}

#[test]
fn a_plugins_own_id_is_fine_in_the_plugin_and_not_in_core() {
    let project = Project::harbor();
    let clean = project.scan();
    assert!(
        clean
            .uses_of(7_300_001)
            .any(|site| site.path == "plugins/shipping/shipping/labels.py")
    );
    project.write(
        "services/api/labels.py",
        "cur.execute(\"SELECT pg_advisory_lock(7300001)\")\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/api/labels.py:1 handover-in-core-code"]
    );
    assert!(
        report.findings[0].message.contains("shipping"),
        "{}",
        report.findings[0].message
    );
}

#[test]
fn a_name_two_externals_share_resolves_to_the_one_beside_the_use() {
    let project = Project::harbor();
    let registry = std::fs::read_to_string(project.path().join("lockward.toml")).expect("readable");
    let search = "\n[[lock]]\nid = 8_675_310\nconstant = \"_CATALOG_LOCK_KEY\"\nworker = \"search catalog\"\ndefined_in = [\"services/search/catalog.py\"]\n";
    project.write("lockward.toml", &format!("{registry}{search}"));
    project.write(
        "services/search/catalog.py",
        "_CATALOG_LOCK_KEY = 8_675_310\n",
    );
    project.write(
        "services/search/reindex.py",
        "from .catalog import _CATALOG_LOCK_KEY\ncur.execute(f\"SELECT pg_advisory_lock({_CATALOG_LOCK_KEY})\")\n",
    );
    let report = project.scan();
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    let reindex: Vec<i64> = report
        .sites
        .iter()
        .filter(|s| s.path == "services/search/reindex.py")
        .map(|s| s.id)
        .collect();
    assert_eq!(reindex, [8_675_310]);
    let sync: Vec<i64> = report
        .sites
        .iter()
        .filter(|s| s.path == "services/api/catalog_sync.py")
        .map(|s| s.id)
        .collect();
    assert_eq!(sync, [8_675_309]);
}

#[test]
fn configured_patterns_and_keywords_replace_and_extend_the_defaults() {
    let project = Project::harbor();
    let registry = std::fs::read_to_string(project.path().join("lockward.toml")).expect("readable");
    let scan_table = "[scan]\nconstant_patterns = [\"ADVISORY_LOCK*\", \"*_LOCK_KEY\", \"*_MUTEX_ID\"]\nkeywords = [\"lock_number\"]\n";
    project.write("lockward.toml", &registry.replace("[scan]\n", scan_table));
    project.write(
        "services/jobs/custom.py",
        "BILLING_MUTEX_ID = 4242\nJob(lock_number=4243)\nJob(advisory_lock_id=4244)\nSHARD_LOCK_ID = 4245\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        [
            "services/jobs/custom.py:1 unregistered-id",
            "services/jobs/custom.py:2 unregistered-id",
            "services/jobs/custom.py:3 unregistered-id",
        ],
        "`*_LOCK_ID` is no longer a pattern; `advisory_lock_id` stays a keyword"
    );
}

#[test]
fn one_text_is_checked_as_the_tree_scan_checks_it_at_its_path() {
    let project = Project::harbor();
    let text = "def cleanup(cur):\n    cur.execute(\"SELECT pg_advisory_lock(4242)\")\n";
    project.write("services/jobs/cleanup.py", text);
    let tree = project.scan();
    let registry = registry(project.path());
    let one = lockward_scan::scan_source(&registry, "services/jobs/cleanup.py", text);
    assert_eq!(
        brief(&one.findings),
        ["services/jobs/cleanup.py:2 unregistered-id"]
    );
    assert_eq!(
        one.findings, tree.findings,
        "the same finding, span and help"
    );
    assert_eq!(one.files_scanned, 1);
    let unknown = lockward_scan::scan_source(&registry, "notes.txt", text);
    assert!(unknown.findings.is_empty() && unknown.files_scanned == 0);
}

/// Issue 9: a name matching the patterns with a value the scan cannot compute checked clean.
#[test]
fn a_matching_name_whose_value_cannot_be_computed_is_a_note_and_counted() {
    let project = Project::harbor();
    project.write(
        "services/jobs/derived.py",
        "\
\"\"\"ADVISORY_LOCK_IN_DOCSTRING = compute()\"\"\"
# ADVISORY_LOCK_IN_COMMENT = compute()
ADVISORY_LOCK_COMPUTED = compute_lock_id()
ADVISORY_LOCK_IDS = {
    \"reindex\": 7_000_100,
}
ADVISORY_LOCK_QUOTED = \"12345\"
ADVISORY_LOCK_TIMEOUT = \"5s\"
ADVISORY_LOCK_RETRY_SECONDS = 1.5
ADVISORY_LOCK_UNSET = None
ADVISORY_LOCK_FACTORY = lambda: None
ADVISORY_LOCK_KNOWN = compute()  # lockward: allow(unresolved-constant)

def advisory_lock(conn, key):
    return conn
",
    );
    project.write(
        "services/api/derived.ts",
        "export const ADVISORY_LOCK_HANDLER = (id: number) => id;\nexport const ADVISORY_LOCK_FROM_ENV = Number(process.env.LOCK);\nexport type AdvisoryLockId = number;\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        [
            "services/api/derived.ts:2 unresolved-constant",
            "services/jobs/derived.py:3 unresolved-constant",
            // The dict's entries and the quoted number are ids the scan reads (item 3).
            "services/jobs/derived.py:5 unregistered-id",
            "services/jobs/derived.py:7 unregistered-id",
        ]
    );
    assert!(
        report
            .findings
            .iter()
            .filter(|finding| finding.code.as_str() == "unresolved-constant")
            .all(|finding| finding.severity == Severity::Note)
    );
    assert_eq!(
        report.findings[1].message,
        "`ADVISORY_LOCK_COMPUTED` matches the lock constant patterns but its value `compute_lock_id()` is not a value the scan can compute"
    );
    // Counted whether or not allowed, as dynamic keys are.
    assert_eq!(report.unresolved_constants, 3);
}

#[test]
fn files_the_scan_skips_are_counted_and_reported() {
    let project = Project::harbor();
    project.write(
        "services/jobs/blob.py",
        "ADVISORY_LOCK_BLOB = 4242\n\0\0binary",
    );
    project.write("services/jobs/plain_blob.py", "no trigger here\n\0\0binary");
    project.write(
        "services/jobs/huge.py",
        &format!("ADVISORY_LOCK_HUGE = 4243\n{}", "#\n".repeat(1 << 19)),
    );
    std::os::unix::fs::symlink(
        "../../outside/locks.py",
        project.path().join("services/jobs/link.py"),
    )
    .expect("symlink");
    // A link to a file in the tree loses nothing: the file is read where it lies.
    std::os::unix::fs::symlink("blob.py", project.path().join("services/jobs/alias.py"))
        .expect("symlink");
    let report = scan(
        &registry(project.path()),
        project.path(),
        &ScanOptions {
            threads: 2,
            max_file_size: 1 << 19,
            ..ScanOptions::default()
        },
    );
    assert_eq!(
        brief(&report.findings),
        [
            "services/jobs/blob.py file-not-read",
            "services/jobs/huge.py file-not-read",
            "services/jobs/link.py file-not-read",
        ]
    );
    assert!(report.findings.iter().all(|f| f.severity == Severity::Note));
    assert!(
        report.findings[0].message.contains("NUL byte"),
        "{}",
        report.findings[0].message
    );
    assert!(report.findings[1].message.contains("larger than"));
    assert!(report.findings[2].message.contains("symbolic link"));
    assert_eq!(
        report.not_read,
        lockward_scan::NotRead {
            binary: 1,
            too_large: 1,
            not_followed: 1,
            unreadable: 0,
        }
    );
}

#[test]
fn an_allow_that_allows_nothing_and_an_unknown_code_are_reported() {
    let project = Project::harbor();
    project.write(
        "services/jobs/allows.py",
        "\
cur.execute(\"SELECT pg_advisory_lock(4242)\")  # lockward: allow(unregistered-id, dynamic-kye)
RETRIES = 3  # lockward: allow(undeclared-site)
# A trailing `lockward: allow(CODE, ...)` comment exempts its line: documentation, not an allow.
",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        [
            "services/jobs/allows.py:1 unknown-allow-code",
            "services/jobs/allows.py:2 unused-allow",
        ]
    );
    let unknown = &report.findings[0];
    assert_eq!(unknown.severity, Severity::Error);
    assert_eq!(unknown.column(), Some(82), "at the code in the comment");
    assert_eq!(unknown.help.as_deref(), Some("did you mean `dynamic-key`?"));
    assert_eq!(report.findings[1].severity, Severity::Warning);
    assert_eq!(report.findings[1].column(), Some(32));
}

/// `duplicate-definition` is made by the pass over the whole tree, after every file's sites.
#[test]
fn an_allow_used_by_the_whole_tree_pass_is_used() {
    let project = Project::harbor();
    project.write(
        "services/jobs/one.py",
        "ADVISORY_LOCK_ONE = 4300  # lockward: allow(unregistered-id)\n",
    );
    project.write(
        "services/jobs/two.py",
        "ADVISORY_LOCK_TWO = 4300  # lockward: allow(unregistered-id, duplicate-definition)\n",
    );
    assert_eq!(brief(&project.scan().findings), Vec::<String>::new());
    project.write(
        "services/jobs/two.py",
        "ADVISORY_LOCK_TWO = 4301  # lockward: allow(unregistered-id, duplicate-definition)\n",
    );
    assert_eq!(
        brief(&project.scan().findings),
        ["services/jobs/two.py:1 unused-allow"]
    );
}

/// `unsafe-js-integer` is found while a file is read, before the check: its allow was applied
/// there and never recorded as used, so a correct allow read as `unused-allow`.
#[test]
fn an_allow_of_a_finding_made_while_reading_the_file_is_used() {
    let project = Project::harbor();
    project.write(
        "services/api/big.js",
        "export const ADVISORY_LOCK_BIG = 9007199254740993; // lockward: allow(unsafe-js-integer, unregistered-id)\n",
    );
    assert_eq!(brief(&project.scan().findings), Vec::<String>::new());
    project.write(
        "services/api/big.js",
        "export const ADVISORY_LOCK_BIG = 9007199254740993; // lockward: allow(unregistered-id)\n",
    );
    assert_eq!(
        brief(&project.scan().findings),
        ["services/api/big.js:1 unsafe-js-integer"]
    );
}

/// One file alone cannot tell whether the whole tree would use an allow; a bad code it can.
#[test]
fn scan_source_reports_unknown_codes_but_not_unused_allows() {
    let registry = registry(&crate::support::data("fixtures/harbor"));
    let report = lockward_scan::scan_source(
        &registry,
        "services/jobs/two.py",
        "ADVISORY_LOCK_TWO = 4300  # lockward: allow(unregistered-id, duplicate-definition, nope)\n",
    );
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/two.py:1 unknown-allow-code"]
    );
}

/// The largest safe JavaScript integer, 2^53 - 1, is exact: only beyond it is a literal
/// `unsafe-js-integer` (a mutation flagging 2^53 - 1 itself went unnoticed).
#[test]
fn two_to_the_53_minus_one_is_safe_in_javascript_and_two_to_the_53_is_not() {
    let project = Project::harbor();
    project.write(
        "services/api/edge.js",
        "export const ADVISORY_LOCK_EDGE = 9007199254740991; // lockward: allow(unregistered-id)\n",
    );
    assert_eq!(brief(&project.scan().findings), Vec::<String>::new());
    project.write(
        "services/api/edge.js",
        "export const ADVISORY_LOCK_EDGE = 9007199254740992; // lockward: allow(unregistered-id)\n",
    );
    assert_eq!(
        brief(&project.scan().findings),
        ["services/api/edge.js:1 unsafe-js-integer"]
    );
}

/// Ruby's `rescue LockError => e` names the exception: it was read as an assignment of `e` to a
/// name matching the patterns, an `unresolved-constant` note on every rescue of a lock error.
#[test]
fn a_ruby_rescue_clause_binds_no_value_to_the_exception_class() {
    let project = Project::harbor();
    project.write(
        "app/jobs/reaper.rb",
        "class Reaper\n  def run\n    work\n  rescue AdvisoryLockError => e\n    log(e)\n  rescue Foo::AdvisoryLockTimeout, AdvisoryLockGone => e\n    log(e)\n  end\nend\n",
    );
    let report = project.scan();
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    assert_eq!(report.unresolved_constants, 0);
    // A hash entry with `=>` is still one.
    project.write(
        "app/jobs/locks.rb",
        "LOCKS = { ADVISORY_LOCK_REAPER => 4244 }\n",
    );
    assert_eq!(
        brief(&project.scan().findings),
        ["app/jobs/locks.rb:1 unregistered-id"]
    );
}

/// A family's id taken as one bigint key, or an exact id taken as the first int4 of a pair,
/// passed `check`: PostgreSQL keeps the two forms apart, so these are locks no other holder of
/// the entry takes. A family's members and its bigint form `(id << 32) | n` stay fine.
#[test]
fn a_lock_call_in_the_other_key_form_than_its_entry_is_a_key_shape_mismatch() {
    let project = Project::harbor();
    project.write(
        "services/jobs/shapes.py",
        "from harbor.locks import ADVISORY_LOCK_RELOAD_BASE, ADVISORY_LOCK_INVOICE_ROLLUP\n\ndef run(cur, member):\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (ADVISORY_LOCK_RELOAD_BASE,))\n    cur.execute(\"SELECT pg_advisory_lock(%s, %s)\", (ADVISORY_LOCK_INVOICE_ROLLUP, member))\n    cur.execute(\"SELECT pg_advisory_lock(%s, %s)\", (ADVISORY_LOCK_RELOAD_BASE, member))\n    cur.execute(\"SELECT pg_advisory_lock(%s)\", (ADVISORY_LOCK_INVOICE_ROLLUP,))\n",
    );
    assert_eq!(
        brief(&project.scan().findings),
        [
            "services/jobs/shapes.py:4 key-shape-mismatch",
            "services/jobs/shapes.py:5 key-shape-mismatch",
        ]
    );
}

/// A helper that locks a pair with its parameter as the family (`pg_advisory_lock(%s, %s)`,
/// `(family, member)`) is a wrapper of the family: its callers are sites of the pair's form, and
/// one passing an exact id as the family takes a lock no other holder of the entry takes.
#[test]
fn a_wrapper_of_a_pairs_family_gives_its_callers_the_pair_form() {
    let project = Project::harbor();
    project.write(
        "services/jobs/pairs.py",
        "from harbor.locks import ADVISORY_LOCK_RELOAD_BASE, ADVISORY_LOCK_INVOICE_ROLLUP\n\ndef lock_member(cur, family, member):\n    cur.execute(\"SELECT pg_advisory_lock(%s, %s)\", (family, member))\n\ndef run(cur, member):\n    lock_member(cur, ADVISORY_LOCK_RELOAD_BASE, member)\n    lock_member(cur, ADVISORY_LOCK_INVOICE_ROLLUP, member)\n",
    );
    let report = project.scan();
    assert_eq!(
        brief(&report.findings),
        ["services/jobs/pairs.py:8 key-shape-mismatch"]
    );
    assert_eq!(pair_site_lines(&report, "services/jobs/pairs.py"), [7, 8]);
}

/// A call that leaves out a helper's family parameter takes the default in the pair's form
/// (`lock_member(cur, member)` over `family=ADVISORY_LOCK_RELOAD_BASE` locked as
/// `pg_advisory_lock(%s, %s)`): it was sited as one bigint key, a `key-shape-mismatch` against
/// the family's own entry.
#[test]
fn a_call_leaving_out_a_pairs_family_default_takes_it_in_the_pair_form() {
    let project = Project::harbor();
    project.write(
        "services/jobs/defaults.py",
        "from harbor.locks import ADVISORY_LOCK_RELOAD_BASE\n\ndef lock_member(cur, member, family=ADVISORY_LOCK_RELOAD_BASE):\n    cur.execute(\"SELECT pg_advisory_lock(%s, %s)\", (family, member))\n\ndef run(cur, member):\n    lock_member(cur, member)\n",
    );
    let report = project.scan();
    assert_eq!(brief(&report.findings), Vec::<String>::new());
    assert_eq!(pair_site_lines(&report, "services/jobs/defaults.py"), [7]);
}

/// The lines of `path` with a site of a pair's form.
fn pair_site_lines(report: &lockward_scan::ScanReport, path: &str) -> Vec<usize> {
    report
        .sites
        .iter()
        .filter(|site| site.path == path)
        .filter(|site| matches!(site.key, lockward_scan::SiteKey::Pair(_)))
        .map(|site| site.line)
        .collect()
}

/// A JavaScript number beyond 2^53 reaches PostgreSQL as node-postgres writes it, `String(n)`:
/// `-7311104411650000123` is sent as `-7311104411650000000`, not as the double's exact value
/// `-7311104411649999872` that the finding named (checked with Node.js).
#[test]
fn an_unsafe_javascript_integer_names_the_key_node_postgres_sends() {
    let project = Project::harbor();
    project.write(
        "services/api/neg.js",
        "export const ADVISORY_LOCK_NEG = -7311104411650000123; // lockward: allow(unregistered-id)\n",
    );
    let report = project.scan();
    let finding = report
        .findings
        .iter()
        .find(|finding| finding.code == lockward_registry::Code::UnsafeJsInteger)
        .expect("unsafe-js-integer");
    assert!(
        finding
            .message
            .contains("the code runs with -7311104411650000000, not the id -7311104411650000123"),
        "{}",
        finding.message
    );
}
