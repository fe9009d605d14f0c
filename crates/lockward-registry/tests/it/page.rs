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
