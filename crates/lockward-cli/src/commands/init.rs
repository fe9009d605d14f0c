//! `lockward init`: drafts a registry for a codebase that has none, from what the scan finds.
//!
//! The scan runs against a provisional registry with no entries, so every id the code uses is a
//! [`Site`]; init sorts them into entries:
//! - the definitions in core's constants file are constants (one name per id: a second name for
//!   an id already taken is left for a person, and `check` reports it);
//! - a definition elsewhere is an external listing every file that defines it under that name
//!   (two files may share a name for different ids: each gets its own entry);
//! - a literal key at a call site, or a keyword's value, that no definition registers is an
//!   external with `site` (how it is written there) and the files that write it; SQL literals
//!   included, since SQL cannot import a constant;
//! - an id a plugin manifest declares is a handover to that plugin when it lies in core's
//!   block (admission refuses a plugin's id in the block otherwise), and is left to the manifest
//!   when it does not; the plugin's own code is the plugin's, not core's.
//!
//! What init cannot decide is printed, not guessed: keys the scan could not resolve (the
//! `dynamic-key` and `unresolved-constant` notes), an id under two names, a core id copied as a
//! literal into another file, a plugin id that collides with core's. Then the scan and plugin
//! admission run again against the draft, and what `check` will still report is printed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use lockward_registry::draft::{self, Draft, DraftEntry, DraftKind};
use lockward_registry::{
    AdmissionReport, Finding, Id, KeyShape, Manifest, Registry, Severity, finding,
};
use lockward_scan::{Language, PluginDir, Progress, ScanOptions, Site, SiteForm, SiteKey};
use serde_json::json;

use crate::args::{Global, InitArgs};
use crate::atomic::{self, Change, ProjectLock};
use crate::progress::ProgressLine;
use crate::project::{self, Location, REGISTRY_FILE};
use crate::report;
use crate::source_text::{Sources, literal_of};
use crate::{Outcome, UsageError, output};

/// Scan finding codes init reports as left for a person: keys that are not fixed ids, and
/// files the scan did not read (whatever ids they hold are not in the draft).
const DYNAMIC: &[&str] = &["dynamic-key", "unresolved-constant", "file-not-read"];

pub(crate) fn run(global: &Global, args: &InitArgs) -> anyhow::Result<Outcome> {
    let location = target(global.registry.as_deref())?;
    let page = args
        .page
        .as_deref()
        .map(|page| page.strip_prefix("./").unwrap_or(page).to_owned());
    let page_path = page
        .as_ref()
        .map(|page| {
            location
                .resolve(page)
                .map_err(|error| UsageError(format!("--page {page}: {error:#}")))
        })
        .transpose()?;
    // A registry exists, or a killed init is finished by this: either way, nothing to draft.
    let lock = ProjectLock::acquire(&location.file)?;
    atomic::recover(&location.file, page_path.as_slice(), Some(&lock))?;
    if location.file.is_dir() {
        return Err(UsageError(format!(
            "{}: is a directory; pass --registry DIR/lockward.toml",
            location.file.display()
        ))
        .into());
    }
    if let Some(path) = page_path
        .as_ref()
        .filter(|path| path.symlink_metadata().is_ok())
    {
        return Err(UsageError(format!(
            "--page {}: a file is there already; `lockward init` writes a new page only (pick another path, or set `[project] page` by hand and run `lockward render`)",
            path.display()
        ))
        .into());
    }
    if location.file.symlink_metadata().is_ok() {
        return Err(UsageError(format!(
            "{}: a registry exists already; `lockward init` drafts one for a codebase that has \
             none (register an id the code has with `lockward take NAME --worker \"...\"`)",
            location.file.display()
        ))
        .into());
    }
    let project_name = draft::project_name(
        &location
            .root
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let constants_arg = args
        .constants
        .as_deref()
        .map(|path| constants_path(&location, path))
        .transpose()?;
    let provisional = provisional(
        &location,
        &project_name,
        constants_arg.as_deref(),
        &args.plugins,
    )?;
    let manifests = project::read_manifests(&location, &provisional)?;
    let parsed: Vec<Manifest> = manifests
        .iter()
        .filter_map(|(_, manifest)| manifest.as_ref().ok().cloned())
        .collect();
    let plugins = plugin_dirs(&parsed);
    let progress = Arc::new(Progress::default());
    let options = ScanOptions {
        plugins: Some(plugins.clone()),
        progress: Some(Arc::clone(&progress)),
        ..ScanOptions::default()
    };
    let scan = {
        let _line = ProgressLine::start(&progress);
        lockward_scan::scan(&provisional, &location.root, &options)
    };
    let sources = Sources::new(&location);
    let constants = match constants_arg {
        Some(path) => path,
        None => busiest_file(&scan.sites, &plugins).ok_or_else(|| {
            UsageError(format!(
                "no file under {} defines a constant matching the patterns ({}), so there is no \
                 core constants file to find; pass --constants PATH (the file `lockward take` \
                 will write new constants to)",
                location.root.display(),
                provisional.scan_settings().constant_patterns.join(", ")
            ))
        })?,
    };
    let mut drafter = Drafter {
        constants: &constants,
        plugins: &plugins,
        sources,
        entries: BTreeMap::new(),
        names: HashMap::new(),
        notes: Vec::new(),
    };
    if !args.plugins.is_empty() && manifests.is_empty() {
        drafter.notes.push(format!(
            "--plugins {}: no manifest matches, so no plugin's ids are known",
            args.plugins.join(", ")
        ));
    }
    for (path, manifest) in unmatched_manifests(&location, &provisional, &manifests) {
        let ids: Vec<String> = manifest.ids.iter().map(|(id, _)| id.to_string()).collect();
        drafter.notes.push(format!(
            "{path} reads as plugin `{}`'s manifest (advisory_lock_ids {}), but no --plugins \
             pattern matches it, so its ids are drafted as core's: run init again with \
             --plugins '{}' (as well as any other pattern)",
            manifest.name,
            ids.join(", "),
            glob_for(&path)
        ));
    }
    drafter.notes.extend(mixed_key_forms(&scan.sites));
    drafter.core(&scan.sites);
    drafter.externals(&scan.sites);
    drafter.literals(&scan.sites);
    drafter.named(&scan.sites);
    let block = drafter.block(&scan.sites);
    drafter.handovers(&parsed, &block);
    let Drafter { entries, notes, .. } = drafter;
    let counts = Counts::of(entries.values());
    let draft = Draft {
        project: project_name,
        page: page.clone(),
        constants: constants.clone(),
        block: block.clone(),
        manifests: args.plugins.clone(),
        entries: entries.into_values().collect(),
    };
    let text = draft::render(&draft);
    // Every entry was built to the rules; a draft that breaks one is a bug, not the user's.
    let registry = match lockward_registry::parse(&location.label, &text) {
        Ok(loaded) => loaded.registry,
        Err(findings) => {
            let first = findings.first().map_or(String::new(), report::human);
            anyhow::bail!("the drafted registry breaks a rule (a bug in lockward init):\n{first}");
        }
    };
    let mut changes = vec![Change {
        path: location.file.clone(),
        contents: text.clone(),
    }];
    if let Some(path) = page_path {
        let next_free = registry.next_free_id(AdmissionReport::declared_ids(&parsed));
        changes.push(Change {
            path,
            contents: lockward_registry::page::render(&registry, next_free.as_ref()),
        });
    }

    let dynamic: Vec<&Finding> = scan
        .findings
        .iter()
        .filter(|f| DYNAMIC.contains(&f.code.as_str()))
        .collect();
    // What `check` will say about the draft: the scan and admission run against it, so a
    // finding that only an empty registry raises (an allow comment that allows nothing yet)
    // is not reported, and one the draft leaves is.
    let verify = {
        let progress = Arc::new(Progress::default());
        let options = ScanOptions {
            progress: Some(Arc::clone(&progress)),
            ..options
        };
        let _line = ProgressLine::start(&progress);
        lockward_scan::scan(&registry, &location.root, &options)
    };
    let mut remaining: Vec<Finding> = registry
        .admit_all(manifests)
        .findings
        .into_iter()
        .chain(verify.findings)
        .filter(|finding| finding.severity != Severity::Note)
        .collect();
    finding::sort(&mut remaining);
    let written = if args.dry_run {
        Vec::new()
    } else {
        lock.write_all(&changes)?
            .iter()
            .map(|path| location.relative(path))
            .collect()
    };
    if args.output.json() {
        let mut report = json!({
            "registry": location.label,
            "written": written,
            "project": draft.project,
            "constants": constants,
            "block": {"start": block.0.value(), "end": block.1.value()},
            "constants_registered": counts.constants,
            "externals": counts.externals,
            "handovers": counts.handovers,
            "named": counts.named,
            "files_scanned": scan.files_scanned,
            "dynamic": dynamic,
            "to_look_at": notes,
            "findings": remaining,
        });
        if args.dry_run {
            report["dry_run"] = json!(true);
            report["text"] = json!(text);
        }
        output::print_json(&report)?;
    } else {
        let mut out = String::new();
        if args.dry_run {
            out.push_str(&text);
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "drafted {} for {}: {} from {} (block {}..={}), {}, {}{}; {} scanned",
            location.label,
            draft.project,
            report::count(counts.constants, "core constant", "core constants"),
            constants,
            block.0,
            block.1,
            report::count(counts.externals, "external", "externals"),
            report::count(counts.handovers, "handover", "handovers"),
            if counts.named == 0 {
                String::new()
            } else {
                format!(
                    ", {}",
                    report::count(counts.named, "lock taken by name", "locks taken by name")
                )
            },
            report::count(scan.files_scanned, "file", "files"),
        );
        if !dynamic.is_empty() {
            let _ = writeln!(
                out,
                "\nleft as dynamic or not read, for a person to look at ({}):",
                report::count(dynamic.len(), "note", "notes")
            );
            for finding in &dynamic {
                let _ = writeln!(out, "  {}", one_line(finding));
            }
        }
        if !notes.is_empty() {
            out.push_str("\nto look at:\n");
            for note in &notes {
                let _ = writeln!(out, "  {note}");
            }
        }
        if !remaining.is_empty() {
            let _ = writeln!(
                out,
                "\n`lockward check` will report ({}):",
                report::Summary::of(&remaining).counts()
            );
            for finding in &remaining {
                let _ = writeln!(out, "  {}", one_line(finding));
            }
        }
        if !args.dry_run {
            let _ = writeln!(
                out,
                "\nnext: read the `worker` of each entry in {}, then run `lockward check`",
                location.label
            );
        }
        output::print(&out)?;
    }
    if args.dry_run {
        stderrln!("dry run: nothing was written");
    } else {
        stderrln!("wrote {}", written.join(", "));
    }
    Ok(Outcome::Clean)
}

/// Where the registry goes: `--registry PATH`, else `lockward.toml` in the current directory.
fn target(explicit: Option<&Path>) -> anyhow::Result<Location> {
    let file = match explicit {
        Some(path) => path.to_path_buf(),
        None => PathBuf::from(REGISTRY_FILE),
    };
    let file =
        std::path::absolute(&file).with_context(|| format!("cannot resolve {}", file.display()))?;
    let root = file
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    if !root.is_dir() {
        return Err(UsageError(format!(
            "{}: no such directory to draft the registry in",
            root.display()
        ))
        .into());
    }
    let label = file.file_name().map_or_else(
        || REGISTRY_FILE.to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    Ok(Location { root, file, label })
}

/// `--constants PATH` as the registry names it: relative to its directory. The file must exist
/// there and be in a language `take` writes.
fn constants_path(location: &Location, path: &Path) -> anyhow::Result<String> {
    let absolute =
        std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    if !absolute.is_file() {
        return Err(UsageError(format!("--constants {}: no such file", path.display())).into());
    }
    let relative = location.relative(&absolute);
    if Path::new(&relative).is_absolute() {
        return Err(UsageError(format!(
            "--constants {}: the file is outside {}, the registry's directory",
            path.display(),
            location.root.display()
        ))
        .into());
    }
    if !Language::from_path(&relative).is_some_and(Language::writes_constants) {
        return Err(UsageError(format!(
            "--constants {relative}: `lockward take` cannot write constants in this file's \
             language (it writes {} files, by extension)",
            Language::CONSTANTS_LANGUAGES
        ))
        .into());
    }
    Ok(relative)
}

/// A registry with no entries, for the scan to report every id as a site.
fn provisional(
    location: &Location,
    name: &str,
    constants: Option<&str>,
    manifests: &[String],
) -> anyhow::Result<Registry> {
    let draft = Draft {
        project: name.to_owned(),
        page: None,
        constants: constants.unwrap_or("lockward-init.py").to_owned(),
        block: (Id::plain(0), Id::plain(0)),
        manifests: manifests.to_vec(),
        entries: Vec::new(),
    };
    lockward_registry::parse(&location.label, &draft::render(&draft))
        .map(|loaded| loaded.registry)
        .map_err(|findings| {
            let first = findings.first().map_or(String::new(), report::human);
            UsageError(format!("the options make no valid registry:\n{first}")).into()
        })
}

fn plugin_dirs(manifests: &[Manifest]) -> Vec<PluginDir> {
    manifests
        .iter()
        .map(|manifest| PluginDir {
            name: manifest.name.clone(),
            dir: manifest
                .path()
                .rsplit_once('/')
                .map_or("", |(dir, _)| dir)
                .to_owned(),
            ids: manifest.ids.iter().map(|(id, _)| id.value()).collect(),
        })
        .collect()
}

/// The plugin whose directory holds `path`.
/// The files under the project that read as plugin manifests with advisory lock ids (a `.toml`
/// or `.json` file that names `advisory_lock_ids` and parses as a manifest) and that no
/// `--plugins` pattern matched: `init --plugins 'plugins/*/plugin.toml'` drafted the shipping
/// plugin's `plugin.json` ids as core externals without a word. Ignored files (`.gitignore`)
/// are not read, nor files over 1 MiB.
fn unmatched_manifests(
    location: &Location,
    registry: &lockward_registry::Registry,
    matched: &[project::ManifestRead],
) -> Vec<(String, Manifest)> {
    let table = &registry.plugin_settings().table;
    let mut found = Vec::new();
    for entry in ignore::WalkBuilder::new(&location.root).build().flatten() {
        let path = entry.path();
        let is_manifest_like = entry.file_type().is_some_and(|kind| kind.is_file())
            && path
                .extension()
                .is_some_and(|extension| extension == "toml" || extension == "json")
            && path != location.file;
        if !is_manifest_like {
            continue;
        }
        let label = location.relative(path);
        if matched.iter().any(|(read, _)| *read == label) {
            continue;
        }
        let Ok(bytes) = lockward_registry::file::read_regular(path, 1024 * 1024) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        if !text.contains("advisory_lock_ids") {
            continue;
        }
        if let Ok(manifest) = Manifest::parse(&label, &text, table)
            && !manifest.ids.is_empty()
        {
            found.push((label, manifest));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// A `--plugins` pattern for a manifest at `path`: its plugin's directory as `*`
/// (`plugins/shipping/plugin.json` → `plugins/*/plugin.json`), else the path itself.
fn glob_for(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        [head @ .., _dir, file] if !head.is_empty() => format!("{}/*/{file}", head.join("/")),
        _ => path.to_owned(),
    }
}

fn plugin_of<'p>(plugins: &'p [PluginDir], path: &str) -> Option<&'p PluginDir> {
    plugins.iter().find(|plugin| {
        plugin.dir.is_empty()
            || path
                .strip_prefix(plugin.dir.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// The file that defines the most distinct lock constants, outside plugins' directories and in
/// a language `take` writes; the first by path on a tie.
fn busiest_file(sites: &[Site], plugins: &[PluginDir]) -> Option<String> {
    let mut counts: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for site in sites {
        if let SiteForm::Definition { constant } = &site.form
            && plugin_of(plugins, &site.path).is_none()
            && Language::from_path(&site.path).is_some_and(Language::writes_constants)
        {
            counts.entry(&site.path).or_default().insert(constant);
        }
    }
    let most = counts.values().map(BTreeSet::len).max()?;
    counts
        .into_iter()
        .find(|(_, names)| names.len() == most)
        .map(|(path, _)| path.to_owned())
}

/// How many entries of each kind.
struct Counts {
    constants: usize,
    externals: usize,
    handovers: usize,
    named: usize,
}

impl Counts {
    fn of<'a>(entries: impl Iterator<Item = &'a DraftEntry>) -> Self {
        let mut counts = Self {
            constants: 0,
            externals: 0,
            handovers: 0,
            named: 0,
        };
        for entry in entries {
            match entry.kind {
                DraftKind::Constant { .. } => counts.constants += 1,
                DraftKind::External { .. } => counts.externals += 1,
                DraftKind::Handover { .. } => counts.handovers += 1,
                DraftKind::Named { .. } => counts.named += 1,
            }
        }
        counts
    }
}

/// Builds the entries, one id at a time, and the notes for what it leaves.
struct Drafter<'a> {
    constants: &'a str,
    plugins: &'a [PluginDir],
    sources: Sources<'a>,
    /// The entries by id.
    entries: BTreeMap<i64, DraftEntry>,
    /// Every name some definition gives an id, in any file: a use through another name is a
    /// literal in disguise (a local the patterns do not match).
    names: HashMap<String, BTreeSet<i64>>,
    notes: Vec<String>,
}

impl Drafter<'_> {
    /// Whether the plugins own `site`: its id is one a manifest declares, or it is in a plugin's
    /// directory (a plugin's own id its manifest forgot is noted, not made core's).
    fn plugins_own(&mut self, site: &Site) -> bool {
        if self.plugins.iter().any(|p| p.ids.contains(&site.id)) {
            return true;
        }
        let Some(plugin) = plugin_of(self.plugins, &site.path) else {
            return false;
        };
        self.notes.push(format!(
            "{}:{}:{}: plugin `{}` uses id {} here, which its manifest does not declare: add it \
             to the manifest's advisory_lock_ids",
            site.path, site.line, site.column, plugin.name, site.id
        ));
        true
    }

    fn core(&mut self, sites: &[Site]) {
        for site in sites {
            let SiteForm::Definition { constant } = &site.form else {
                continue;
            };
            self.names
                .entry(constant.clone())
                .or_default()
                .insert(site.id);
            if site.path != self.constants || self.plugins_own(site) {
                continue;
            }
            if let Some(entry) = self.entries.get(&site.id) {
                let first = entry_name(entry);
                self.notes.push(format!(
                    "{}:{}:{}: id {} is `{constant}` here and `{first}` above it: one id has one \
                     holder; give one of them a new id (`lockward take`)",
                    site.path, site.line, site.column, entry.id
                ));
                continue;
            }
            let (worker, note) = self.sources.worker(site, constant);
            self.entries.insert(
                site.id,
                DraftEntry {
                    id: literal_of(site),
                    kind: DraftKind::Constant {
                        constant: constant.clone(),
                    },
                    worker: Some(worker),
                    key: key_of(sites, site.id),
                    note,
                },
            );
        }
    }

    fn externals(&mut self, sites: &[Site]) {
        // (id, name) → the sites defining it, in path order.
        let mut defined: BTreeMap<(i64, &str), Vec<&Site>> = BTreeMap::new();
        for site in sites {
            if let SiteForm::Definition { constant } = &site.form
                && site.path != self.constants
            {
                defined.entry((site.id, constant)).or_default().push(site);
            }
        }
        for ((id, name), defining) in defined {
            let first = defining[0];
            if self.plugins_own(first) {
                continue;
            }
            let files: Vec<String> = dedup(defining.iter().map(|site| site.path.clone()));
            if let Some(entry) = self.entries.get(&id) {
                let registered = entry_name(entry);
                let why = if registered == name && matches!(entry.kind, DraftKind::Constant { .. })
                {
                    format!(
                        "is a copy of core's `{name}`: import it from `{}` instead",
                        self.constants
                    )
                } else {
                    format!(
                        "is also `{registered}`: one id has one holder; give one of them a new id \
                         (`lockward take`)"
                    )
                };
                for site in defining.iter().filter(|site| {
                    !allows(site, "undeclared-site") && !allows(site, "duplicate-definition")
                }) {
                    self.notes.push(format!(
                        "{}:{}:{}: `{name}` = {id} {why}",
                        site.path, site.line, site.column
                    ));
                }
                continue;
            }
            let (worker, note) = self.sources.worker(first, name);
            self.entries.insert(
                id,
                DraftEntry {
                    id: literal_of(first),
                    kind: DraftKind::External {
                        constant: Some(name.to_owned()),
                        site: None,
                        defined_in: files,
                    },
                    worker: Some(worker),
                    key: key_of(sites, id),
                    note,
                },
            );
        }
    }

    /// Calls and keywords whose key is written as a literal (or through a name no definition
    /// gives that id, a local the patterns do not match).
    fn literals(&mut self, sites: &[Site]) {
        for site in sites {
            let name = match &site.form {
                SiteForm::Definition { .. } | SiteForm::Named { .. } => continue,
                SiteForm::Call { constant, .. }
                | SiteForm::Wrapper { constant, .. }
                | SiteForm::Keyword { constant, .. } => constant.as_deref(),
            };
            let by_name = name.is_some_and(|name| {
                self.names
                    .get(name)
                    .is_some_and(|ids| ids.contains(&site.id))
            });
            if by_name || self.plugins_own(site) {
                continue;
            }
            match self.entries.get_mut(&site.id) {
                Some(DraftEntry {
                    kind: DraftKind::External { defined_in, .. },
                    ..
                }) => {
                    if !defined_in.contains(&site.path) {
                        defined_in.push(site.path.clone());
                    }
                }
                Some(entry) if site.path != self.constants && !allows(site, "undeclared-site") => {
                    let registered = entry_name(entry);
                    let sql = Language::from_path(&site.path) == Some(Language::Sql);
                    let fix = if sql {
                        "SQL cannot import it: if this is the same worker's lock, end the line \
                         with `-- lockward: allow(undeclared-site)`"
                            .to_owned()
                    } else {
                        format!("use `{registered}` from `{}` instead", self.constants)
                    };
                    self.notes.push(format!(
                        "{}:{}:{}: core's id {} (`{registered}`) is written as a literal here; {fix}",
                        site.path, site.line, site.column, entry.id
                    ));
                }
                Some(_) => {}
                None => {
                    let (written, above) = self.sources.site_text(site);
                    let (worker, note) = self.sources.worker_at(site, above);
                    self.entries.insert(
                        site.id,
                        DraftEntry {
                            id: literal_of(site),
                            kind: DraftKind::External {
                                constant: None,
                                site: Some(written),
                                defined_in: vec![site.path.clone()],
                            },
                            worker: Some(worker),
                            key: key_of(sites, site.id),
                            note,
                        },
                    );
                }
            }
        }
    }

    /// An entry for each lock the code takes by name (`advisory_lock("reindex")`), at the key
    /// its library computes, named and hashed as the code has it. A key some entry has already
    /// is left to `check` (`name-key-collision`), with a note.
    fn named(&mut self, sites: &[Site]) {
        for site in sites {
            let SiteForm::Named { library, name } = &site.form else {
                continue;
            };
            if allows(site, "unregistered-id") {
                continue;
            }
            match self.entries.get(&site.id) {
                Some(DraftEntry {
                    kind:
                        DraftKind::Named {
                            name: drafted,
                            hash,
                        },
                    ..
                }) if drafted == name && hash == library => {}
                Some(entry) => {
                    self.notes.push(format!(
                        "{}:{}:{}: the lock named {name:?} ({library}) takes key {}, which {} has \
                         already: rename one of them (`check` reports it as name-key-collision)",
                        site.path,
                        site.line,
                        site.column,
                        site.id,
                        entry_name(entry)
                    ));
                }
                None => {
                    let (worker, note) = match self.sources.comment(site, site.line) {
                        Some((text, line)) => (
                            text,
                            Some(format!("from the comment at {}:{line}", site.path)),
                        ),
                        None if !name.trim().is_empty() => {
                            (name.clone(), Some("from the lock's name".to_owned()))
                        }
                        None => (
                            format!("the lock at {}:{}", site.path, site.line),
                            Some("no comment or name says which worker: write it here".to_owned()),
                        ),
                    };
                    let key = match site.key {
                        SiteKey::Pair(_) => KeyShape::Family,
                        SiteKey::Bigint(_) => KeyShape::Exact,
                    };
                    self.entries.insert(
                        site.id,
                        DraftEntry {
                            id: Id::plain(site.id),
                            kind: DraftKind::Named {
                                name: name.clone(),
                                hash: library.clone(),
                            },
                            worker: Some(worker),
                            key,
                            note,
                        },
                    );
                }
            }
        }
    }

    /// The block around core's constants; with none, the first thousand above every id found.
    fn block(&self, sites: &[Site]) -> (Id, Id) {
        let core: Vec<&DraftEntry> = self
            .entries
            .values()
            .filter(|entry| matches!(entry.kind, DraftKind::Constant { .. }))
            .collect();
        let ids: Vec<i64> = core.iter().map(|entry| entry.id.value()).collect();
        let (start, end) = draft::block_around(&ids).unwrap_or_else(|| {
            let highest = sites.iter().map(|site| site.id).max().unwrap_or(0).max(0);
            let start = (highest / 1_000 + 1).saturating_mul(1_000);
            (start, start.saturating_add(999))
        });
        let example = core.first().map_or("1_000", |entry| entry.id.literal());
        (
            Id::styled_like(start, example),
            Id::styled_like(end, example),
        )
    }

    fn handovers(&mut self, manifests: &[Manifest], block: &(Id, Id)) {
        let mut declared: BTreeMap<i64, Vec<(&Manifest, &Id)>> = BTreeMap::new();
        for manifest in manifests {
            for (id, _) in &manifest.ids {
                declared.entry(id.value()).or_default().push((manifest, id));
            }
        }
        for (value, declaring) in declared {
            let (manifest, id) = declaring[0];
            let names: Vec<String> = declaring
                .iter()
                .map(|(m, _)| format!("`{}` ({})", m.name, m.path()))
                .collect();
            if let Some(entry) = self.entries.get(&value) {
                self.notes.push(format!(
                    "{}: plugin {} declares id {id}, which core's `{}` holds: admission refuses \
                     the plugin until one of them takes another id",
                    manifest.path(),
                    names.join(" and "),
                    entry_name(entry)
                ));
                continue;
            }
            if declaring.len() > 1 {
                self.notes.push(format!(
                    "plugins {} all declare id {id}: one id has one holder; the draft hands it \
                     over to `{}`, and admission refuses the others",
                    names.join(", "),
                    manifest.name
                ));
            }
            if (block.0.value()..=block.1.value()).contains(&value) {
                self.entries.insert(
                    value,
                    DraftEntry {
                        id: draft::toml_literal(id.literal(), value, None),
                        kind: DraftKind::Handover {
                            plugin: manifest.name.clone(),
                        },
                        worker: None,
                        key: KeyShape::Exact,
                        note: None,
                    },
                );
            }
        }
    }
}

/// The name an entry is known by, for the notes.
fn entry_name(entry: &DraftEntry) -> String {
    match &entry.kind {
        DraftKind::Constant { constant }
        | DraftKind::External {
            constant: Some(constant),
            ..
        } => constant.clone(),
        DraftKind::External { site, .. } => site.clone().unwrap_or_default(),
        DraftKind::Handover { plugin } => format!("plugin {plugin}"),
        DraftKind::Named { name, .. } => format!("the lock named {name:?}"),
    }
}

/// Whether the site's line exempts `code` with a trailing `lockward: allow(...)` comment, so
/// that `check` will not report it.
fn allows(site: &Site, code: &str) -> bool {
    site.source_line.as_deref().is_some_and(|line| {
        line.match_indices("lockward: allow(")
            .any(|(at, directive)| {
                let list = &line[at + directive.len()..];
                let list = list.split(')').next().unwrap_or_default();
                list.split(',').any(|allowed| allowed.trim() == code)
            })
    })
}

/// A family when the code takes the id only as the first key of a pair (and it fits in an
/// int4); exact when any lock call takes it as one bigint key. `pg_advisory_xact_lock(4242)`
/// and `pg_advisory_xact_lock(4242, job.id)` are two locks, which the draft merged into one
/// family; now the id is exact, and [`mixed_key_forms`] says so.
fn key_of(sites: &[Site], id: i64) -> KeyShape {
    let (bigint, pair) = key_forms(sites, id);
    if !pair.is_empty() && bigint.is_empty() && i32::try_from(id).is_ok() {
        KeyShape::Family
    } else {
        KeyShape::Exact
    }
}

/// The lock calls that take `id` as one bigint key, and those that take it as the first int4
/// of a pair (a definition has no key form of its own).
fn key_forms(sites: &[Site], id: i64) -> (Vec<&Site>, Vec<&Site>) {
    let calls = sites
        .iter()
        .filter(|site| site.id == id && matches!(site.form, lockward_scan::SiteForm::Call { .. }));
    let (pair, bigint): (Vec<&Site>, Vec<&Site>) =
        calls.partition(|site| matches!(site.key, SiteKey::Pair(_)));
    (bigint, pair)
}

/// A note for each id the code takes in both key forms: they are two locks to PostgreSQL, the
/// draft registers the one-bigint form, and `check` reports the pair calls
/// (`key-shape-mismatch`) until they get a family of their own.
fn mixed_key_forms(sites: &[Site]) -> Vec<String> {
    let ids: BTreeSet<i64> = sites.iter().map(|site| site.id).collect();
    ids.into_iter()
        .filter_map(|id| {
            let (bigint, pair) = key_forms(sites, id);
            let (one, two) = (bigint.first()?, pair.first()?);
            Some(format!(
                "id {id} is taken as one bigint key ({}:{}) and as the first int4 of a pair \
                 ({}:{}): PostgreSQL keeps these apart, so they are two locks; the draft registers \
                 the one-key lock, and `lockward check` reports the pair calls until they get a \
                 family id of their own (`lockward take NAME --family`)",
                one.path, one.line, two.path, two.line
            ))
        })
        .collect()
}

fn dedup(paths: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    paths.filter(|path| seen.insert(path.clone())).collect()
}

/// `path:line:col: severity[code]: message`, one line.
fn one_line(finding: &Finding) -> String {
    let at = match (finding.line(), finding.column()) {
        (Some(line), Some(column)) => format!("{}:{line}:{column}", finding.path),
        _ => finding.path.clone(),
    };
    format!(
        "{at}: {}[{}]: {}",
        finding.severity.as_str(),
        finding.code.as_str(),
        finding.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source_text::{assigned_name, clean, markers, strip_marker, trailing_comment};

    #[test]
    fn a_comment_is_cleaned_to_its_first_sentence() {
        assert_eq!(
            clean(" The invoice rollup worker. Runs hourly.").as_deref(),
            Some("The invoice rollup worker")
        );
        assert_eq!(clean(" lockward: allow(undeclared-site)"), None);
        let long = "The lock id is written here, at the call site, with no constant: lockward.toml lists this file";
        assert_eq!(
            clean(long).as_deref(),
            Some(
                "The lock id is written here, at the call site, with no constant: lockward.toml..."
            )
        );
        assert_eq!(
            clean("search reindex  lockward: allow(undeclared-site)").as_deref(),
            Some("search reindex")
        );
    }

    #[test]
    fn the_assigned_name_is_the_identifier_before_the_first_equals_sign() {
        assert_eq!(
            assigned_name("bq_write_visibility = PeriodicTask(").as_deref(),
            Some("bq_write_visibility")
        );
        assert_eq!(
            assigned_name("  val job: Task = schedule(").as_deref(),
            Some("job")
        );
        assert_eq!(
            assigned_name("const cleanup = every(60, {").as_deref(),
            Some("cleanup")
        );
        assert_eq!(assigned_name("PeriodicTask("), None);
        assert_eq!(assigned_name("if a == b(c)"), None);
        assert_eq!(assigned_name("x = 5"), None);
    }

    #[test]
    fn a_trailing_comment_is_found_outside_strings() {
        let python = markers("a.py");
        assert_eq!(
            trailing_comment(" = 1_001  # rollup", python).as_deref(),
            Some(" rollup")
        );
        assert_eq!(trailing_comment(" = \"#1\"", python), None);
        let rust = markers("a.rs");
        assert_eq!(
            trailing_comment(": i64 = 5; // export", rust).as_deref(),
            Some(" export")
        );
        assert_eq!(
            strip_marker("/// The export.", rust).as_deref(),
            Some("The export.")
        );
        assert_eq!(strip_marker("let x = 1;", rust), None);
    }

    fn site(line: &str, id: i64) -> Site {
        Site {
            path: "a.rs".to_owned(),
            line: 1,
            column: 1,
            id,
            key: SiteKey::Bigint(id),
            form: SiteForm::Definition {
                constant: "ADVISORY_LOCK_A".to_owned(),
            },
            source_line: Some(line.to_owned()),
        }
    }

    #[test]
    fn the_literal_is_read_from_the_line_as_written() {
        let literal = |line: &str, id: i64| literal_of(&site(line, id)).literal().to_owned();
        assert_eq!(
            literal("pub const ADVISORY_LOCK_A2: i64 = 1_001_001;", 1_001_001),
            "1_001_001"
        );
        assert_eq!(
            literal("const X: i64 = 0x6E697374i64;", 0x6E69_7374),
            "0x6E697374"
        );
        assert_eq!(literal("X = -1_000  # 1_000", -1_000), "-1_000");
        assert_eq!(literal("X = BASE + 3", 10), "10");
        assert_eq!(literal("X = 42", 42), "42");
    }
}
