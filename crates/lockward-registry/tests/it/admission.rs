//! Plugin admission (DESIGN §3): one manifest per refusal rule.

use lockward_registry::{Code, Finding, Manifest, Registry, Verdict, parse};

fn registry() -> Registry {
    parse("lockward.toml", &crate::read("admission/lockward.toml"))
        .expect("valid")
        .registry
}

fn manifest(file: &str) -> Result<Manifest, Vec<Finding>> {
    let path = format!("plugins/{file}");
    Manifest::parse(&path, &crate::read(&format!("admission/{path}")), "plugin")
}

/// Admits the named manifests together, returning the report.
fn admit(files: &[&str]) -> lockward_registry::AdmissionReport {
    let parsed = files
        .iter()
        .map(|file| (format!("plugins/{file}"), manifest(file)))
        .collect();
    registry().admit_all(parsed)
}

fn refused(report: &lockward_registry::AdmissionReport) -> Vec<&str> {
    report
        .verdicts
        .iter()
        .filter_map(|verdict| match verdict {
            Verdict::Refused { manifest, .. } => Some(manifest.as_str()),
            Verdict::Admitted(_) => None,
        })
        .collect()
}

fn errors(report: &lockward_registry::AdmissionReport) -> Vec<&Finding> {
    report.findings.iter().filter(|f| f.is_error()).collect()
}

fn error_codes(report: &lockward_registry::AdmissionReport) -> Vec<&'static str> {
    errors(report).iter().map(|f| f.code.as_str()).collect()
}

#[test]
fn plugins_with_their_own_ids_and_their_handovers_are_admitted() {
    let report = admit(&["billing.toml", "shipping.toml"]);
    assert!(refused(&report).is_empty(), "{:?}", report.findings);
    assert_eq!(report.admitted().count(), 2);
    // loyalty's handover is declared by no manifest: a warning, not a refusal.
    let warnings: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.code, f.severity))
        .collect();
    assert_eq!(
        warnings,
        [(Code::UnusedHandover, lockward_registry::Severity::Warning)]
    );
    assert!(report.findings[0].message.contains("loyalty"));
}

#[test]
fn rule_1_an_id_that_collides_with_a_core_constant_is_refused() {
    let report = admit(&["collides-with-core.toml"]);
    assert_eq!(refused(&report), ["plugins/collides-with-core.toml"]);
    assert_eq!(error_codes(&report), ["plugin-collides-with-core"]);
    let finding = errors(&report)[0];
    assert!(
        finding.message.contains("`search`")
            && finding.message.contains("ADVISORY_LOCK_INVOICE_ROLLUP")
    );
    assert_eq!(finding.path, "plugins/collides-with-core.toml");
    assert_eq!(
        finding.labels[0].path, "lockward.toml",
        "names where core declares it"
    );
    insta::assert_json_snapshot!(errors(&report));
}

#[test]
fn rule_1_an_id_that_collides_with_a_core_external_is_refused() {
    let report = admit(&["collides-with-external.toml"]);
    assert_eq!(error_codes(&report), ["plugin-collides-with-core"]);
    assert!(errors(&report)[0].message.contains("_CATALOG_LOCK_KEY"));
}

#[test]
fn rule_2_a_retired_id_is_refused() {
    let report = admit(&["retired.toml"]);
    assert_eq!(error_codes(&report), ["plugin-uses-retired-id"]);
    assert_eq!(errors(&report)[0].labels[0].line(), Some(21));
}

#[test]
fn rule_3_an_id_handed_over_to_another_plugin_is_refused() {
    let report = admit(&["billing.toml", "others-handover.toml"]);
    assert_eq!(
        refused(&report),
        ["plugins/others-handover.toml"],
        "the holder stays admitted"
    );
    assert_eq!(error_codes(&report), ["plugin-takes-others-handover"]);
    assert!(
        errors(&report)
            .iter()
            .any(|f| f.message.contains("`payments`") && f.message.contains("`billing`"))
    );
}

#[test]
fn rule_4_an_id_two_manifests_declare_refuses_both() {
    let report = admit(&["shared-a.toml", "shared-b.toml"]);
    assert_eq!(
        refused(&report),
        ["plugins/shared-a.toml", "plugins/shared-b.toml"]
    );
    assert_eq!(
        error_codes(&report),
        ["plugin-id-shared", "plugin-id-shared"]
    );
    let first = errors(&report)[0];
    assert!(first.message.contains("`reports`") && first.message.contains("`exports`"));
    assert_eq!(
        first.labels[0].path, "plugins/shared-b.toml",
        "names where the other declares it"
    );
}

#[test]
fn rule_5_an_id_inside_core_block_without_a_handover_is_refused() {
    let report = admit(&["in-block.toml"]);
    assert_eq!(error_codes(&report), ["plugin-id-in-core-block"]);
    assert!(
        errors(&report)[0]
            .help
            .as_deref()
            .unwrap_or("")
            .contains("--plugin dunning")
    );
}

#[test]
fn malformed_manifests_are_refused_and_the_others_still_admitted() {
    let report = admit(&[
        "missing-name.toml",
        "non-integer.toml",
        "duplicate-id.toml",
        "shipping.toml",
    ]);
    assert_eq!(
        refused(&report),
        [
            "plugins/duplicate-id.toml",
            "plugins/missing-name.toml",
            "plugins/non-integer.toml"
        ]
    );
    assert_eq!(
        report
            .admitted()
            .map(lockward_registry::AdmittedPlugin::name)
            .collect::<Vec<_>>(),
        ["shipping"]
    );
    assert!(
        error_codes(&report)
            .iter()
            .all(|code| *code == "malformed-manifest")
    );
    insta::assert_json_snapshot!(errors(&report));
}

#[test]
fn a_configurable_table_path_reads_a_pyproject_table() {
    let text = crate::read("admission/plugins/pyproject.toml.txt");
    let manifest =
        Manifest::parse("plugins/pyproject.toml", &text, "tool.harbor.plugin").expect("valid");
    assert_eq!(manifest.name, "pyplugin");
    assert_eq!(manifest.ids[0].0.literal(), "7_800_001");
    assert!(
        Manifest::parse("plugins/pyproject.toml", &text, "plugin").is_err(),
        "no [plugin] table"
    );
}

#[test]
fn json_manifests_are_admitted_by_the_same_rules_with_positions() {
    let report = admit(&["jsonplugin.json"]);
    assert_eq!(error_codes(&report), ["plugin-collides-with-core"]);
    let finding = errors(&report)[0];
    assert_eq!((finding.line(), finding.column()), (Some(4), Some(36)));
    assert_eq!(
        finding.source_line(),
        Some("    \"advisory_lock_ids\": [7900001, 1001001]")
    );
}

#[test]
fn a_host_admits_one_plugin_at_load_against_those_already_loaded() {
    let registry = registry();
    let reports = manifest("shared-a.toml").expect("parses");
    let exports = manifest("shared-b.toml").expect("parses");
    let alone = registry.admit(&reports, &[]).expect("alone it is fine");
    assert_eq!(
        alone.lock(7_500_001).map(|lock| lock.id().value()),
        Some(7_500_001)
    );
    assert!(alone.lock(1).is_none());
    let refusal = registry
        .admit(&exports, &[&reports])
        .expect_err("shares an id with reports");
    assert_eq!(refusal[0].code, Code::PluginIdShared);
}

#[test]
fn json_manifest_ids_point_at_the_plugins_own_array() {
    // Positions were found by searching the text for `"advisory_lock_ids"`, so an earlier key of
    // that name (here under `meta`) took the findings.
    let text = r#"{"meta":{"advisory_lock_ids":[5]},"plugin":{"name":"search","advisory_lock_ids":[1_001_001]}}"#;
    let error = Manifest::parse("plugins/search/plugin.json", text, "plugin")
        .expect_err("`1_001_001` is not a JSON number");
    assert_eq!(error.len(), 1);
    let text = r#"{"meta":{"advisory_lock_ids":[5]},"plugin":{"name":"search","advisory_lock_ids":[1001001]}}"#;
    let manifest = Manifest::parse("plugins/search/plugin.json", text, "plugin").expect("valid");
    let (id, span) = &manifest.ids[0];
    assert_eq!(id.value(), 1_001_001);
    assert_eq!(&text[span.clone()], "1001001");
    assert_eq!(span.start, text.rfind("1001001").expect("written"));
    let report = registry().admit_all(vec![(manifest.path().to_owned(), Ok(manifest))]);
    let collision = report
        .findings
        .iter()
        .find(|f| f.code == Code::PluginCollidesWithCore)
        .expect("1_001_001 is core's");
    assert_eq!(
        collision.column(),
        Some(text.rfind("1001001").expect("written") + 1)
    );
}

#[test]
fn json_manifests_are_parsed_strictly_with_positions() {
    for (text, column) in [
        (
            r#"{"plugin": {"name": "a", "advisory_lock_ids": [1, 2,]}}"#,
            53,
        ),
        (
            r#"{"plugin": {"name": "a", "name": "b", "advisory_lock_ids": []}}"#,
            26,
        ),
        (
            r#"{"plugin": {"name": "a", "advisory_lock_ids": [1.5]}}"#,
            48,
        ),
        (
            r#"{"plugin": {"name": "a", "advisory_lock_ids": [9223372036854775808]}}"#,
            48,
        ),
    ] {
        let errors = Manifest::parse("plugins/a/plugin.json", text, "plugin").expect_err(text);
        assert_eq!(errors[0].code, Code::MalformedManifest, "{text}");
        assert_eq!(
            (errors[0].line(), errors[0].column()),
            (Some(1), Some(column)),
            "{text}: {errors:?}"
        );
    }
}
