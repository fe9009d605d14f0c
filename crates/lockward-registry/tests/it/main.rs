//! Integration tests of the registry crate: one fixture per rule, admission, the page.

mod admission;
mod page;
mod rules;
mod take_props;

use std::path::{Path, PathBuf};

/// The directory holding this crate's fixtures.
pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture file's text.
pub(crate) fn read(relative: &str) -> String {
    let path = fixtures().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}
