//! From the text of `lockward.toml` to a validated [`Registry`], checking every rule of DESIGN §2
//! and collecting every problem instead of stopping at the first.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use toml_edit::{Item, TableLike, Value};

use crate::diags;
use crate::finding::Finding;
use crate::id::{Id, KeyShape};
use crate::near_miss::edit_distance;
use crate::registry::{
    Block, Core, Kind, Lock, PluginSettings, Project, Registry, ScanSettings, Share, Source,
    Wrapper,
};
use crate::said::Said;
use crate::source::SourceFile;

pub use lockward_lang::is_identifier;

/// A registry that passed every rule, and the warnings it raised on the way.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The validated registry.
    pub registry: Registry,
    /// Findings that do not make the registry invalid (a core constant outside the block).
    pub warnings: Vec<Finding>,
}

/// Why a registry file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read at all.
    #[error("{path}: cannot read the registry: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file was read but breaks the format or its rules; every problem is listed.
    #[error("{path}: the registry has {}", tally(findings))]
    Invalid {
        /// The path as given.
        path: String,
        /// Every problem found, in file order.
        findings: Vec<Finding>,
    },
}

/// `1 error`, `2 errors and 1 warning`: what an invalid registry's findings are.
fn tally(findings: &[Finding]) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let errors = findings.iter().filter(|finding| finding.is_error()).count();
    match findings.len() - errors {
        0 => count(errors, "error"),
        warnings => format!(
            "{} and {}",
            count(errors, "error"),
            count(warnings, "warning")
        ),
    }
}

impl Registry {
    /// Reads and validates the registry at `path`. Findings name the file by `label` (usually
    /// `lockward.toml`, relative to the registry's directory).
    pub fn load(path: &Path, label: &str) -> Result<Loaded, LoadError> {
        let bytes =
            crate::file::read_regular(path, crate::file::MAX_PROJECT_FILE).map_err(|source| {
                LoadError::Io {
                    path: path.display().to_string(),
                    source,
                }
            })?;
        let text = decode_utf8(label, bytes).map_err(|finding| LoadError::Invalid {
            path: path.display().to_string(),
            findings: vec![finding],
        })?;
        parse(label, &text).map_err(|findings| LoadError::Invalid {
            path: path.display().to_string(),
            findings,
        })
    }
}

/// Decodes a file's bytes as UTF-8, or reports where the first invalid byte is.
pub fn decode_utf8(label: &str, bytes: Vec<u8>) -> Result<String, Finding> {
    String::from_utf8(bytes).map_err(|error| {
        let valid = error.utf8_error().valid_up_to();
        let bytes = error.into_bytes();
        let prefix = String::from_utf8_lossy(&bytes[..valid]).into_owned();
        let file = SourceFile::new(label, prefix.clone());
        diags::not_utf8(bytes[valid]).at(&file, valid..valid)
    })
}

/// Parses and validates the text of a registry file named `label`.
///
/// Returns every problem found when the registry breaks a rule; a registry that parses is
/// returned with its warnings.
pub fn parse(label: &str, text: &str) -> Result<Loaded, Vec<Finding>> {
    let file = SourceFile::new(label, text);
    let document = match toml_edit::Document::parse(text) {
        Ok(document) => document,
        Err(error) => return Err(vec![syntax_error(&file, &error)]),
    };
    let mut checker = Checker {
        file: &file,
        findings: Vec::new(),
    };
    let raw = checker.document(document.as_table());
    let registry = checker.rules(raw);
    let (errors, warnings): (Vec<Finding>, Vec<Finding>) =
        checker.findings.into_iter().partition(Finding::is_error);
    match registry {
        Some(registry) if errors.is_empty() => Ok(Loaded { registry, warnings }),
        _ => {
            let mut all = errors;
            all.extend(warnings);
            crate::finding::sort(&mut all);
            Err(all)
        }
    }
}

/// The `id` of every `[[lock]]` table of a registry text, whatever else is wrong with it: what a
/// registry that breaks a rule (another branch's, written before a rule existed) still records,
/// so that its ids stay taken. `None` when the text is not TOML, or has no `[[lock]]` array of
/// tables where one should be, and so its ids cannot be known.
pub fn recorded_ids(text: &str) -> Option<Vec<Id>> {
    let document = toml_edit::Document::parse(text).ok()?;
    let Some(item) = document.as_table().get("lock") else {
        return Some(Vec::new());
    };
    let tables = item.as_array_of_tables()?;
    let mut ids = Vec::new();
    for table in tables {
        let Some(item) = table.get("id") else {
            continue;
        };
        let Some(Value::Integer(formatted)) = item.as_value() else {
            return None;
        };
        let literal = text
            .get(item_span(item))
            .map(str::trim)
            .filter(|literal| !literal.is_empty())
            .map_or_else(|| formatted.value().to_string(), str::to_owned);
        ids.push(Id::new(*formatted.value(), literal));
    }
    Some(ids)
}

fn syntax_error(file: &SourceFile, error: &toml_edit::TomlError) -> Finding {
    let span = error.span().unwrap_or(0..0);
    let message = error.message().trim_end().to_owned();
    if message.contains("overflowed") {
        return diags::integer_beyond_bigint().at(file, span);
    }
    diags::invalid_toml(&message).at(file, span)
}

/// A value with the byte range it was written at.
#[derive(Debug, Clone)]
struct Spanned<T> {
    value: T,
    span: Range<usize>,
}

/// One `[[lock]]` entry as written, before the rules.
#[derive(Debug, Default)]
struct RawLock {
    span: Range<usize>,
    id: Option<Spanned<Id>>,
    constant: Option<Spanned<String>>,
    site: Option<Spanned<String>>,
    worker: Option<Spanned<String>>,
    plugin: Option<Spanned<String>>,
    retired: Option<Spanned<String>>,
    reserved: Option<Spanned<String>>,
    defined_in: Option<Spanned<Vec<String>>>,
    key: Option<Spanned<KeyShape>>,
    /// A lock taken by name: the name, and the library that hashes it into the key.
    name: Option<Spanned<String>>,
    hash: Option<Spanned<String>>,
}

#[derive(Debug)]
struct RawRegistry {
    project: Option<Project>,
    core: Option<Core>,
    plugins: PluginSettings,
    scan: ScanSettings,
    shares: Vec<Share>,
    locks: Vec<RawLock>,
}

/// The longest project name: it shares PostgreSQL's 63 bytes of `application_name` with the
/// lock's name and the session's pid and host.
const MAX_PROJECT_NAME: usize = 32;

const TOP_KEYS: &[&str] = &["project", "core", "plugins", "scan", "share", "lock"];
const SHARE_KEYS: &[&str] = &["registry"];
const PROJECT_KEYS: &[&str] = &["name", "page"];
const CORE_KEYS: &[&str] = &["constants", "block"];
const BLOCK_KEYS: &[&str] = &["start", "end"];
const PLUGINS_KEYS: &[&str] = &["manifests", "table"];
const SCAN_KEYS: &[&str] = &[
    "include",
    "exclude",
    "constant_patterns",
    "keywords",
    "wrappers",
];
const WRAPPER_KEYS: &[&str] = &["name", "position", "keyword"];
const LOCK_KEYS: &[&str] = &[
    "id",
    "constant",
    "site",
    "worker",
    "plugin",
    "retired",
    "reserved",
    "defined_in",
    "key",
    "name",
    "hash",
];

struct Checker<'a> {
    file: &'a SourceFile,
    findings: Vec<Finding>,
}

impl Checker<'_> {
    fn report(&mut self, said: Said, span: Range<usize>) -> &mut Finding {
        self.findings.push(said.at(self.file, span));
        self.findings.last_mut().expect("just pushed")
    }

    /// Reads every table, so that every problem is reported in one pass; `[project]` and
    /// `[core]` are `None` when they are missing or broken (already reported).
    fn document(&mut self, root: &toml_edit::Table) -> RawRegistry {
        self.unknown_keys(root, TOP_KEYS, "the registry");
        let whole = 0..0;
        let project = self.required_table(root, "project", whole.clone());
        let core = self.required_table(root, "core", whole);

        let project = project.and_then(|table| {
            self.unknown_keys(table, PROJECT_KEYS, "[project]");
            // An empty name is a name the rule refuses, not a value of the wrong type.
            let empty = table
                .get("name")
                .and_then(|item| item.as_str().map(|text| (text, item_span(item))))
                .filter(|(text, _)| text.trim().is_empty())
                .map(|(text, span)| Spanned {
                    value: text.to_owned(),
                    span,
                });
            if let Some(empty) = empty {
                self.project_name(&empty);
                return None;
            }
            let name = self.required_string(table, "name", "[project]")?;
            let page = self.optional_string(table, "page");
            if let Some(page) = &page {
                self.path_inside_project(page, "[project] page");
            }
            let page = page.map(|page| page.value);
            self.project_name(&name).then_some(Project {
                name: name.value,
                page,
            })
        });

        let core = core.and_then(|table| {
            self.unknown_keys(table, CORE_KEYS, "[core]");
            let constants = self.required_string(table, "constants", "[core]");
            if let Some(constants) = &constants {
                self.path_inside_project(constants, "[core] constants");
                self.constants_language(constants);
            }
            let block = self.block(table);
            Some(Core {
                constants: constants?.value,
                block: block?.value,
            })
        });

        let plugins = self.plugins(root);
        let scan = self.scan(root);
        let shares = self.shares(root);
        let locks = self.locks(root);
        RawRegistry {
            project,
            core,
            plugins,
            scan,
            shares,
            locks,
        }
    }

    /// The project's name travels in every lock session's `application_name` and in the page's
    /// title, so it is kept to characters that need no escaping anywhere.
    fn project_name(&mut self, name: &Spanned<String>) -> bool {
        let valid = !name.value.is_empty()
            && name.value.len() <= MAX_PROJECT_NAME
            && name
                .value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !valid {
            self.report(
                diags::project_name_not_allowed(&name.value, MAX_PROJECT_NAME),
                name.span.clone(),
            );
        }
        valid
    }

    fn required_table<'t>(
        &mut self,
        parent: &'t dyn TableLike,
        key: &str,
        parent_span: Range<usize>,
    ) -> Option<&'t dyn TableLike> {
        match parent.get(key) {
            None => {
                self.report(diags::missing_table(key), parent_span);
                None
            }
            Some(item) => self.table_like(item, key),
        }
    }

    fn table_like<'t>(&mut self, item: &'t Item, key: &str) -> Option<&'t dyn TableLike> {
        if let Some(table) = item.as_table_like() {
            return Some(table);
        }
        self.report(diags::not_a_table(key, item.type_name()), item_span(item));
        None
    }

    fn unknown_keys(&mut self, table: &dyn TableLike, known: &[&str], place: &str) {
        for (key, _) in table.iter() {
            if known.contains(&key) {
                continue;
            }
            let span = table
                .key(key)
                .and_then(toml_edit::Key::span)
                .unwrap_or(0..0);
            let near = did_you_mean(key, known);
            self.report(diags::unknown_key(key, place, near, known), span);
        }
    }

    /// Core's constants file must be in a language `lockward take` writes (and the scan reads):
    /// one it cannot write is refused here, where the registry names it, not at the first take.
    fn constants_language(&mut self, constants: &Spanned<String>) {
        if lockward_lang::Language::from_path(&constants.value)
            .is_some_and(lockward_lang::Language::writes_constants)
        {
            return;
        }
        self.report(
            diags::constants_language_not_written(&constants.value),
            constants.span.clone(),
        );
    }

    /// A path the registry names (`key`) must stay in the registry's directory: not absolute,
    /// no `..` above it. (`lockward` resolves symlinks on the way itself, when it opens the
    /// file.)
    fn path_inside_project(&mut self, path: &Spanned<String>, key: &str) {
        let Some(why) = outside_project(&path.value) else {
            return;
        };
        let absolute = why == Outside::Absolute;
        self.report(
            diags::path_outside_project(key, &path.value, absolute),
            path.span.clone(),
        );
    }

    fn required_string(
        &mut self,
        table: &dyn TableLike,
        key: &str,
        place: &str,
    ) -> Option<Spanned<String>> {
        if table.get(key).is_none() {
            self.report(diags::missing_key(place, key), table_span(table));
            return None;
        }
        self.optional_string(table, key)
    }

    fn optional_string(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<String>> {
        let item = table.get(key)?;
        let span = item_span(item);
        match item.as_str() {
            Some(text) if text.trim().is_empty() => {
                self.report(diags::empty_string(key), span);
                None
            }
            Some(text) => Some(Spanned {
                value: text.to_owned(),
                span,
            }),
            None => {
                self.report(diags::not_a_string(key, item.type_name()), span);
                None
            }
        }
    }

    fn string_list(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<Vec<String>>> {
        let item = table.get(key)?;
        let span = item_span(item);
        let Some(array) = item.as_array() else {
            self.report(diags::not_a_string_list(key, item.type_name()), span);
            return None;
        };
        let mut values = Vec::with_capacity(array.len());
        for value in array {
            match value.as_str() {
                Some(text) => values.push(text.to_owned()),
                None => {
                    self.report(
                        diags::list_item_not_a_string(key, value.type_name()),
                        value.span().unwrap_or(span.clone()),
                    );
                }
            }
        }
        Some(Spanned {
            value: values,
            span,
        })
    }

    fn integer(&mut self, table: &dyn TableLike, key: &str) -> Option<Spanned<Id>> {
        let item = table.get(key)?;
        let span = item_span(item);
        if let Some(Value::Integer(formatted)) = item.as_value() {
            let literal = self
                .file
                .text()
                .get(span.clone())
                .unwrap_or_default()
                .trim();
            let literal = if literal.is_empty() {
                formatted.value().to_string()
            } else {
                literal.to_owned()
            };
            return Some(Spanned {
                value: Id::new(*formatted.value(), literal),
                span,
            });
        }
        self.report(diags::not_an_integer(key, item.type_name()), span);
        None
    }

    fn block(&mut self, core: &dyn TableLike) -> Option<Spanned<Block>> {
        let Some(item) = core.get("block") else {
            self.report(diags::missing_block(), table_span(core));
            return None;
        };
        let span = item_span(item);
        let table = self.table_like(item, "block")?;
        self.unknown_keys(table, BLOCK_KEYS, "`block`");
        let mut bound = |key: &str| {
            if table.get(key).is_none() {
                self.report(diags::missing_key("`block`", key), span.clone());
            }
            self.integer(table, key)
        };
        let start = bound("start");
        let end = bound("end");
        let (start, end) = (start?, end?);
        if start.value.value() > end.value.value() {
            self.report(
                diags::block_inverted(&start.value, &end.value),
                span.clone(),
            );
            return None;
        }
        Some(Spanned {
            value: Block {
                start: start.value,
                end: end.value,
            },
            span,
        })
    }

    fn plugins(&mut self, root: &toml_edit::Table) -> PluginSettings {
        let mut settings = PluginSettings {
            manifests: Vec::new(),
            manifest_spans: Vec::new(),
            table: "plugin".to_owned(),
        };
        let Some(table) = root
            .get("plugins")
            .and_then(|item| self.table_like(item, "plugins"))
        else {
            return settings;
        };
        self.unknown_keys(table, PLUGINS_KEYS, "[plugins]");
        if let Some(globs) = self.string_list(table, "manifests") {
            self.check_globs(&globs);
            settings.manifest_spans = table
                .get("manifests")
                .and_then(Item::as_array)
                .into_iter()
                .flatten()
                .filter(|value| value.as_str().is_some())
                .map(|value| value.span().unwrap_or(globs.span.clone()))
                .collect();
            for (glob, span) in globs.value.iter().zip(&settings.manifest_spans) {
                self.inside_project(glob, span.clone());
            }
            settings.manifests = globs.value;
        }
        if let Some(path) = self.optional_string(table, "table") {
            settings.table = path.value;
        }
        settings
    }

    /// Manifests are third-party files whose lines findings print: a glob may only find files
    /// under the registry's directory. (A match that leaves it through a symlink is refused
    /// where the glob is expanded.)
    fn inside_project(&mut self, glob: &str, span: Range<usize>) {
        let absolute = outside_project(glob) == Some(Outside::Absolute);
        let parent = glob.split(['/', '\\']).any(|part| part == "..");
        if !absolute && !parent {
            return;
        }
        self.report(diags::glob_outside_project(glob, absolute), span);
    }

    fn scan(&mut self, root: &toml_edit::Table) -> ScanSettings {
        let mut settings = ScanSettings {
            include: Vec::new(),
            exclude: Vec::new(),
            constant_patterns: ScanSettings::DEFAULT_CONSTANT_PATTERNS
                .iter()
                .map(|&p| p.to_owned())
                .collect(),
            keywords: ScanSettings::DEFAULT_KEYWORDS
                .iter()
                .map(|&k| k.to_owned())
                .collect(),
            wrappers: Vec::new(),
        };
        let Some(table) = root
            .get("scan")
            .and_then(|item| self.table_like(item, "scan"))
        else {
            return settings;
        };
        self.unknown_keys(table, SCAN_KEYS, "[scan]");
        if let Some(globs) = self.string_list(table, "include") {
            self.check_globs(&globs);
            settings.include = globs.value;
        }
        if let Some(globs) = self.string_list(table, "exclude") {
            self.check_globs(&globs);
            settings.exclude = globs.value;
        }
        if let Some(patterns) = self.string_list(table, "constant_patterns") {
            settings.constant_patterns = patterns.value;
        }
        if let Some(keywords) = self.string_list(table, "keywords") {
            for keyword in keywords.value {
                if !settings.keywords.contains(&keyword) {
                    settings.keywords.push(keyword);
                }
            }
        }
        if let Some(item) = table.get("wrappers") {
            settings.wrappers = self.wrappers(item);
        }
        settings
    }

    /// `wrappers = [{ name = "with_lock", position = 2 }, { name = "lock", keyword = "id" }]`.
    fn wrappers(&mut self, item: &Item) -> Vec<Wrapper> {
        let Some(array) = item.as_array() else {
            self.report(
                diags::wrappers_not_an_array(item.type_name()),
                item_span(item),
            );
            return Vec::new();
        };
        let mut wrappers = Vec::new();
        for value in array {
            let span = value.span().unwrap_or_else(|| item_span(item));
            let Some(table) = value.as_inline_table() else {
                self.report(diags::wrapper_not_a_table(value.type_name()), span);
                continue;
            };
            self.unknown_keys(table, WRAPPER_KEYS, "a `wrappers` entry");
            let name = self.required_string(table, "name", "a `wrappers` entry");
            if let Some(name) = &name
                && !name
                    .value
                    .split(['.', ':'])
                    .filter(|p| !p.is_empty())
                    .all(is_identifier)
            {
                self.report(
                    diags::wrapper_name_not_a_function(&name.value),
                    name.span.clone(),
                );
                continue;
            }
            let position = self.integer(table, "position").and_then(|position| {
                let value = usize::try_from(position.value.value())
                    .ok()
                    .filter(|&p| (1..=64).contains(&p));
                if value.is_none() {
                    self.report(diags::wrapper_position_out_of_range(), position.span);
                }
                value
            });
            let keyword = self.optional_string(table, "keyword");
            if let Some(keyword) = &keyword
                && !is_identifier(&keyword.value)
            {
                self.report(
                    diags::wrapper_keyword_not_an_identifier(&keyword.value),
                    keyword.span.clone(),
                );
                continue;
            }
            if position.is_none() && keyword.is_none() && table.get("position").is_none() {
                self.report(diags::wrapper_without_position(), span);
                continue;
            }
            if let Some(name) = name {
                let name = name.value.replace("::", ".");
                wrappers.push(Wrapper {
                    name,
                    position,
                    keyword: keyword.map(|k| k.value),
                });
            }
        }
        wrappers
    }

    fn check_globs(&mut self, globs: &Spanned<Vec<String>>) {
        for glob in &globs.value {
            if let Err(error) = globset::Glob::new(glob) {
                self.report(diags::invalid_glob(glob, &error.kind()), globs.span.clone());
            }
        }
    }

    /// `[[share]] registry = "../reports/lockward.toml"`: another project's registry on the same
    /// database. Its path is read, never written, so it may lie outside this registry's
    /// directory (relative paths are relative to it).
    fn shares(&mut self, root: &toml_edit::Table) -> Vec<Share> {
        let Some(array) = self.array_of_tables(root, "share") else {
            return Vec::new();
        };
        let mut shares = Vec::new();
        for table in array {
            self.unknown_keys(table, SHARE_KEYS, "[[share]]");
            let Some(path) = self.required_string(table, "registry", "[[share]]") else {
                continue;
            };
            if path.value.trim().is_empty() {
                self.report(diags::share_registry_empty(), path.span);
                continue;
            }
            shares.push(Share {
                registry: path.value,
                span: path.span,
            });
        }
        shares
    }

    /// `[[key]]`'s tables; `None` when there are none, or (reported) when `key` is not an
    /// array of tables.
    fn array_of_tables<'t>(
        &mut self,
        root: &'t toml_edit::Table,
        key: &str,
    ) -> Option<&'t toml_edit::ArrayOfTables> {
        let item = root.get(key)?;
        let Item::ArrayOfTables(array) = item else {
            self.report(
                diags::not_an_array_of_tables(key, item.type_name()),
                item_span(item),
            );
            return None;
        };
        Some(array)
    }

    fn locks(&mut self, root: &toml_edit::Table) -> Vec<RawLock> {
        let Some(array) = self.array_of_tables(root, "lock") else {
            return Vec::new();
        };
        array
            .iter()
            .map(|table| self.lock(table, table.span().unwrap_or(0..0)))
            .collect()
    }

    fn lock(&mut self, table: &dyn TableLike, span: Range<usize>) -> RawLock {
        self.unknown_keys(table, LOCK_KEYS, "[[lock]]");
        if table.get("id").is_none() && table.get("name").is_none() {
            self.report(diags::lock_without_id(), span.clone());
        }
        let key = table.get("key").and_then(|item| {
            let span = item_span(item);
            match item.as_str() {
                Some("exact") => Some(Spanned {
                    value: KeyShape::Exact,
                    span,
                }),
                Some("family") => Some(Spanned {
                    value: KeyShape::Family,
                    span,
                }),
                _ => {
                    self.report(diags::key_form_unknown(), span);
                    None
                }
            }
        });
        RawLock {
            id: self.integer(table, "id"),
            constant: self.optional_string(table, "constant"),
            site: self.optional_string(table, "site"),
            worker: self.optional_string(table, "worker"),
            plugin: self.optional_string(table, "plugin"),
            retired: self.optional_string(table, "retired"),
            reserved: self.optional_string(table, "reserved"),
            defined_in: self
                .string_list(table, "defined_in")
                .filter(|list| !list.value.is_empty())
                .inspect(|list| {
                    for path in &list.value {
                        let path = Spanned {
                            value: path.clone(),
                            span: list.span.clone(),
                        };
                        self.path_inside_project(&path, "`defined_in`");
                    }
                }),
            key,
            name: self.optional_string(table, "name"),
            hash: self.optional_string(table, "hash"),
            span,
        }
    }

    /// The id of a lock taken by name (`name` and `hash`): the key the library computes for the
    /// name (for a two-int key, its first int, as a family), spanned at the name. `None` when the
    /// entry is no named lock, or (reported) when it is a broken one.
    fn named_id(&mut self, entry: &mut RawLock) -> Option<Spanned<Id>> {
        let (name, hash) = match (&entry.name, &entry.hash) {
            (None, None) => return None,
            (Some(name), Some(hash)) => (name.clone(), hash.clone()),
            (Some(name), None) => {
                self.report(
                    diags::named_lock_without_hash(&name.value, crate::well_known::NAME_HASHES),
                    name.span.clone(),
                );
                return None;
            }
            (None, Some(hash)) => {
                self.report(diags::hash_without_name(), hash.span.clone());
                return None;
            }
        };
        let Some(key) = crate::well_known::name_key(&hash.value, &name.value) else {
            let near = crate::well_known::NAME_HASHES
                .iter()
                .min_by_key(|known| edit_distance(known, &hash.value))
                .filter(|known| edit_distance(known, &hash.value) <= 3)
                .copied();
            self.report(
                diags::unknown_name_hash(&hash.value, near, crate::well_known::NAME_HASHES),
                hash.span.clone(),
            );
            return None;
        };
        let (value, shape) = match key {
            crate::AdvisoryKey::Bigint(k) => (k, KeyShape::Exact),
            crate::AdvisoryKey::Pair(a, _) => (i64::from(a), KeyShape::Family),
        };
        if let Some(key) = &entry.key
            && key.value != shape
        {
            self.report(
                diags::named_lock_in_other_key_form(&hash.value, &name.value),
                key.span.clone(),
            );
            return None;
        }
        if let Some(id) = &entry.id
            && id.value.value() != value
        {
            self.report(
                diags::named_lock_id_not_its_key(&id.value, &hash.value, &name.value, value),
                id.span.clone(),
            );
            return None;
        }
        entry.key = Some(Spanned {
            value: shape,
            span: name.span.clone(),
        });
        Some(entry.id.clone().unwrap_or(Spanned {
            value: Id::plain(value),
            span: name.span,
        }))
    }

    /// The rules of DESIGN §2 that look across fields and entries. Every entry is checked,
    /// whatever was wrong before it, so that one pass reports every problem.
    fn rules(&mut self, raw: RawRegistry) -> Option<Registry> {
        let mut locks = Vec::with_capacity(raw.locks.len());
        let mut first_by_id: HashMap<i64, Range<usize>> = HashMap::new();
        // (constant name, defining file) → where it was first registered.
        let mut defined: HashMap<(String, String), Range<usize>> = HashMap::new();
        let constants_file = raw.core.as_ref().map_or("", |core| core.constants.as_str());
        let mut broken = false;
        for mut entry in raw.locks {
            let named = entry.name.is_some() || entry.hash.is_some();
            let id = if named {
                self.named_id(&mut entry)
            } else {
                entry.id.clone()
            };
            let Some(id) = id else {
                broken = true;
                continue;
            };
            let duplicate = if let Some(first) = first_by_id.get(&id.value.value()) {
                let label = self
                    .file
                    .label(first.clone(), diags::first_registered_here());
                self.report(diags::duplicate_id(&id.value), id.span.clone())
                    .labels
                    .push(label);
                true
            } else {
                first_by_id.insert(id.value.value(), id.span.clone());
                false
            };
            let Some((lock, constant)) = self.entry(entry, id, raw.core.as_ref()) else {
                broken = true;
                continue;
            };
            if duplicate {
                broken = true;
                continue;
            }
            if let Some(constant) = &constant {
                for path in lock.defined_in_paths(constants_file) {
                    let key = (constant.value.clone(), path.to_owned());
                    if let Some(first) = defined.get(&key) {
                        let label = self
                            .file
                            .label(first.clone(), diags::first_registered_here());
                        self.report(
                            diags::duplicate_constant(&constant.value, path),
                            constant.span.clone(),
                        )
                        .labels
                        .push(label);
                        broken = true;
                    } else {
                        defined.insert(key, constant.span.clone());
                    }
                }
            }
            locks.push(lock);
        }
        let (Some(project), Some(core)) = (raw.project, raw.core) else {
            return None;
        };
        if broken {
            return None;
        }
        let mut registry = Registry {
            project,
            core,
            plugins: raw.plugins,
            scan: raw.scan,
            shares: raw.shares,
            locks,
            by_id: HashMap::new(),
            file: self.file.clone(),
        };
        registry.reindex();
        Some(registry)
    }

    /// Checks one entry's fields against each other, reporting every problem; returns the lock
    /// and its constant's span when there is none.
    fn entry(
        &mut self,
        entry: RawLock,
        id: Spanned<Id>,
        core: Option<&Core>,
    ) -> Option<(Lock, Option<Spanned<String>>)> {
        let mut ok = self.one_kind(&entry, &id);
        if let Some(constant) = &entry.constant
            && !is_constant_name(&constant.value)
        {
            self.report(
                diags::invalid_constant_name(&constant.value),
                constant.span.clone(),
            );
            ok = false;
        }
        ok &= self.site(&entry, &id);
        let kind = if let Some(reason) = &entry.retired {
            Some(Kind::Retired {
                reason: reason.value.clone(),
            })
        } else if let (Some(name), Some(hash)) = (&entry.name, &entry.hash) {
            Some(Kind::Named {
                name: name.value.clone(),
                hash: hash.value.clone(),
            })
        } else if let Some(plugin) = &entry.plugin {
            Some(Kind::Handover {
                plugin: plugin.value.clone(),
            })
        } else if let Some(reason) = &entry.reserved {
            Some(Kind::Reserved {
                reason: reason.value.clone(),
            })
        } else if let Some(defined_in) = &entry.defined_in {
            if entry.constant.is_none() && entry.site.is_none() {
                self.report(
                    diags::external_without_constant(&id.value),
                    entry.span.clone(),
                );
                ok = false;
            }
            Some(Kind::External {
                defined_in: defined_in.value.clone(),
            })
        } else if entry.constant.is_some() {
            Some(Kind::Constant)
        } else {
            let said = if entry.site.is_some() {
                diags::site_without_defined_in(&id.value)
            } else {
                diags::entry_without_kind(&id.value)
            };
            self.report(said, id.span.clone());
            None
        };
        if let Some(kind @ (Kind::Constant | Kind::External { .. } | Kind::Named { .. })) = &kind
            && entry.worker.is_none()
        {
            self.report(
                diags::missing_worker(kind.as_str(), &id.value),
                entry
                    .constant
                    .as_ref()
                    .map_or(id.span.clone(), |c| c.span.clone()),
            );
            ok = false;
        }
        let key = entry.key.as_ref().map_or(KeyShape::Exact, |key| key.value);
        if key == KeyShape::Family && !id.value.fits_int4() {
            self.report(diags::family_beyond_int4(&id.value), id.span.clone());
            ok = false;
        }
        if let (Some(Kind::Constant), Some(core)) = (&kind, core)
            && !core.block.contains(id.value.value())
        {
            self.report(
                diags::constant_outside_block(&id.value, &core.block.start, &core.block.end),
                id.span.clone(),
            );
        }
        let kind = kind.filter(|_| ok)?;
        Some((
            Lock {
                id: id.value,
                kind,
                constant: entry.constant.as_ref().map(|c| c.value.clone()),
                site: entry.site.map(|s| s.value),
                worker: entry.worker.map(|w| w.value),
                key,
                source: Source::Registry,
                span: id.span,
            },
            entry.constant,
        ))
    }

    /// `plugin`, `retired`, `reserved` and `defined_in` exclude each other.
    fn one_kind(&mut self, entry: &RawLock, id: &Spanned<Id>) -> bool {
        let kinds: Vec<(&str, Range<usize>)> = [
            ("plugin", entry.plugin.as_ref().map(|s| s.span.clone())),
            ("retired", entry.retired.as_ref().map(|s| s.span.clone())),
            ("reserved", entry.reserved.as_ref().map(|s| s.span.clone())),
            (
                "defined_in",
                entry.defined_in.as_ref().map(|s| s.span.clone()),
            ),
            // A retired named lock keeps its `name` and `hash` as the record of what it was.
            (
                "name",
                entry
                    .name
                    .as_ref()
                    .filter(|_| entry.retired.is_none())
                    .map(|s| s.span.clone()),
            ),
            (
                "constant",
                entry
                    .name
                    .as_ref()
                    .and(entry.constant.as_ref())
                    .map(|s| s.span.clone()),
            ),
            (
                "site",
                entry
                    .name
                    .as_ref()
                    .and(entry.site.as_ref())
                    .map(|s| s.span.clone()),
            ),
        ]
        .into_iter()
        .filter_map(|(name, span)| Some((name, span?)))
        .collect();
        if kinds.len() < 2 {
            return true;
        }
        let names: Vec<&str> = kinds.iter().map(|&(name, _)| name).collect();
        let labels: Vec<_> = kinds[1..]
            .iter()
            .map(|(name, span)| self.file.label(span.clone(), diags::set_here(name)))
            .collect();
        self.report(
            diags::conflicting_kinds(&id.value, &names),
            kinds[0].1.clone(),
        )
        .labels = labels;
        false
    }

    /// `site` says how an external without a constant is written at its call site (and stays,
    /// like `constant`, as the record of what a retired id was); it is no alternative to a
    /// constant's name.
    fn site(&mut self, entry: &RawLock, id: &Spanned<Id>) -> bool {
        let Some(site) = &entry.site else {
            return true;
        };
        if let Some(constant) = &entry.constant {
            let label = self
                .file
                .label(constant.span.clone(), diags::set_here("constant"));
            self.report(diags::constant_and_site(&id.value), site.span.clone())
                .labels
                .push(label);
            return false;
        }
        true
    }
}

fn item_span(item: &Item) -> Range<usize> {
    match item {
        Item::Value(value) => value.span(),
        Item::Table(table) => table.span(),
        Item::ArrayOfTables(array) => array.span(),
        Item::None => None,
    }
    .unwrap_or(0..0)
}

fn table_span(table: &dyn TableLike) -> Range<usize> {
    table
        .iter()
        .find_map(|(key, _)| table.key(key).and_then(toml_edit::Key::span))
        .unwrap_or(0..0)
}

/// Whether `name` is what a registry `constant` may hold: an identifier, or the name of a
/// member of a collection or an enum as the code names it: `LOCKS["reindex"]` (a
/// dict/hash/map/object entry with a string key, always written with double quotes),
/// `LOCKS[:reindex]` (a Ruby symbol key), `Locks.REINDEX` (an enum member in Python, Java,
/// Kotlin, TypeScript) or `Locks::Reindex` (Rust).
pub fn is_constant_name(name: &str) -> bool {
    is_identifier(name) || is_member_name(name)
}

/// Whether `name` names a member of a collection or an enum (see [`is_constant_name`]), as
/// opposed to a plain constant.
pub fn is_member_name(name: &str) -> bool {
    if let Some((container, rest)) = name.split_once('[') {
        let Some(key) = rest.strip_suffix(']') else {
            return false;
        };
        let string_key = key
            .strip_prefix('"')
            .and_then(|k| k.strip_suffix('"'))
            .is_some_and(|k| {
                !k.is_empty() && !k.contains(['"', '\\']) && !k.contains(char::is_control)
            });
        let symbol_key = key.strip_prefix(':').is_some_and(is_identifier);
        return is_identifier(container) && (string_key || symbol_key);
    }
    let parts = name.split_once("::").or_else(|| name.split_once('.'));
    parts.is_some_and(|(container, member)| is_identifier(container) && is_identifier(member))
}

/// The known key closest to `key`, if it is a near miss (`defined-in` → `defined_in`).
fn did_you_mean<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let normalized = key.to_ascii_lowercase().replace('-', "_");
    known
        .iter()
        .map(|&candidate| (edit_distance(&normalized, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= 2.max(candidate.len() / 4))
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested() {
        assert_eq!(did_you_mean("defined-in", LOCK_KEYS), Some("defined_in"));
        assert_eq!(did_you_mean("wroker", LOCK_KEYS), Some("worker"));
        assert_eq!(did_you_mean("colour", LOCK_KEYS), None);
    }

    #[test]
    fn member_names_follow_the_code_that_names_them() {
        for name in [
            "LOCKS[\"reindex\"]",
            "LOCKS[\"re index-2\"]",
            "LOCKS[:reindex]",
            "Locks.REINDEX",
            "Locks::Reindex",
        ] {
            assert!(is_member_name(name), "{name}");
            assert!(is_constant_name(name), "{name}");
        }
        for name in [
            "LOCKS['reindex']",
            "LOCKS[\"\"]",
            "LOCKS[\"a\"b\"]",
            "LOCKS[reindex]",
            "LOCKS[7]",
            "LOCKS[\"a\"",
            "a.b.c",
            "Locks.",
            "1X.A",
            "ADVISORY_LOCK_FOO",
        ] {
            assert!(!is_member_name(name), "{name}");
        }
        assert!(is_constant_name("ADVISORY_LOCK_FOO"));
        assert!(!is_constant_name("a.b.c"));
    }

    #[test]
    fn an_invalid_registry_counts_its_errors_and_warnings_in_words() {
        let text = "[project]\nname = \"x\"\n[core]\nconstants = \"x.rs\"\n\
                    block = { start = 10, end = 20 }\n\
                    [[lock]]\nid = 5\nconstant = \"A_LOCK_ID\"\nworker = \"w\"\n\
                    [[lock]]\nid = 5\nretired = \"r\"\n";
        let findings = parse("lockward.toml", text).expect_err("a duplicate id");
        let error = LoadError::Invalid {
            path: "lockward.toml".to_owned(),
            findings,
        };
        assert_eq!(
            error.to_string(),
            "lockward.toml: the registry has 1 error and 1 warning"
        );
    }

    #[test]
    fn a_registry_that_breaks_a_rule_still_says_which_ids_it_records() {
        let text = "[project]\nname = \"my app\"\n[[lock]]\nid = 0x10\n[[lock]]\nid = 7\n";
        assert!(parse("lockward.toml", text).is_err());
        let ids = recorded_ids(text).expect("TOML");
        let ids: Vec<&str> = ids.iter().map(Id::literal).collect();
        assert_eq!(ids, ["0x10", "7"]);
        assert_eq!(recorded_ids("[[lock]]\nid = \n"), None, "not TOML");
        assert_eq!(
            recorded_ids("[[lock]]\nid = \"5\"\n"),
            None,
            "an id that is not one"
        );
    }
}

/// How a path the registry names would leave the registry's directory, read as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outside {
    /// `/x`, `C:\x`, `\\server\x`.
    Absolute,
    /// A `..` climbs above the directory.
    Climbs,
}

/// Whether, and how, `path` leaves the registry's directory as written (symlinks are the
/// opener's to resolve).
pub(crate) fn outside_project(path: &str) -> Option<Outside> {
    let bytes = path.as_bytes();
    let drive = bytes.first().is_some_and(u8::is_ascii_alphabetic) && bytes.get(1) == Some(&b':');
    if path.starts_with(['/', '\\']) || drive || std::path::Path::new(path).is_absolute() {
        return Some(Outside::Absolute);
    }
    let mut depth: usize = 0;
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." if depth == 0 => return Some(Outside::Climbs),
            ".." => depth -= 1,
            _ => depth += 1,
        }
    }
    None
}
