//! Arbitrary bytes in a source file never panic the scanner.

use proptest::prelude::*;

use crate::support::Project;

const EXTENSIONS: &[&str] = &["py", "rs", "go", "sql", "rb", "ts", "java", "kt"];

/// Bytes biased towards what the lexers care about, so the interesting paths are reached.
fn source_bytes() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop_oneof![
        any::<u8>().prop_map(|b| vec![b]),
        Just(b"pg_advisory_lock(".to_vec()),
        Just(b"ADVISORY_LOCK_X = ".to_vec()),
        Just(b"advisory_lock_id: ".to_vec()),
        Just(b"lockward: allow(".to_vec()),
        prop::sample::select(vec![
            "\"",
            "'",
            "`",
            "\"\"\"",
            "r#\"",
            "$$",
            "$1",
            "/*",
            "*/",
            "//",
            "--",
            "#",
            "\n",
            "=begin\n",
            "{",
            "}",
            "(",
            ")",
            ",",
            "::",
            ":=",
            "=>",
            "-",
            "1_001_001",
            "0x",
            "é",
            "\u{1F600}",
            "${",
            "#{",
            "\\",
            "/",
            "[",
            "]",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
    ];
    prop::collection::vec(pieces, 0..200).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_the_scanner(bytes in source_bytes(), extension in 0..EXTENSIONS.len()) {
        let project = Project::harbor();
        let path = project.path().join(format!("fuzz/input.{}", EXTENSIONS[extension]));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let report = project.scan();
        prop_assert!(report.files_scanned >= 1);
    }
}

#[test]
fn a_minified_line_with_many_sites_is_not_copied_per_site() {
    // 20,000 sites on one 460 KB line: copying the line into each finding would need 9 GB.
    let project = Project::harbor();
    let line = "pg_advisory_lock(key); ".repeat(20_000);
    project.write("web/bundle.min.js", &format!("/* advisory */{line}\n"));
    let report = project.scan();
    assert_eq!(report.dynamic_keys, 20_000);
    let notes: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.path == "web/bundle.min.js")
        .collect();
    assert_eq!(notes.len(), 20_000);
    assert!(notes.iter().all(|f| f.line() == Some(1)));
    let span = notes[1].span.as_ref().expect("on a line");
    assert_eq!((span.column, span.width()), (38, 21));
    let middle = notes[10_000].span.as_ref().expect("on a line");
    let excerpt = middle.excerpt.as_ref().expect("an excerpt");
    assert!(
        excerpt.text.len() <= 2 * lockward_registry::finding::EXCERPT_CONTEXT + 21,
        "a long line is cut to a window around the site, not copied whole"
    );
    assert!(excerpt.cut_before && excerpt.cut_after);
}
