//! One fixture per registry rule (DESIGN §2), each breaking exactly that rule.

use lockward_registry::{Code, Finding, KeyShape, Kind, Severity, parse};

/// The errors a fixture raises (warnings, such as an id outside the block, left out).
fn errors(fixture: &str) -> Vec<Finding> {
    problems(fixture)
        .into_iter()
        .filter(Finding::is_error)
        .collect()
}

fn problems(fixture: &str) -> Vec<Finding> {
    let text = crate::read(&format!("rules/{fixture}.toml"));
    match parse("lockward.toml", &text) {
        Ok(loaded) => panic!(
            "{fixture} should break a rule, but parsed: {:?}",
            loaded.registry
        ),
        Err(findings) => findings,
    }
}

fn codes(findings: &[Finding]) -> Vec<&'static str> {
    findings
        .iter()
        .map(|finding| finding.code.as_str())
        .collect()
}

/// Each fixture breaks one rule; the finding names it, and the JSON is what users see.
#[test]
fn each_rule_is_reported_with_its_code_and_location() {
    let cases = [
        ("duplicate-id", Code::DuplicateId),
        ("conflicting-kinds", Code::ConflictingKinds),
        ("missing-worker", Code::MissingWorker),
        ("missing-worker-external", Code::MissingWorker),
        ("invalid-constant-name", Code::InvalidConstantName),
        ("duplicate-constant", Code::DuplicateConstant),
        ("duplicate-constant-external", Code::DuplicateConstant),
        ("family-out-of-range", Code::FamilyOutOfRange),
        ("id-out-of-range", Code::IdOutOfRange),
        ("unknown-key", Code::UnknownKey),
        ("wrong-type", Code::WrongType),
        ("missing-kind", Code::MissingField),
        ("bad-key-shape", Code::WrongType),
        ("invalid-block", Code::InvalidBlock),
        ("missing-block", Code::MissingField),
        ("invalid-glob", Code::InvalidGlob),
        ("toml-syntax", Code::TomlSyntax),
        ("path-outside-project", Code::PathOutsideProject),
        ("path-outside-project-absolute", Code::PathOutsideProject),
        // A `..` glob alone (it was caught only through an absolute one).
        ("glob-outside-project-parent", Code::GlobOutsideProject),
    ];
    for (fixture, code) in cases {
        let findings = errors(fixture);
        assert_eq!(codes(&findings), [code.as_str()], "{fixture}");
        let finding = &findings[0];
        assert_eq!(finding.severity, Severity::Error, "{fixture}");
        assert_eq!(finding.path, "lockward.toml");
        assert!(
            finding.span.is_some(),
            "{fixture} has no location: {finding:?}"
        );
        insta::assert_json_snapshot!(fixture, problems(fixture));
    }
}

#[test]
fn unknown_keys_suggest_the_near_miss() {
    let findings = errors("unknown-key");
    assert_eq!(
        findings[0].help.as_deref(),
        Some("did you mean `defined_in`?")
    );
    assert_eq!(
        findings[0].source_line(),
        Some("defined-in = [\"services/api/catalog.py\"]")
    );
    assert_eq!(
        (
            findings[0].line(),
            findings[0].column(),
            findings[0]
                .span
                .as_ref()
                .map(lockward_registry::Span::width)
        ),
        (Some(12), Some(1), Some(10))
    );
}

#[test]
fn duplicate_ids_are_caught_whatever_form_they_are_written_in() {
    let findings = problems("duplicate-id");
    assert!(
        findings[0].message.contains("0xF4629"),
        "{}",
        findings[0].message
    );
    assert_eq!(
        findings[0].labels[0].line(),
        Some(9),
        "the label points at the first entry"
    );
}

#[test]
fn every_problem_is_collected_not_just_the_first() {
    let findings = problems("many-problems");
    let mut found = codes(&findings);
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "conflicting-kinds",
            "duplicate-id",
            "missing-worker",
            "unknown-key"
        ]
    );
    insta::assert_json_snapshot!(findings);
}

#[test]
fn a_core_constant_outside_the_block_is_a_warning_not_an_error() {
    let text = crate::read("rules/outside-block.toml");
    let loaded = parse("lockward.toml", &text).expect("a legacy id is allowed");
    assert_eq!(codes(&loaded.warnings), ["constant-outside-block"]);
    assert_eq!(loaded.warnings[0].severity, Severity::Warning);
}

#[test]
fn a_valid_registry_exposes_every_kind_and_keeps_literals() {
    let text = crate::read("rules/valid.toml");
    let loaded = parse("lockward.toml", &text).expect("valid");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let registry = loaded.registry;
    let kinds: Vec<&str> = registry
        .locks()
        .iter()
        .map(|lock| lock.kind().as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "constant", "handover", "retired", "constant", "external", "external", "reserved"
        ],
        "sorted by numeric id"
    );
    let rollup = registry
        .lock_by_constant("ADVISORY_LOCK_INVOICE_ROLLUP")
        .expect("registered");
    assert_eq!(rollup.id().literal(), "1_001_001");
    assert_eq!(rollup.owner().as_deref(), Some("core"));
    assert_eq!(
        registry.lock(0x6E69_7374).expect("reserved").id().literal(),
        "0x6E697374"
    );
    assert_eq!(
        registry.family(1_001_004).expect("family").key(),
        KeyShape::Family
    );
    assert!(
        registry.lock_by_constant("_CATALOG_LOCK_KEY").is_none(),
        "two externals share it"
    );
    assert_eq!(registry.locks_named("_CATALOG_LOCK_KEY").count(), 2);
    assert_eq!(registry.core_constant_count(), 2);
    assert_eq!(
        registry.lock(1_001_002).map(|lock| lock.kind().clone()),
        Some(Kind::Handover {
            plugin: "billing".to_owned()
        })
    );
    assert_eq!(registry.locks_of_kind("retired").count(), 1);
}

#[test]
fn next_free_id_is_above_the_highest_recorded_id_in_the_block() {
    let text = crate::read("rules/valid.toml");
    let registry = parse("lockward.toml", &text).expect("valid").registry;
    assert_eq!(
        registry.next_free_id([]).map(|id| id.to_string()),
        Some("1_001_005".to_owned())
    );
    // A plugin manifest's id in the block counts; one outside it does not.
    let next = registry
        .next_free_id([1_001_010, 7_300_001])
        .expect("room left");
    assert_eq!(next.literal(), "1_001_011");
}

#[test]
fn a_used_up_block_has_no_next_free_id() {
    let text = "[project]\nname = \"x\"\n[core]\nconstants = \"a.py\"\nblock = { start = 1, end = 2 }\n\
                [[lock]]\nid = 2\nretired = \"gone\"\n";
    let registry = parse("lockward.toml", text).expect("valid").registry;
    assert_eq!(registry.next_free_id([]), None);
}

#[test]
fn a_non_utf8_file_is_reported_where_the_bad_byte_is() {
    let mut bytes = b"[project]\nname = \"har".to_vec();
    bytes.push(0xFF);
    let finding = lockward_registry::decode_utf8("lockward.toml", bytes).expect_err("not UTF-8");
    assert_eq!(finding.code, Code::Unreadable);
    assert_eq!((finding.line(), finding.column()), (Some(2), Some(12)));
}

#[test]
fn a_missing_registry_file_is_an_io_error() {
    let error = lockward_registry::Registry::load(
        std::path::Path::new("/nonexistent/lockward.toml"),
        "lockward.toml",
    )
    .expect_err("missing");
    assert!(matches!(error, lockward_registry::LoadError::Io { .. }));
}

/// Every bad `[scan] wrappers` entry is reported where it is written, all in one pass; the
/// good entry is kept.
#[test]
fn bad_wrapper_entries_are_each_reported_at_their_place() {
    let findings = problems("bad-wrappers");
    let brief: Vec<(Option<usize>, Option<usize>, &str)> = findings
        .iter()
        .map(|f| (f.line(), f.column(), f.code.as_str()))
        .collect();
    assert_eq!(
        brief,
        [
            (Some(11), Some(3), "missing-field"),
            (Some(12), Some(34), "wrong-type"),
            (Some(13), Some(12), "wrong-type"),
            (Some(14), Some(3), "missing-field"),
            (Some(14), Some(23), "unknown-key"),
            (Some(15), Some(3), "wrong-type"),
            (Some(16), Some(30), "wrong-type"),
        ],
        "{findings:#?}"
    );
    assert_eq!(
        findings[4].help.as_deref(),
        Some("did you mean `position`?")
    );
}

#[test]
fn declared_wrappers_are_kept_with_their_position_and_keyword() {
    let text = crate::read("rules/valid.toml").replace(
        "[core]",
        "[scan]\nwrappers = [{ name = \"Locker::Acquire\", position = 2, keyword = \"id\" }]\n\n[core]",
    );
    let loaded = parse("lockward.toml", &text).expect("a valid registry");
    assert_eq!(
        loaded.registry.scan_settings().wrappers,
        [lockward_registry::Wrapper::new(
            "Locker.Acquire",
            Some(2),
            Some("id")
        )]
    );
}
