//! The pattern fixtures of the labelled corpus (`tests/corpus/fixtures/<pattern>/`): small
//! synthetic projects, one per pattern of real code, each with the exact findings and sites the
//! scan must produce (`expected.toml`). Patterns whose feature has not landed are listed in
//! `fixtures/pending.toml` and must still fail, so an entry that starts passing is removed; no
//! fixture, pending or not, may yield an error or a warning its expectations do not list.
//! `tests/corpus/README.md` describes the format; `labels/` ties each pattern to real code.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lockward_registry::{Finding, Severity};
use lockward_scan::{ScanOptions, ScanReport};
use toml_edit::{DocumentMut, Item, Table};

use crate::support::data;

/// One finding as the fixtures state it: code, path, line, and where they matter the column,
/// the id its message names and a piece of text its message holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ExpectedFinding {
    code: String,
    path: String,
    line: usize,
    column: Option<usize>,
    id: Option<i64>,
    message: Option<String>,
}

impl ExpectedFinding {
    fn matches(&self, finding: &Finding) -> bool {
        self.code == finding.code.as_str()
            && self.path == finding.path
            && Some(self.line) == finding.line()
            && self
                .column
                .is_none_or(|column| Some(column) == finding.column())
            && self.id.is_none_or(|id| mentions(&finding.message, id))
            && self
                .message
                .as_ref()
                .is_none_or(|text| finding.message.contains(text.as_str()))
    }
}

/// Whether `message` names `id` as a whole number, in any form an id is shown as written
/// (`7_000_105L`, `0x6B_0001`, `-42`, `9n`).
fn mentions(message: &str, id: i64) -> bool {
    let bytes = message.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let starts = bytes[at].is_ascii_digit()
            && (at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_'));
        if !starts {
            at += 1;
            continue;
        }
        let end = bytes[at..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .map_or(bytes.len(), |n| at + n);
        let negative = at > 0 && bytes[at - 1] == b'-';
        if literal_value(&message[at..end]).is_some_and(|v| (if negative { -v } else { v }) == id) {
            return true;
        }
        at = end;
    }
    false
}

/// The value of an integer literal as an id may be written in code: underscores, a `0x`, `0o`
/// or `0b` prefix, and a type suffix (`L`, `n`, `i64`, `u32`...).
fn literal_value(token: &str) -> Option<i64> {
    let digits: String = token.chars().filter(|&c| c != '_').collect();
    let (radix, body) = match digits.get(..2) {
        Some("0x" | "0X") => (16, &digits[2..]),
        Some("0o" | "0O") => (8, &digits[2..]),
        Some("0b" | "0B") => (2, &digits[2..]),
        _ => (10, digits.as_str()),
    };
    let end = body
        .char_indices()
        .find(|&(_, c)| !c.is_digit(radix))
        .map_or(body.len(), |(i, _)| i);
    let suffix = &body[end..];
    let known = [
        "", "l", "L", "n", "i64", "i32", "u64", "u32", "isize", "usize",
    ];
    if end == 0 || !known.contains(&suffix) {
        return None;
    }
    i64::from_str_radix(&body[..end], radix).ok()
}

/// A site as the fixtures state it.
type ExpectedSite = (String, usize, i64);

/// A fixture: its directory, what it must yield, and whether it is pending.
struct Fixture {
    pattern: String,
    dir: PathBuf,
    findings: Vec<ExpectedFinding>,
    sites: BTreeSet<ExpectedSite>,
    pending: Option<Pending>,
}

/// An entry of `fixtures/pending.toml`.
#[derive(Debug, Clone)]
struct Pending {
    item: i64,
    /// The fixture yields an error or warning it must not (a known false error), which the
    /// feature will remove: asserted to still happen, like the rest of a pending entry.
    false_error: bool,
}

/// What one scan of a fixture gave, compared with what it must give.
struct Outcome {
    sites_found: usize,
    findings_found: usize,
    missing: Vec<String>,
    unexpected: Vec<String>,
    false_errors: Vec<String>,
}

impl Outcome {
    /// A fixture whose registry does not parse yet (a `[scan]` key a pending feature adds):
    /// nothing found, so it fails; its registry's findings are not the scan's false errors.
    fn unscanned(problem: &str) -> Self {
        Self {
            sites_found: 0,
            findings_found: 0,
            missing: vec![format!("a scan: {problem}")],
            unexpected: Vec::new(),
            false_errors: Vec::new(),
        }
    }

    fn exact(&self) -> bool {
        self.missing.is_empty() && self.unexpected.is_empty()
    }
}

fn corpus() -> PathBuf {
    data("corpus/fixtures")
}

fn read_toml(path: &Path) -> DocumentMut {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse::<DocumentMut>()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn string(table: &Table, key: &str, at: &Path) -> String {
    table
        .get(key)
        .and_then(Item::as_str)
        .unwrap_or_else(|| panic!("{}: `{key}` must be a string", at.display()))
        .to_owned()
}

fn integer(table: &Table, key: &str, at: &Path) -> Option<i64> {
    table.get(key).map(|item| {
        item.as_integer()
            .unwrap_or_else(|| panic!("{}: `{key}` must be an integer", at.display()))
    })
}

fn position(table: &Table, key: &str, at: &Path) -> Option<usize> {
    integer(table, key, at).map(|value| {
        usize::try_from(value)
            .unwrap_or_else(|_| panic!("{}: `{key}` must be positive", at.display()))
    })
}

fn tables<'a>(document: &'a DocumentMut, key: &str) -> impl Iterator<Item = &'a Table> {
    document
        .get(key)
        .and_then(Item::as_array_of_tables)
        .into_iter()
        .flat_map(toml_edit::ArrayOfTables::iter)
}

/// The keys a table may have; anything else is a typo in a fixture, refused.
fn only_keys(table: &Table, allowed: &[&str], at: &Path) {
    for (key, _) in table {
        assert!(
            allowed.contains(&key),
            "{}: unknown key `{key}` (allowed: {allowed:?})",
            at.display()
        );
    }
}

fn pending() -> Vec<(String, Pending)> {
    let path = corpus().join("pending.toml");
    let document = read_toml(&path);
    only_keys(document.as_table(), &["pending"], &path);
    tables(&document, "pending")
        .map(|table| {
            only_keys(
                table,
                &["pattern", "item", "owner", "reason", "false_error"],
                &path,
            );
            let pattern = string(table, "pattern", &path);
            string(table, "owner", &path);
            string(table, "reason", &path);
            let item = integer(table, "item", &path)
                .unwrap_or_else(|| panic!("{}: `{pattern}` needs `item`", path.display()));
            let false_error = table
                .get("false_error")
                .is_some_and(|item| item.as_bool().expect("`false_error` is a boolean"));
            (pattern, Pending { item, false_error })
        })
        .collect()
}

fn fixtures() -> Vec<Fixture> {
    let pending = pending();
    let mut fixtures = Vec::new();
    for entry in std::fs::read_dir(corpus()).expect("the fixtures directory exists") {
        let dir = entry.expect("an entry").path();
        if !dir.is_dir() {
            continue;
        }
        let pattern = dir
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        let path = dir.join("expected.toml");
        let document = read_toml(&path);
        only_keys(
            document.as_table(),
            &["summary", "languages", "finding", "site"],
            &path,
        );
        string(document.as_table(), "summary", &path);
        let findings = tables(&document, "finding")
            .map(|table| {
                only_keys(
                    table,
                    &["code", "path", "line", "column", "id", "message"],
                    &path,
                );
                ExpectedFinding {
                    code: string(table, "code", &path),
                    path: string(table, "path", &path),
                    line: position(table, "line", &path).expect("a finding has a line"),
                    column: position(table, "column", &path),
                    id: integer(table, "id", &path),
                    message: table
                        .get("message")
                        .map(|_| string(table, "message", &path)),
                }
            })
            .collect();
        let sites = tables(&document, "site")
            .map(|table| {
                only_keys(table, &["path", "line", "id"], &path);
                (
                    string(table, "path", &path),
                    position(table, "line", &path).expect("a site has a line"),
                    integer(table, "id", &path).expect("a site has an id"),
                )
            })
            .collect();
        let pending = pending
            .iter()
            .find(|(name, _)| *name == pattern)
            .map(|(_, entry)| entry.clone());
        fixtures.push(Fixture {
            pattern,
            dir,
            findings,
            sites,
            pending,
        });
    }
    fixtures.sort_by(|a, b| a.pattern.cmp(&b.pattern));
    fixtures
}

/// Scans a fixture against its own registry, or says why its registry does not load.
fn scan_fixture(dir: &Path) -> Result<ScanReport, String> {
    let path = dir.join("lockward.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let registry = lockward_registry::parse("lockward.toml", &text)
        .map_err(|findings| {
            let problems: Vec<String> = findings.iter().map(describe).collect();
            format!("the registry does not load: {}", problems.join("; "))
        })?
        .registry;
    let options = ScanOptions {
        threads: 2,
        ..ScanOptions::default()
    };
    Ok(lockward_scan::scan(&registry, dir, &options))
}

fn describe(finding: &Finding) -> String {
    format!(
        "{} {}:{}:{} {}",
        finding.code.as_str(),
        finding.path,
        finding
            .line()
            .map_or_else(|| "-".to_owned(), |l| l.to_string()),
        finding
            .column()
            .map_or_else(|| "-".to_owned(), |c| c.to_string()),
        finding.message
    )
}

fn compare(fixture: &Fixture, report: &ScanReport) -> Outcome {
    let mut missing = Vec::new();
    let mut unexpected = Vec::new();
    let mut false_errors = Vec::new();

    let actual_sites: BTreeSet<ExpectedSite> = report
        .sites
        .iter()
        .map(|site| (site.path.clone(), site.line, site.id))
        .collect();
    let sites_found = fixture.sites.intersection(&actual_sites).count();
    for (path, line, id) in fixture.sites.difference(&actual_sites) {
        missing.push(format!("site {path}:{line} id {id}"));
    }
    for (path, line, id) in actual_sites.difference(&fixture.sites) {
        unexpected.push(format!("site {path}:{line} id {id}"));
    }

    // Each expectation takes one finding, so two expected findings on a line need two.
    let mut taken = vec![false; report.findings.len()];
    let mut findings_found = 0;
    for expected in &fixture.findings {
        let matched = report
            .findings
            .iter()
            .enumerate()
            .find(|(index, finding)| !taken[*index] && expected.matches(finding));
        if let Some((index, _)) = matched {
            taken[index] = true;
            findings_found += 1;
        } else {
            missing.push(format!(
                "{} {}:{}{}{}",
                expected.code,
                expected.path,
                expected.line,
                expected
                    .column
                    .map_or_else(String::new, |c| format!(":{c}")),
                expected
                    .id
                    .map_or_else(String::new, |id| format!(" id {id}")),
            ));
        }
    }
    for (finding, taken) in report.findings.iter().zip(&taken) {
        if *taken {
            continue;
        }
        unexpected.push(describe(finding));
        if matches!(finding.severity, Severity::Error | Severity::Warning) {
            false_errors.push(describe(finding));
        }
    }
    Outcome {
        sites_found,
        findings_found,
        missing,
        unexpected,
        false_errors,
    }
}

#[test]
fn pattern_fixtures_match_exactly_unless_pending_and_raise_no_false_error() {
    let fixtures = fixtures();
    assert!(
        !fixtures.is_empty(),
        "no fixtures under {}",
        corpus().display()
    );
    for (pattern, _) in pending() {
        assert!(
            fixtures.iter().any(|f| f.pattern == pattern),
            "pending.toml names `{pattern}`, which has no fixture"
        );
    }

    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<30} {:>7} {:>9} {:>5} {:<8}",
        "pattern", "sites", "findings", "extra", "status"
    );
    let mut failures = Vec::new();
    for fixture in &fixtures {
        let outcome = match scan_fixture(&fixture.dir) {
            Ok(report) => compare(fixture, &report),
            Err(problem) => Outcome::unscanned(&problem),
        };
        let status = match (&fixture.pending, outcome.exact()) {
            (None, true) => "pass",
            (None, false) => "FAIL",
            (Some(_), false) => "pending",
            (Some(_), true) => "PASSES",
        };
        let _ = writeln!(
            table,
            "{:<30} {:>3}/{:<3} {:>4}/{:<4} {:>5} {status}",
            fixture.pattern,
            outcome.sites_found,
            fixture.sites.len(),
            outcome.findings_found,
            fixture.findings.len(),
            outcome.unexpected.len(),
        );
        let detail = || {
            let mut text = String::new();
            for line in &outcome.missing {
                let _ = write!(text, "\n    missing:    {line}");
            }
            for line in &outcome.unexpected {
                let _ = write!(text, "\n    unexpected: {line}");
            }
            text
        };
        match &fixture.pending {
            None if !outcome.exact() => {
                failures.push(format!("`{}` does not match:{}", fixture.pattern, detail()));
            }
            Some(pending) if outcome.exact() => failures.push(format!(
                "`{}` passes now: remove it from fixtures/pending.toml (item {})",
                fixture.pattern, pending.item
            )),
            _ => {}
        }
        let known_false_error = fixture.pending.as_ref().is_some_and(|p| p.false_error);
        match (known_false_error, outcome.false_errors.is_empty()) {
            (false, false) => failures.push(format!(
                "`{}` yields an error or warning it does not expect:\n    {}",
                fixture.pattern,
                outcome.false_errors.join("\n    ")
            )),
            (true, true) => failures.push(format!(
                "`{}` no longer yields its known false error: drop `false_error` from its \
                 fixtures/pending.toml entry",
                fixture.pattern
            )),
            _ => {}
        }
    }
    println!("{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mentions_matches_whole_numbers_only() {
    assert!(mentions(
        "advisory lock id 4242 is not in the registry",
        4242
    ));
    assert!(mentions("id -7 (`X`)", -7));
    assert!(!mentions(
        "advisory lock id 42420 is not in the registry",
        4242
    ));
    assert!(!mentions("id -4242", 4242));
    assert!(mentions("id 7_000_105L (`X`)", 7_000_105));
    assert!(mentions("id 0x6B_0001", 0x6B_0001));
    assert!(mentions("id 9007199254740993n", 9_007_199_254_740_993));
    assert!(!mentions("id 12abc", 12));
    assert!(!mentions("v2 of 7", 2));
}

/// The kinds of label, and whether a label of the kind names a fixed id.
const LABEL_KINDS: &[(&str, bool)] = &[
    ("fixed-id", true),
    ("lock-call", true),
    ("helper-definition", false),
    ("helper-call", true),
    ("dynamic", false),
    ("near-miss", false),
];

#[test]
fn every_label_of_real_code_is_well_formed_and_names_a_fixture() {
    let dir = data("corpus/labels");
    let patterns: BTreeSet<String> = fixtures().into_iter().map(|f| f.pattern).collect();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("the labels directory exists") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        files += 1;
        let document = read_toml(&path);
        only_keys(
            document.as_table(),
            &["repo", "commit", "license", "url", "unread", "label"],
            &path,
        );
        let repo = string(document.as_table(), "repo", &path);
        let expected_name = format!("{}.toml", repo.replace('/', "__"));
        assert_eq!(
            path.file_name().map(|n| n.to_string_lossy().into_owned()),
            Some(expected_name),
            "{}: the file is named after its repo",
            path.display()
        );
        let commit = string(document.as_table(), "commit", &path);
        assert!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "{}: `commit` is a full hash",
            path.display()
        );
        string(document.as_table(), "license", &path);
        string(document.as_table(), "url", &path);
        let mut labels = 0;
        for label in tables(&document, "label") {
            labels += 1;
            only_keys(
                label,
                &["path", "line", "kind", "pattern", "id", "note"],
                &path,
            );
            string(label, "path", &path);
            string(label, "note", &path);
            position(label, "line", &path).expect("a label has a line");
            let kind = string(label, "kind", &path);
            let pattern = string(label, "pattern", &path);
            let Some(&(_, fixed)) = LABEL_KINDS.iter().find(|(k, _)| *k == kind) else {
                panic!("{}: unknown kind `{kind}`", path.display());
            };
            assert_eq!(
                integer(label, "id", &path).is_some(),
                fixed,
                "{}: a `{kind}` label {} an id",
                path.display(),
                if fixed { "needs" } else { "has no" }
            );
            assert!(
                patterns.contains(&pattern),
                "{}: pattern `{pattern}` has no fixture under fixtures/",
                path.display()
            );
        }
        assert!(labels > 0, "{}: no labels", path.display());
    }
    assert!(files > 0, "no label files under {}", dir.display());
}
