//! Finding the registry, loading it, and reading what it points at (plugin manifests, the page).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use lockward_registry::{
    Finding, LoadError, Loaded, Manifest, Registry, Severity, decode_utf8, page,
};
use lockward_scan::PluginDir;

use crate::atomic::{self, ProjectLock};
use crate::confine;
use crate::diags;

/// The registry file's name, looked for in the current directory and its parents.
pub(crate) const REGISTRY_FILE: &str = "lockward.toml";

/// A manifest's path relative to the registry's directory, and the manifest or why it is
/// malformed.
pub(crate) type ManifestRead = (String, Result<Manifest, Vec<Finding>>);

/// Where the registry is: the file, and its directory (every path in findings is relative to it).
#[derive(Debug, Clone)]
pub(crate) struct Location {
    pub(crate) root: PathBuf,
    pub(crate) file: PathBuf,
    /// How findings name the registry file: its path relative to `root`.
    pub(crate) label: String,
}

impl Location {
    /// `explicit` when given, else the nearest `lockward.toml` from the current directory up.
    pub(crate) fn find(explicit: Option<&Path>) -> anyhow::Result<Self> {
        let file = if let Some(path) = explicit {
            registry_file(path)?;
            path.to_path_buf()
        } else {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let found = cwd
                .ancestors()
                .map(|dir| dir.join(REGISTRY_FILE))
                .find(|candidate| candidate.symlink_metadata().is_ok());
            let Some(found) = found else {
                bail!(
                    "no {REGISTRY_FILE} in {} or any parent directory (pass --registry PATH, or \
                     run `lockward init` to draft one here from the code)",
                    cwd.display()
                );
            };
            // The nearest one is the project's, even when it cannot be read: walking past it
            // would silently check another project.
            registry_file(&found)?;
            found
        };
        let file = std::path::absolute(&file).unwrap_or(file);
        let root = file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let label = file.file_name().map_or_else(
            || REGISTRY_FILE.to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        Ok(Self { root, file, label })
    }

    /// Loads and validates the registry.
    pub(crate) fn load(&self) -> Result<Loaded, LoadError> {
        Registry::load(&self.file, &self.label)
    }

    /// `path` (relative to the registry's directory) as the file on disk inside the project,
    /// symlinks resolved ([`confine::Root::resolve`]): every file lockward reads or writes for
    /// the project comes from here. Refused, naming the path and the link or `..` that leaves,
    /// when it would reach outside the project.
    pub(crate) fn resolve(&self, path: impl AsRef<Path>) -> anyhow::Result<PathBuf> {
        let root = confine::Root::new(&self.root)
            .with_context(|| format!("cannot resolve {}", self.root.display()))?;
        root.resolve(path).map_err(|escape| {
            anyhow::anyhow!(
                "{}: {escape}: lockward reads and writes only files inside the project",
                self.label
            )
        })
    }

    /// `path` on disk as findings show it: relative to the registry's directory, `/`-separated;
    /// a path outside that directory as it is.
    pub(crate) fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) => relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.display().to_string(),
        }
    }
}

/// A registry that passed its rules, with everything the commands read beside it.
pub(crate) struct Project {
    pub(crate) location: Location,
    pub(crate) registry: Registry,
    /// Warnings raised while validating the registry.
    pub(crate) warnings: Vec<Finding>,
    /// Every manifest the `[plugins] manifests` globs find, parsed or with why it is malformed.
    pub(crate) manifests: Vec<ManifestRead>,
    /// What reading other branches' registries found (collisions, unreadable registries, a
    /// note when this is not a git repository). Their ids are already in `registry` as
    /// reservations.
    pub(crate) branch_findings: Vec<Finding>,
    /// Git's message when git ran but could not read the other branches: their ids are unknown.
    pub(crate) branches_unreadable: Option<String>,
}

impl Project {
    /// Loads the registry at `location` and the plugin manifests it points at, after finishing
    /// what a killed `take` or `retire` left behind (taking the project lock only when there is
    /// something to finish).
    pub(crate) fn load(location: Location) -> Result<Self, ProjectError> {
        Self::load_recovered(location, None)
    }

    /// [`Project::load`] of a copy of the project (`check --staged`: the index's files), whose
    /// other branches are read from the repository of the registry at `branches_from`.
    pub(crate) fn load_reading_branches_from(
        location: Location,
        branches_from: &Path,
    ) -> Result<Self, ProjectError> {
        let loaded = location.load().map_err(ProjectError::Registry)?;
        Self::assemble(location, loaded, branches_from)
    }

    /// [`Project::load`] for a command that holds the project lock already.
    pub(crate) fn load_locked(
        location: Location,
        lock: &ProjectLock,
    ) -> Result<Self, ProjectError> {
        Self::load_recovered(location, Some(lock))
    }

    fn load_recovered(
        location: Location,
        lock: Option<&ProjectLock>,
    ) -> Result<Self, ProjectError> {
        let mut loaded = location.load().map_err(ProjectError::Registry)?;
        // A killed write is finished once the registry says which files are the project's
        // (every registry a write leaves behind is a valid one, the old or the new), and the
        // registry is read again when it was one of them.
        let mut written = vec![location.resolve(&loaded.registry.core().constants)?];
        if let Some(page) = &loaded.registry.project().page {
            written.push(location.resolve(page)?);
        }
        if atomic::recover(&location.file, &written, lock)? {
            loaded = location.load().map_err(ProjectError::Registry)?;
        }
        let branches_from = location.file.clone();
        Self::assemble(location, loaded, &branches_from)
    }

    fn assemble(
        location: Location,
        loaded: Loaded,
        branches_from: &Path,
    ) -> Result<Self, ProjectError> {
        let Loaded {
            mut registry,
            warnings,
        } = loaded;
        let branches = lockward_branches::read(branches_from, &registry);
        registry.add_reservations(branches.locks);
        let manifests = read_manifests(&location, &registry)?;
        Ok(Self {
            location,
            registry,
            warnings,
            manifests,
            branch_findings: branches.findings,
            branches_unreadable: branches.unreadable,
        })
    }

    /// Logs the branch findings on stderr, for the commands that do not report them: errors
    /// and warnings only (the note outside a git repository would be noise there).
    pub(crate) fn log_branch_findings(&self) {
        for finding in self
            .branch_findings
            .iter()
            .filter(|f| f.severity != Severity::Note)
        {
            tracing::warn!("{}", crate::report::human(finding).trim_end());
        }
    }

    /// The parsed manifests (malformed ones left out).
    pub(crate) fn parsed_manifests(&self) -> Vec<Manifest> {
        self.manifests
            .iter()
            .filter_map(|(_, manifest)| manifest.as_ref().ok().cloned())
            .collect()
    }

    /// The next free id, counting plugin manifests' ids as recorded.
    pub(crate) fn next_free_id(&self) -> Option<lockward_registry::Id> {
        let manifests = self.parsed_manifests();
        self.registry
            .next_free_id(lockward_registry::AdmissionReport::declared_ids(&manifests))
    }

    /// The page the registry renders to now.
    pub(crate) fn render_page(&self) -> String {
        page::render(&self.registry, self.next_free_id().as_ref())
    }
}

/// Refuses a registry path that is not a file, saying what it is instead.
fn registry_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => Ok(()),
        Ok(metadata) if metadata.is_dir() => {
            bail!("{}: is a directory, not a registry file", path.display())
        }
        Ok(_) => bail!("{}: is a special file, not a registry file", path.display()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            if path.symlink_metadata().is_ok() {
                bail!("{}: is a symbolic link to nothing", path.display())
            }
            bail!("{}: no such registry file", path.display())
        }
        Err(error) => {
            Err(error).with_context(|| format!("{}: cannot read the registry", path.display()))
        }
    }
}

/// Why a project could not be loaded.
#[derive(Debug)]
pub(crate) enum ProjectError {
    /// The registry file is unreadable or breaks its rules.
    Registry(LoadError),
    /// Something else (a bad glob, an unreadable directory).
    Other(anyhow::Error),
}

impl From<anyhow::Error> for ProjectError {
    fn from(error: anyhow::Error) -> Self {
        Self::Other(error)
    }
}

pub(crate) fn read_manifests(
    location: &Location,
    registry: &Registry,
) -> anyhow::Result<Vec<ManifestRead>> {
    let settings = registry.plugin_settings();
    // A match is read only when it resolves under the registry's directory: manifests are
    // third-party files, and findings print their lines.
    let root = std::fs::canonicalize(&location.root)
        .with_context(|| format!("cannot resolve {}", location.root.display()))?;
    let mut paths: Vec<(PathBuf, usize)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (index, pattern) in settings.manifests.iter().enumerate() {
        for path in expand(location, pattern)? {
            if seen.insert(path.clone()) {
                paths.push((path, index));
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|(path, index)| {
            let label = location.relative(&path);
            let resolved = std::fs::canonicalize(&path)
                .with_context(|| format!("cannot resolve {}", path.display()))?;
            if !resolved.starts_with(&root) {
                return Ok((label.clone(), Err(vec![outside(registry, index, &label)])));
            }
            let bytes = match crate::project_file::read_project_file(&path) {
                Ok(bytes) => bytes,
                Err(error) => return Ok((label.clone(), Err(vec![unread(&label, &error)]))),
            };
            let parsed = decode_utf8(&label, bytes)
                .map_err(|finding| vec![finding])
                .and_then(|text| Manifest::parse(&label, &text, &settings.table));
            Ok((label, parsed))
        })
        .collect()
}

/// Everything but directories that the manifest glob `pattern` matches under the registry's
/// directory: files, and FIFOs, devices or sockets (read, and refused, as anything matched and
/// not read is a finding). Names are matched as bytes, so a manifest in a directory whose name
/// is not UTF-8 is found (the `glob` crate skipped it without a word). `*` and `?` stop at `/`;
/// `**` crosses directories. Only the directories under the pattern's literal head are walked,
/// no deeper than it reaches (unless it has `**`); symlinks are followed, and a match that
/// resolves outside the registry's directory is refused where the matches are read.
fn expand(location: &Location, pattern: &str) -> anyhow::Result<Vec<PathBuf>> {
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .with_context(|| format!("invalid manifest glob `{pattern}`"))?
        .compile_matcher();
    let parts: Vec<&str> = pattern.split('/').filter(|part| !part.is_empty()).collect();
    let literal = parts
        .iter()
        .take_while(|part| !part.contains(['*', '?', '[', '{', '\\']))
        .count();
    let base = location.root.join(parts[..literal].join("/"));
    if base.symlink_metadata().is_err() {
        return Ok(Vec::new());
    }
    let mut walk = ignore::WalkBuilder::new(&base);
    walk.standard_filters(false)
        .hidden(false)
        .follow_links(true);
    if !pattern.contains("**") {
        walk.max_depth(Some(parts.len() - literal));
    }
    let mut found = Vec::new();
    for entry in walk.build() {
        let entry = entry.map_err(|error| {
            anyhow::anyhow!(
                "cannot read {} while matching `{pattern}`: {error}",
                base.display()
            )
        })?;
        let Ok(relative) = entry.path().strip_prefix(&location.root) else {
            continue;
        };
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        if !is_dir && matcher.is_match(relative) {
            found.push(entry.into_path());
        }
    }
    Ok(found)
}

/// The finding for a manifest a glob matched and that could not be read (a FIFO, a file too
/// large, no permission): it is not admitted, and says why, rather than being dropped.
fn unread(label: &str, error: &std::io::Error) -> Finding {
    diags::manifest_unreadable(label, error).file(label)
}

/// The finding for a manifest glob's match that resolves outside the registry's directory
/// (through a symlink): at the glob, and the file is not read.
fn outside(registry: &Registry, index: usize, label: &str) -> Finding {
    let settings = registry.plugin_settings();
    let glob = &settings.manifests[index];
    let said = diags::manifest_outside_project(glob, label);
    match settings.manifest_span(index) {
        Some(span) => said.at(registry.file(), span),
        None => said.file(registry.file().path()),
    }
}

/// Every parsed manifest's plugin, with its directory: a refused plugin's code is still that
/// plugin's, and its refusal is reported by admission, not again by the scan.
pub(crate) fn plugin_dirs(project: &Project) -> Vec<PluginDir> {
    project
        .parsed_manifests()
        .into_iter()
        .map(|manifest| {
            let dir = manifest
                .path()
                .rsplit_once('/')
                .map_or("", |(dir, _)| dir)
                .to_owned();
            PluginDir {
                name: manifest.name.clone(),
                dir,
                ids: manifest.ids.iter().map(|(id, _)| id.value()).collect(),
            }
        })
        .collect()
}
