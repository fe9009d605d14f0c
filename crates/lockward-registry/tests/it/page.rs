//! The rendered page (DESIGN §4).

use lockward_registry::{page, parse};

#[test]
fn the_page_is_deterministic_and_snapshotted() {
    let registry = parse("lockward.toml", &crate::read("rules/valid.toml"))
        .expect("valid")
        .registry;
    let next = registry.next_free_id([]);
    let first = page::render(&registry, next.as_ref());
    assert_eq!(first, page::render(&registry, next.as_ref()));
    insta::assert_snapshot!(first);
}

#[test]
fn the_page_sorts_by_numeric_id_and_shows_ids_as_written() {
    let registry = parse("lockward.toml", &crate::read("rules/valid.toml"))
        .expect("valid")
        .registry;
    let page = page::render(&registry, registry.next_free_id([]).as_ref());
    let rows: Vec<&str> = page
        .lines()
        .filter(|line| line.starts_with("| `"))
        .collect();
    let ids: Vec<&str> = rows
        .iter()
        .map(|row| row.split('`').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(
        &ids[..7],
        [
            "1_001_001",
            "1_001_002",
            "1_001_003",
            "1_001_004",
            "8_675_309",
            "9_000_001",
            "0x6E697374"
        ]
    );
    assert!(page.contains("- Next free id: `1_001_005`"));
    assert!(page.contains("- Core constants: 2"));
}

#[test]
fn a_table_cell_never_splits_on_a_pipe() {
    let text = crate::read("rules/valid.toml").replace("invoice rollup\"", "invoice | rollup\"");
    let registry = parse("lockward.toml", &text).expect("valid").registry;
    let page = page::render(&registry, None);
    assert!(page.contains("invoice \\| rollup"));
    assert!(page.contains("is used up"));
}

/// `lockward render` copied a worker's raw `<img src=x onerror=…>` into the Markdown page, where a
/// renderer may show it as HTML. Registry text is escaped; words with `_` stay readable.
#[test]
fn registry_text_that_looks_like_markup_is_escaped_in_the_page() {
    let text = r#"
[project]
name = "harbor"

[core]
constants = "src/locks.rs"
block = { start = 1_001_001, end = 1_001_999 }

[[lock]]
id = 1_001_001
constant = "ADVISORY_LOCK_X"
worker = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) *bold* _em_ legacy_sweeper a|b `c`"

[[lock]]
id = 1_001_002
reserved = "<script>alert(2)</script> &amp;"
"#;
    let registry = parse("lockward.toml", text).expect("valid").registry;
    let page = page::render(&registry, None);
    let unescaped = page.replace("\\<", "");
    assert!(
        !unescaped.contains("<img") && !unescaped.contains("<script"),
        "{page}"
    );
    assert!(
        page.contains(concat!(
            r"\<img src=x onerror=alert(1)\> \[click\](javascript:alert(1)) \*bold\* \_em\_ ",
            r"legacy_sweeper a\|b \`c\`"
        )),
        "{page}"
    );
    assert!(
        page.contains(r"\<script\>alert(2)\</script\> \&amp;"),
        "{page}"
    );
}
