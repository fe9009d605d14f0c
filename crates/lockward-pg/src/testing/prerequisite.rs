//! Tests that need something the machine may lack (root, a program): skipped where it is
//! missing, unless the run requires every test (`LOCKWARD_REQUIRE_ALL_TESTS=1`, which
//! `scripts/test` sets under CI), where a skip would hide a test that never ran.

/// The variable that turns a skipped test into a failed one.
pub const REQUIRE_ALL_TESTS: &str = "LOCKWARD_REQUIRE_ALL_TESTS";

/// Says on stderr that the calling test is skipped and why, and returns; the caller then
/// returns too. Panics instead when `LOCKWARD_REQUIRE_ALL_TESTS=1`.
///
/// ```no_run
/// if !lockward_pg::testing::is_root() {
///     lockward_pg::testing::require_or_skip("making a network namespace needs root");
///     return;
/// }
/// ```
pub fn require_or_skip(reason: &str) {
    assert!(
        std::env::var(REQUIRE_ALL_TESTS)
            .ok()
            .is_none_or(|value| value != "1"),
        "{reason}, and {REQUIRE_ALL_TESTS}=1 requires this test to run"
    );
    eprintln!("skipped: {reason} (set {REQUIRE_ALL_TESTS}=1 to make this a failure)");
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}
