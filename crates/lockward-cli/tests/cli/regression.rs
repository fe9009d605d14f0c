//! One test per reported bug, named after what broke (the way ripgrep keeps `tests/regression.rs`).
//! Each one reproduces the report as it was filed and fails without its fix.

use crate::TestProject;

// ---------------------------------------------------------------------------------------------
// Diagnostics: positions, and what reaches the terminal.

/// The underline under the text it points at, counted in screen columns as `human` renders it.
fn underlined<'a>(report: &'a str, needle: &str) -> (&'a str, String) {
    let lines: Vec<&str> = report.lines().collect();
    let at = lines
        .iter()
        .position(|line| line.contains(needle) && line.contains(" | "))
        .unwrap_or_else(|| panic!("no snippet line with {needle:?} in:\n{report}"));
    let source = lines[at].split_once(" | ").expect("gutter").1;
    let marks = lines[at + 1].split_once(" | ").expect("gutter").1;
    let start = marks.find('^').expect("an underline");
    let width = marks[start..].chars().take_while(|&c| c == '^').count();
    (source, source.chars().skip(start).take(width).collect())
}

#[test]
fn the_caret_is_under_the_value_on_a_tab_indented_go_line() {
    let project = TestProject::harbor();
    project.write(
        "services/jobs/locks.go",
        "package jobs\n\nconst (\n\t\tADVISORY_LOCK_INVOICE_ROLLUP int64 = 1_001_999\n)\n",
    );
    let run = project.run(&["check"]);
    let (line, underlined) = underlined(&run.stdout, "1_001_999");
    assert!(
        line.starts_with("        ADVISORY"),
        "tabs shown as spaces: {line:?}"
    );
    assert_eq!(underlined, "ADVISORY_LOCK_INVOICE_ROLLUP", "{}", run.stdout);
}

#[test]
fn a_whole_file_finding_has_a_null_line_in_json_not_zero() {
    let project = TestProject::harbor();
    project.edit(
        "crates/harbor-core/src/locks.rs",
        "pub const ADVISORY_LOCK_SEARCH_REINDEX: i64 = 1_001_006;",
        "",
    );
    let run = project.run(&["check", "--format", "json"]);
    let json = run.json();
    let missing = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|finding| finding["code"] == "constant-missing")
        .expect("constant-missing");
    assert!(
        missing["line"].is_null() && missing["column"].is_null(),
        "{missing}"
    );
    let sarif = project.run(&["check", "--format", "sarif"]).json();
    let result = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|result| result["ruleId"] == "constant-missing")
        .expect("result")
        .clone();
    assert!(
        result["locations"][0]["physicalLocation"]["region"].is_null(),
        "{result}"
    );
}

#[test]
fn a_ten_megabyte_registry_line_is_not_echoed_whole() {
    let project = TestProject::harbor();
    let huge = "x".repeat(10 << 20);
    project.edit(
        "lockward.toml",
        "worker = \"search reindex\"",
        &format!("worker = \"search reindex\"\nworkr = \"{huge}\""),
    );
    for format in ["human", "json", "sarif", "github"] {
        let run = project.run(&["check", "--format", format]);
        assert_eq!(run.code, 1, "{format}: {}", run.stderr);
        assert!(
            run.stdout.len() + run.stderr.len() < 20_000,
            "{format}: {} bytes of report for one finding",
            run.stdout.len() + run.stderr.len()
        );
    }
    let human = project.run(&["check"]).stdout;
    assert!(
        human.contains("workr = \"xxx") && human.contains('…'),
        "{human}"
    );
}

#[test]
fn escape_bytes_in_a_plugin_name_reach_no_diagnostic_or_annotation() {
    let project = TestProject::harbor();
    project.write(
        "plugins/evil/plugin.json",
        "{\"plugin\": {\"name\": \"\\u001b]0;pwned\\u0007\", \"advisory_lock_ids\": [1001001]}}\n",
    );
    for format in ["human", "github"] {
        let run = project.run(&["check", "--format", format]);
        assert_eq!(run.code, 1, "{format}: {}", run.stdout);
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !all.contains('\u{1b}') && !all.contains('\u{7}'),
            "{format}: {all:?}"
        );
        assert!(
            all.contains("\\u{1b}]0;pwned\\u{7}"),
            "{format}: the name is shown, escaped: {all}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Crashes, terminal output and wording.

// ---------------------------------------------------------------------------------------------
// `take`, `retire` and other branches' reservations.

// ---------------------------------------------------------------------------------------------
// The registry, plugin manifests and the runtime's identity.
