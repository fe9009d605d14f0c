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

/// The plugin name a manifest declares at `table.name` (TOML, or JSON by extension).
pub(crate) fn manifest_name(path: &str, text: &str, table: &str) -> Option<String> {
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
        return value.get("name")?.as_str().map(str::to_owned);
    }
    let document: toml_edit::DocumentMut = text.parse().ok()?;
    let mut item = document.as_item();
    for key in &keys {
        item = item.get(key)?;
    }
    item.get("name")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_configured_table() {
        let toml = "[tool.harbor.plugin]\nname = \"billing\"\nadvisory_lock_ids = [1]\n";
        assert_eq!(
            manifest_name("p/pyproject.toml", toml, "tool.harbor.plugin").as_deref(),
            Some("billing")
        );
        let json = r#"{"plugin": {"name": "search", "advisory_lock_ids": [2]}}"#;
        assert_eq!(
            manifest_name("p/plugin.json", json, "plugin").as_deref(),
            Some("search")
        );
        assert_eq!(manifest_name("p/plugin.toml", "[plugin]\n", "plugin"), None);
    }
}
