//! The labelled corpus: every source line that must yield a finding or a site says so in a
//! trailing `expect(CODE)` or `site(ID)` annotation, and every other line must yield nothing.

use std::path::Path;

use crate::support::{data, scan_dir};

/// `(path, line, what)` for each annotation in the corpus, sorted. The pattern fixtures under
/// `fixtures/` are projects of their own (`patterns.rs`), excluded from this one.
fn annotations(dir: &Path, marker: &str) -> Vec<(String, usize, String)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("readable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                if path != dir.join("fixtures") {
                    stack.push(path);
                }
                continue;
            }
            if lockward_scan::Language::from_path(&path.to_string_lossy()).is_none() {
                continue;
            }
            let relative = path
                .strip_prefix(dir)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&path).expect("utf-8");
            for (index, line) in text.lines().enumerate() {
                for (at, _) in line.match_indices(marker) {
                    let rest = &line[at + marker.len()..];
                    let value = &rest[..rest.find(')').expect("closed annotation")];
                    found.push((relative.clone(), index + 1, value.to_owned()));
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn corpus_findings_are_exactly_the_annotated_ones() {
    let dir = data("corpus");
    let report = scan_dir(&dir);
    let mut actual: Vec<(String, usize, String)> = report
        .findings
        .iter()
        .map(|f| {
            let line = f.line().expect("every corpus finding is on a line");
            (f.path.clone(), line, f.code.as_str().to_owned())
        })
        .collect();
    actual.sort();
    assert_eq!(actual, annotations(&dir, "expect("));
}

#[test]
fn corpus_sites_are_exactly_the_annotated_ones() {
    let dir = data("corpus");
    let report = scan_dir(&dir);
    let mut actual: Vec<(String, usize, String)> = report
        .sites
        .iter()
        .map(|s| (s.path.clone(), s.line, s.id.to_string()))
        .collect();
    actual.sort();
    assert_eq!(actual, annotations(&dir, "site("));
}

#[test]
fn corpus_dynamic_keys_are_counted() {
    let report = scan_dir(&data("corpus"));
    let notes = annotations(&data("corpus"), "expect(dynamic-key");
    assert_eq!(report.dynamic_keys, notes.len());
    let unresolved = annotations(&data("corpus"), "expect(unresolved-constant");
    assert_eq!(report.unresolved_constants, unresolved.len());
}

#[test]
fn corpus_findings_snapshot() {
    let report = scan_dir(&data("corpus"));
    insta::assert_json_snapshot!("corpus_findings", report.findings);
}
