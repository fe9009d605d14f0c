//! Plugin manifests and their admission (DESIGN §3).
//!
//! A plugin declares the ids its workers hold in its own manifest. Admission holds each
//! manifest to the registry and to the other manifests; a host application makes the same call
//! ([`Registry::admit`]) when it loads a plugin, so a plugin that would share a lock with core or
//! with another plugin is refused before its workers start.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

use crate::diags;
use crate::finding::Finding;
use crate::id::{Id, KeyShape};
use crate::registry::{Kind, Lock, Registry, Source};
use crate::said::Said;
use crate::source::SourceFile;

/// A parsed plugin manifest: its name and the ids it declares, with where each is written.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The plugin's name.
    pub name: String,
    /// The ids it declares, in the order written.
    pub ids: Vec<(Id, Range<usize>)>,
    name_span: Range<usize>,
    file: SourceFile,
}

impl Manifest {
    /// Parses a manifest named `path` (relative to the registry's directory): JSON when the path
    /// ends in `.json`, TOML otherwise. `table` is the dotted path of the table that holds `name`
    /// and `advisory_lock_ids` (`plugin`, or `tool.harbor.plugin` in a `pyproject.toml`).
    pub fn parse(path: &str, text: &str, table: &str) -> Result<Self, Vec<Finding>> {
        let file = SourceFile::new(path, text);
        let is_json = std::path::Path::new(path)
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("json"));
        let raw = if is_json {
            json::manifest(&file, table)
        } else {
            toml::manifest(&file, table)
        }?;
        let mut findings = Vec::new();
        let mut seen: HashMap<i64, Range<usize>> = HashMap::new();
        for (id, span) in &raw.ids {
            if let Some(first) = seen.get(&id.value()) {
                findings.push(
                    diags::id_declared_twice(&raw.name, id)
                        .at(&file, span.clone())
                        .with_label(file.label(first.clone(), diags::first_declared_here())),
                );
            } else {
                seen.insert(id.value(), span.clone());
            }
        }
        if findings.is_empty() {
            Ok(Self {
                name: raw.name,
                ids: raw.ids,
                name_span: raw.name_span,
                file,
            })
        } else {
            Err(findings)
        }
    }

    /// The manifest's path, relative to the registry's directory.
    pub fn path(&self) -> &str {
        self.file.path()
    }

    fn id_finding(&self, said: Said, span: &Range<usize>) -> Finding {
        said.at(&self.file, span.clone())
    }
}

/// What a manifest parser found before the duplicate check.
struct RawManifest {
    name: String,
    name_span: Range<usize>,
    ids: Vec<(Id, Range<usize>)>,
}

/// A manifest's one problem, which stops its parsing.
fn malformed(file: &SourceFile, span: Range<usize>, said: Said) -> Vec<Finding> {
    vec![said.at(file, span)]
}

mod toml {
    use toml_edit::{Item, Value};

    use super::{RawManifest, malformed};
    use crate::diags;
    use crate::id::Id;
    use crate::source::SourceFile;

    pub(super) fn manifest(
        file: &SourceFile,
        table_path: &str,
    ) -> Result<RawManifest, Vec<crate::Finding>> {
        let document = toml_edit::Document::parse(file.text()).map_err(|error| {
            malformed(
                file,
                error.span().unwrap_or(0..0),
                diags::manifest_not_toml(error.message().trim_end()),
            )
        })?;
        let mut table: &dyn toml_edit::TableLike = document.as_table();
        for part in table_path.split('.') {
            table = table
                .get(part)
                .and_then(Item::as_table_like)
                .ok_or_else(|| malformed(file, 0..0, diags::manifest_without_table(table_path)))?;
        }
        let name = table
            .get("name")
            .ok_or_else(|| malformed(file, 0..0, diags::table_without_name(table_path)))?;
        let name_span = name.span().unwrap_or(0..0);
        let name = name
            .as_str()
            .filter(|name| !name.trim().is_empty())
            .ok_or_else(|| malformed(file, name_span.clone(), diags::plugin_name_empty()))?
            .to_owned();
        let ids_item = table.get("advisory_lock_ids").ok_or_else(|| {
            malformed(
                file,
                name_span.clone(),
                diags::table_without_ids(table_path),
            )
        })?;
        let array = ids_item.as_array().ok_or_else(|| {
            malformed(
                file,
                ids_item.span().unwrap_or(0..0),
                diags::ids_not_an_array(),
            )
        })?;
        let mut ids = Vec::with_capacity(array.len());
        let mut errors = Vec::new();
        for value in array {
            let span = value.span().unwrap_or(0..0);
            match value {
                Value::Integer(integer) => {
                    let literal = file.text().get(span.clone()).unwrap_or_default().trim();
                    ids.push((Id::new(*integer.value(), literal), span));
                }
                other => errors.extend(malformed(
                    file,
                    span,
                    diags::id_not_an_integer(other.type_name()),
                )),
            }
        }
        if errors.is_empty() {
            Ok(RawManifest {
                name,
                name_span,
                ids,
            })
        } else {
            Err(errors)
        }
    }
}

mod json {
    use super::{RawManifest, malformed};
    use crate::diags;
    use crate::id::Id;
    use crate::json::{Kind, Value};
    use crate::said::Said;
    use crate::source::SourceFile;

    pub(super) fn manifest(
        file: &SourceFile,
        table_path: &str,
    ) -> Result<RawManifest, Vec<crate::Finding>> {
        let text = file.text();
        let root = crate::json::parse(text).map_err(|error| {
            malformed(
                file,
                error.offset..error.offset,
                diags::manifest_not_json(&error.message),
            )
        })?;
        let mut table = &root;
        for part in table_path.split('.') {
            table = &table
                .member(part)
                .filter(|member| matches!(member.value.kind, Kind::Object(_)))
                .ok_or_else(|| malformed(file, 0..0, diags::manifest_without_object(table_path)))?
                .value;
        }
        let name = table.member("name").ok_or_else(|| {
            malformed(
                file,
                table.span.start..table.span.start + 1,
                diags::object_without_name(table_path),
            )
        })?;
        let name_span = name.value.span.clone();
        let name = match &name.value.kind {
            Kind::String(name) if !name.trim().is_empty() => name.clone(),
            _ => {
                return Err(malformed(file, name_span, diags::plugin_name_empty()));
            }
        };
        let ids = table.member("advisory_lock_ids").ok_or_else(|| {
            malformed(
                file,
                name_span.clone(),
                diags::object_without_ids(table_path),
            )
        })?;
        let Kind::Array(values) = &ids.value.kind else {
            return Err(malformed(
                file,
                ids.value.span.clone(),
                diags::ids_not_an_array_found(ids.value.type_name()),
            ));
        };
        let mut ids = Vec::with_capacity(values.len());
        let mut errors = Vec::new();
        for value in values {
            match id(text, value) {
                Ok(id) => ids.push((id, value.span.clone())),
                Err(said) => errors.extend(malformed(file, value.span.clone(), said)),
            }
        }
        if errors.is_empty() {
            Ok(RawManifest {
                name,
                name_span,
                ids,
            })
        } else {
            Err(errors)
        }
    }

    /// An integer that fits a bigint, kept as written.
    fn id(text: &str, value: &Value) -> Result<Id, Said> {
        let written = &text[value.span.clone()];
        if value.kind != Kind::Number {
            return Err(diags::id_not_an_integer(value.type_name()));
        }
        if written.contains(['.', 'e', 'E']) {
            return Err(diags::id_not_an_integer_literal(written));
        }
        written
            .parse::<i64>()
            .map(|number| Id::new(number, written))
            .map_err(|_| diags::id_beyond_bigint(written))
    }
}

/// A plugin that passed admission, and the ids its workers may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
///
/// Only admission builds one, so [`AdmittedPlugin::lock`] hands out only ids a registry admitted.
pub struct AdmittedPlugin {
    name: String,
    manifest: String,
    ids: Vec<Id>,
}

impl AdmittedPlugin {
    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its manifest's path, relative to the registry's directory.
    pub fn manifest(&self) -> &str {
        &self.manifest
    }

    /// The ids it declared.
    pub fn ids(&self) -> &[Id] {
        &self.ids
    }

    /// The admitted id `value` as a lock a worker can be built from, or `None` when this plugin
    /// did not declare it.
    pub fn lock(&self, value: i64) -> Option<Lock> {
        let id = self.ids.iter().find(|id| id.value() == value)?;
        Some(Lock {
            id: id.clone(),
            kind: Kind::Handover {
                plugin: self.name.clone(),
            },
            constant: None,
            site: None,
            worker: None,
            key: KeyShape::Exact,
            source: Source::Registry,
            span: 0..0,
        })
    }
}

/// The outcome of admitting one manifest.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Admitted; warnings may still apply.
    Admitted(AdmittedPlugin),
    /// Refused, with every reason.
    Refused {
        /// The plugin's name, when the manifest said it.
        name: Option<String>,
        /// The manifest's path.
        manifest: String,
    },
}

/// Admission of every manifest at once, as `lockward plugins` and `lockward check` report it.
#[derive(Debug, Clone)]
pub struct AdmissionReport {
    /// One verdict per manifest, in manifest path order.
    pub verdicts: Vec<Verdict>,
    /// Every refusal and warning, sorted by location.
    pub findings: Vec<Finding>,
}

impl AdmissionReport {
    /// The plugins that were admitted.
    pub fn admitted(&self) -> impl Iterator<Item = &AdmittedPlugin> {
        self.verdicts.iter().filter_map(|verdict| match verdict {
            Verdict::Admitted(plugin) => Some(plugin),
            Verdict::Refused { .. } => None,
        })
    }

    /// Every id any parsed manifest declares, admitted or not: they count as recorded when the
    /// next free id is computed.
    pub fn declared_ids(manifests: &[Manifest]) -> impl Iterator<Item = i64> + '_ {
        manifests
            .iter()
            .flat_map(|manifest| manifest.ids.iter().map(|(id, _)| id.value()))
    }
}

impl Registry {
    /// Admits one plugin at load time: holds `manifest` to the registry (rules 1, 2, 3 and 5 of
    /// DESIGN §3) and to the manifests of the plugins already loaded, `others` (rule 4).
    pub fn admit(
        &self,
        manifest: &Manifest,
        others: &[&Manifest],
    ) -> Result<AdmittedPlugin, Vec<Finding>> {
        self.admit_against(manifest, &Declared::new(others.iter().copied()))
    }

    fn admit_against(
        &self,
        manifest: &Manifest,
        declared: &Declared<'_>,
    ) -> Result<AdmittedPlugin, Vec<Finding>> {
        let mut findings = self.registry_refusals(manifest);
        findings.extend(self.shared(manifest, declared));
        if findings.is_empty() {
            Ok(AdmittedPlugin {
                name: manifest.name.clone(),
                manifest: manifest.path().to_owned(),
                ids: manifest.ids.iter().map(|(id, _)| id.clone()).collect(),
            })
        } else {
            Err(findings)
        }
    }

    /// Admits every manifest: `parsed` holds, per manifest path, the parsed manifest or the
    /// reasons it is malformed. A malformed manifest is refused; the others are still admitted.
    /// Also warns about handovers that no manifest declares.
    pub fn admit_all(
        &self,
        parsed: Vec<(String, Result<Manifest, Vec<Finding>>)>,
    ) -> AdmissionReport {
        let mut verdicts = Vec::new();
        let mut findings = Vec::new();
        let mut manifests = Vec::new();
        for (path, result) in parsed {
            match result {
                Ok(manifest) => manifests.push(manifest),
                Err(errors) => {
                    findings.extend(errors);
                    verdicts.push(Verdict::Refused {
                        name: None,
                        manifest: path,
                    });
                }
            }
        }
        let mut names: BTreeMap<&str, &Manifest> = BTreeMap::new();
        let mut duplicate_names = Vec::new();
        for manifest in &manifests {
            if let Some(first) = names.insert(&manifest.name, manifest) {
                duplicate_names.push((manifest, first));
            }
        }
        let mut refused_paths: HashSet<&str> = HashSet::new();
        for (manifest, first) in duplicate_names {
            findings.push(
                diags::plugin_name_used_twice(&manifest.name, first.path(), manifest.path())
                    .at(&manifest.file, manifest.name_span.clone())
                    .with_label(
                        first
                            .file
                            .label(first.name_span.clone(), diags::also_named_here()),
                    ),
            );
            refused_paths.extend([manifest.path(), first.path()]);
        }
        let declared = Declared::new(&manifests);
        for manifest in &manifests {
            match self.admit_against(manifest, &declared) {
                Ok(plugin) if !refused_paths.contains(&manifest.path()) => {
                    verdicts.push(Verdict::Admitted(plugin));
                }
                result => {
                    findings.extend(result.err().unwrap_or_default());
                    verdicts.push(Verdict::Refused {
                        name: Some(manifest.name.clone()),
                        manifest: manifest.path().to_owned(),
                    });
                }
            }
        }
        findings.extend(self.unused_handovers(&manifests));
        verdicts.sort_by(|a, b| verdict_path(a).cmp(verdict_path(b)));
        crate::finding::sort(&mut findings);
        AdmissionReport { verdicts, findings }
    }

    fn registry_refusals(&self, manifest: &Manifest) -> Vec<Finding> {
        let plugin = &manifest.name;
        let block = &self.core.block;
        let mut findings = Vec::new();
        for (id, span) in &manifest.ids {
            let entry = self.lock(id.value());
            let refusal = match entry.map(|lock| &lock.kind) {
                Some(Kind::Handover { plugin: holder }) if holder == plugin => None,
                Some(Kind::Constant | Kind::External { .. } | Kind::Named { .. }) => {
                    let lock = entry.expect("matched an entry");
                    let named = match &lock.kind {
                        Kind::Named { name, .. } => Some(name.as_str()),
                        _ => None,
                    };
                    let constant = lock
                        .constant
                        .as_deref()
                        .or(lock.site.as_deref())
                        .or(named)
                        .unwrap_or("?");
                    Some((
                        diags::plugin_collides_with_core(plugin, id, lock.kind.as_str(), constant),
                        Some(diags::core_uses_it()),
                    ))
                }
                Some(Kind::Retired { reason }) => Some((
                    diags::plugin_uses_retired_id(plugin, id, reason),
                    Some(diags::retired_here()),
                )),
                Some(Kind::Handover { plugin: holder }) => Some((
                    diags::plugin_takes_others_handover(plugin, id, holder),
                    Some(diags::handed_over_here()),
                )),
                Some(Kind::Reserved { reason }) => Some((
                    diags::plugin_id_reserved(plugin, id, reason, &block.start, &block.end),
                    Some(diags::reserved_here()),
                )),
                None if block.contains(id.value()) => Some((
                    diags::plugin_id_in_core_block(plugin, id, &block.start, &block.end),
                    None,
                )),
                None => None,
            };
            let Some((said, label)) = refusal else {
                continue;
            };
            let mut finding = manifest.id_finding(said, span);
            if let (Some(lock), Some(label)) = (entry, label) {
                finding.labels.push(self.label(lock, label));
            }
            findings.push(finding);
        }
        findings
    }

    /// Rule 4: ids `manifest` shares with other manifests. Refused unless `manifest` holds the
    /// handover (then the others are refused by rule 3, and reporting it twice helps nobody).
    fn shared(&self, manifest: &Manifest, declared: &Declared<'_>) -> Vec<Finding> {
        let mut findings = Vec::new();
        for (id, span) in &manifest.ids {
            if matches!(
                self.lock(id.value()).map(|lock| &lock.kind),
                Some(Kind::Handover { .. })
            ) {
                continue;
            }
            for &(other, other_span) in declared.by_id.get(&id.value()).into_iter().flatten() {
                if other.path() == manifest.path() {
                    continue;
                }
                let said = diags::plugin_id_shared(&manifest.name, id, &other.name, other.path());
                let label = other
                    .file
                    .label(other_span.clone(), diags::declared_by_here(&other.name));
                findings.push(manifest.id_finding(said, span).with_label(label));
            }
        }
        findings
    }

    fn unused_handovers(&self, manifests: &[Manifest]) -> Vec<Finding> {
        let declared: HashSet<(&str, i64)> = manifests
            .iter()
            .flat_map(|m| m.ids.iter().map(|(id, _)| (m.name.as_str(), id.value())))
            .collect();
        self.locks
            .iter()
            .filter_map(|lock| {
                let Kind::Handover { plugin } = &lock.kind else {
                    return None;
                };
                if lock.source != Source::Registry {
                    return None;
                }
                (!declared.contains(&(plugin.as_str(), lock.id.value()))).then(|| {
                    diags::unused_handover(&lock.id, plugin).at(&self.file, lock.span.clone())
                })
            })
            .collect()
    }
}

/// Which manifests declare each id, so that rule 4 costs a lookup per id instead of a pass over
/// every other manifest.
struct Declared<'m> {
    by_id: HashMap<i64, Vec<(&'m Manifest, &'m Range<usize>)>>,
}

impl<'m> Declared<'m> {
    fn new(manifests: impl IntoIterator<Item = &'m Manifest>) -> Self {
        let mut by_id: HashMap<i64, Vec<(&'m Manifest, &'m Range<usize>)>> = HashMap::new();
        for manifest in manifests {
            for (id, span) in &manifest.ids {
                by_id.entry(id.value()).or_default().push((manifest, span));
            }
        }
        Self { by_id }
    }
}

fn verdict_path(verdict: &Verdict) -> &str {
    match verdict {
        Verdict::Admitted(plugin) => &plugin.manifest,
        Verdict::Refused { manifest, .. } => manifest,
    }
}
