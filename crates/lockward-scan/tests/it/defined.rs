//! `defined_ids`: the ids a constants file defines, as `lockward take` counts them.

use lockward_scan::defined_ids;

use crate::support::{data, registry};

#[test]
fn the_ids_a_file_assigns_count_and_comments_and_strings_do_not() {
    let registry = registry(&data("fixtures/harbor"));
    let python = "\
# ADVISORY_LOCK_OLD = 1_001_090 (a comment)
ADVISORY_LOCK_WIP = 1_001_007
RETRIES = 3
HELP = \"ADVISORY_LOCK_DOC = 1_001_091\"
";
    assert_eq!(
        defined_ids(&registry, "locks.py", python),
        vec![3, 1_001_007]
    );
    let go = "package locks\n\nconst (\n\tADVISORY_LOCK_A int64 = 1_001_001\n\tADVISORY_LOCK_WIP = 0xF462F\n)\n";
    assert_eq!(
        defined_ids(&registry, "locks.go", go),
        vec![1_001_001, 1_001_007]
    );
    assert_eq!(
        defined_ids(&registry, "locks.h", "#define ADVISORY_LOCK_X 5\n"),
        Vec::<i64>::new()
    );
}

/// A Go raw string ending in a backslash swallowed the rest of the file: the constants after it
/// vanished from the scan.
#[test]
fn a_constant_after_a_go_raw_string_ending_in_a_backslash_is_found() {
    let registry = registry(&data("fixtures/harbor"));
    let go = "package locks\n\nconst dir = `C:\\dir\\`\n\nconst ADVISORY_LOCK_WIP = 1_001_007\n";
    assert_eq!(defined_ids(&registry, "locks.go", go), vec![1_001_007]);
    let kotlin = "object Locks {\n    val dir = \"\"\"C:\\dir\\\"\"\"\n    const val ADVISORY_LOCK_WIP = 1_001_007L\n}\n";
    assert_eq!(defined_ids(&registry, "Locks.kt", kotlin), vec![1_001_007]);
}
