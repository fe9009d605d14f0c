//! Where each plugin lives: the directory of its manifest, found during the walk.
//!
//! Admission (in the registry crate) is the authority on manifests; the scan only needs each
//! plugin's name and directory, so it reads no more of a manifest than that.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use lockward_registry::PluginSettings;

/// The `[plugins] manifests` globs, relative to the registry's directory; `None` when there are
/// none (or none parse: the registry's own rules report bad globs).
pub(crate) fn manifest_globs(settings: &PluginSettings) -> Option<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    let mut any = false;
    for pattern in &settings.manifests {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        if let Ok(glob) = GlobBuilder::new(pattern).literal_separator(true).build() {
            builder.add(glob);
            any = true;
        }
    }
    any.then(|| builder.build().ok()).flatten()
}

/// The plugin name a manifest declares at `table.name`, and the integers of
/// `table.advisory_lock_ids` (TOML, or JSON by extension). A malformed manifest gives `None`
/// or fewer ids: admission reports it; the scan only needs what is readable.
pub(crate) fn manifest(path: &str, text: &str, table: &str) -> Option<(String, Vec<i64>)> {
    let keys: Vec<&str> = table.split('.').filter(|key| !key.is_empty()).collect();
    let json = std::path::Path::new(path)
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("json"));
    if json {
        let document: serde_json::Value = serde_json::from_str(text).ok()?;
        let mut value = &document;
        for key in &keys {
            value = value.get(key)?;
        }
        let name = value.get("name")?.as_str()?.to_owned();
        let ids = value
            .get("advisory_lock_ids")
            .and_then(serde_json::Value::as_array)
            .map(|ids| ids.iter().filter_map(serde_json::Value::as_i64).collect())
            .unwrap_or_default();
        return Some((name, ids));
    }
    let document: toml_edit::DocumentMut = text.parse().ok()?;
    let mut item = document.as_item();
    for key in &keys {
        item = item.get(key)?;
    }
    let name = item.get("name")?.as_str()?.to_owned();
    let ids = item
        .get("advisory_lock_ids")
        .and_then(toml_edit::Item::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(toml_edit::Value::as_integer)
                .collect()
        })
        .unwrap_or_default();
    Some((name, ids))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_come_from_the_configured_table() {
        let toml = "[tool.harbor.plugin]\nname = \"billing\"\nadvisory_lock_ids = [1_001_002]\n";
        let billing = Some(("billing".to_owned(), vec![1_001_002]));
        assert_eq!(
            manifest("p/pyproject.toml", toml, "tool.harbor.plugin"),
            billing
        );
        let json = r#"{"plugin": {"name": "search", "advisory_lock_ids": [2, "x"]}}"#;
        assert_eq!(
            manifest("p/plugin.json", json, "plugin"),
            Some(("search".to_owned(), vec![2]))
        );
        assert_eq!(manifest("p/plugin.toml", "[plugin]\n", "plugin"), None);
    }
}
