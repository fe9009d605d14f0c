//! Where each plugin lives: the directory of its manifest, found during the walk.
//!
//! Admission (in the registry crate) is the authority on manifests, and its parser is the only
//! one: the scan takes each plugin's name, ids and directory from it.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use lockward_registry::{Manifest, PluginSettings};

use crate::PluginDir;

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

/// The plugin a manifest at `path` (relative to the registry's directory) declares, with its
/// directory, read by the registry's own manifest parser. A malformed manifest gives `None`:
/// admission reports it, and its code is then held to the registry like core's.
pub(crate) fn plugin(path: &str, text: &str, table: &str) -> Option<PluginDir> {
    let manifest = Manifest::parse(path, text, table).ok()?;
    let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir).to_owned();
    Some(PluginDir {
        ids: manifest.ids.iter().map(|(id, _)| id.value()).collect(),
        name: manifest.name,
        dir,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_come_from_the_configured_table() {
        let toml = "[tool.harbor.plugin]\nname = \"billing\"\nadvisory_lock_ids = [1_001_002]\n";
        let billing = plugin("p/pyproject.toml", toml, "tool.harbor.plugin").expect("valid");
        assert_eq!(
            (billing.name.as_str(), billing.dir.as_str()),
            ("billing", "p")
        );
        assert_eq!(billing.ids, [1_001_002]);
        let json = r#"{"plugin": {"name": "search", "advisory_lock_ids": [2]}}"#;
        assert_eq!(
            plugin("p/plugin.json", json, "plugin").expect("valid").ids,
            [2]
        );
        assert_eq!(plugin("p/plugin.toml", "[plugin]\n", "plugin"), None);
    }
}
