//! Values written into the registry's TOML text as toml_edit writes them: every edit (`take`,
//! `retire`, `init`'s draft) writes strings and arrays one way.

/// `text` as a TOML string, in the form toml_edit chooses (a literal string `'..'` when the text
/// holds `"` or `\\` and no `'`, else a basic string with escapes): what every registry edit
/// writes, `take`'s and `retire`'s included.
pub(crate) fn toml_string(text: &str) -> String {
    toml_edit::Value::from(text).to_string()
}

/// A TOML array of strings on one line.
pub(crate) fn array(items: &[String]) -> String {
    let array: toml_edit::Array = items.iter().map(String::as_str).collect();
    array.to_string()
}
