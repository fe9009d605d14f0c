//! The `lockward._lockward` Python module: a Python host's import-time and load-time checks.
//!
//! A Python monorepo checks its registry when it is imported ([`Registry::load`] raises
//! `lockward.RegistryError` with the findings) and refuses a colliding plugin when it loads it
//! ([`Registry::admit`], [`Registry::admit_ids`] raise `lockward.PluginRefused`). Every rule is the
//! Rust library's (`lockward-registry`): this module only converts between it and Python objects.
//! The exception classes are plain Python (`lockward/_errors.py`), so they carry `.findings` as
//! an ordinary attribute; this module instantiates them.
#![deny(missing_docs)]
// pyo3 hands every argument of a Python-facing function over as an owned value it extracted.
#![allow(clippy::needless_pass_by_value)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod worker;

use lockward_registry as registry;
use pyo3::exceptions::{PyKeyError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString};

/// A secondary location that explains a finding ("first registered here").
#[pyclass(frozen, module = "lockward", name = "Label")]
#[derive(Clone)]
struct Label {
    /// The file, relative to the registry's directory, with `/` separators.
    #[pyo3(get)]
    path: String,
    /// The 1-based line, or None for a whole file.
    #[pyo3(get)]
    line: Option<usize>,
    /// The 1-based column in characters, or None for a whole file.
    #[pyo3(get)]
    column: Option<usize>,
    /// What this location has to do with the finding.
    #[pyo3(get)]
    message: String,
}

#[pymethods]
impl Label {
    fn __repr__(&self) -> String {
        format!(
            "Label({}, message={:?})",
            location(&self.path, self.line, self.column),
            self.message
        )
    }
}

/// One problem found by a check: the shape every lockward check reports.
#[pyclass(frozen, module = "lockward", name = "Finding")]
#[derive(Clone)]
struct Finding {
    /// The stable kebab-case code (`duplicate-id`, `plugin-collides-with-core`).
    #[pyo3(get)]
    code: String,
    /// `error`, `warning` or `note`.
    #[pyo3(get)]
    severity: String,
    /// What is wrong, in one sentence.
    #[pyo3(get)]
    message: String,
    /// The file, relative to the registry's directory, with `/` separators.
    #[pyo3(get)]
    path: String,
    /// The 1-based line, or None for a finding about a whole file.
    #[pyo3(get)]
    line: Option<usize>,
    /// The 1-based column in characters, or None for a finding about a whole file.
    #[pyo3(get)]
    column: Option<usize>,
    /// What to do about it, when there is advice.
    #[pyo3(get)]
    help: Option<String>,
    /// The text of the line the finding points at, when the file could be read.
    #[pyo3(get)]
    source_line: Option<String>,
    /// Other locations that explain this one.
    #[pyo3(get)]
    labels: Vec<Label>,
    /// The finding as `lockward --format json` prints it.
    json: String,
}

impl Finding {
    fn new(finding: &registry::Finding) -> Self {
        Self {
            code: finding.code.as_str().to_owned(),
            severity: finding.severity.as_str().to_owned(),
            message: finding.message.clone(),
            path: finding.path.clone(),
            line: finding.line(),
            column: finding.column(),
            help: finding.help.clone(),
            source_line: finding.source_line().map(str::to_owned),
            labels: finding
                .labels
                .iter()
                .map(|label| Label {
                    path: label.path.clone(),
                    line: label.line(),
                    column: label.column(),
                    message: label.message.clone(),
                })
                .collect(),
            json: serde_json::to_string(finding).expect("a finding serializes to JSON"),
        }
    }

    /// `path:line:col: severity[code]: message`, then each label and the help on lines of their
    /// own: what the exceptions' `str()` shows.
    fn render(&self) -> String {
        self.render_from(None)
    }

    /// [`Finding::render`], with every path made relative to the working directory when the
    /// registry's directory `root` is given (see [`for_the_prompt`]).
    fn render_from(&self, root: Option<&Path>) -> String {
        let shown =
            |path: &str| root.map_or_else(|| path.to_owned(), |root| for_the_prompt(root, path));
        let mut text = format!(
            "{}: {}[{}]: {}",
            location(&shown(&self.path), self.line, self.column),
            self.severity,
            self.code,
            self.message
        );
        for label in &self.labels {
            let _ = write!(
                text,
                "\n  {}: {}",
                location(&shown(&label.path), label.line, label.column),
                label.message
            );
        }
        if let Some(help) = &self.help {
            let _ = write!(text, "\n  help: {help}");
        }
        text
    }
}

#[pymethods]
impl Finding {
    /// The finding as a dict, exactly the object `lockward check --format json` and
    /// `lockward plugins --format json` print for it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?.call_method1("loads", (&self.json,))
    }

    fn __str__(&self) -> String {
        self.render()
    }

    fn __repr__(&self) -> String {
        format!(
            "Finding({}, {}[{}], {:?})",
            location(&self.path, self.line, self.column),
            self.severity,
            self.code,
            self.message
        )
    }
}

/// `path:line:col`, or `path` for a whole file.
fn location(path: &str, line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!("{path}:{line}:{column}"),
        (Some(line), None) => format!("{path}:{line}"),
        _ => path.to_owned(),
    }
}

/// One registered id, as `lockward list --format json` shows it.
#[pyclass(frozen, eq, hash, module = "lockward", name = "Lock")]
#[derive(PartialEq, Eq, Hash)]
struct Lock {
    /// The id's value.
    #[pyo3(get)]
    id: i64,
    /// The id as written in the registry (`1_001_001`, `0x6E697374`).
    #[pyo3(get)]
    literal: String,
    /// `constant`, `external`, `handover`, `retired` or `reserved`.
    #[pyo3(get)]
    kind: String,
    /// The constant's name, for constants and externals (None for a literal at a call site).
    #[pyo3(get)]
    constant: Option<String>,
    /// `core`, `plugin:NAME`, or None for retired and reserved ids.
    #[pyo3(get)]
    owner: Option<String>,
    /// The background worker that holds it.
    #[pyo3(get)]
    worker: Option<String>,
    /// `exact` (one bigint key) or `family` (the first int4 of a pair).
    #[pyo3(get)]
    key: String,
    /// The files that define the id: the constants file for a constant, the listed files for
    /// an external, none otherwise.
    #[pyo3(get)]
    defined_in: Vec<String>,
    /// Why a retired id was retired, or what a reserved id is reserved for.
    #[pyo3(get)]
    reason: Option<String>,
}

impl Lock {
    fn new(lock: &registry::Lock, registry: &registry::Registry) -> Self {
        Self {
            id: lock.id().value(),
            literal: lock.id().literal().to_owned(),
            kind: lock.kind().as_str().to_owned(),
            constant: lock.constant().map(str::to_owned),
            owner: lock.owner(),
            worker: lock.worker().map(str::to_owned),
            key: match lock.key() {
                registry::KeyShape::Exact => "exact",
                registry::KeyShape::Family => "family",
            }
            .to_owned(),
            defined_in: lock
                .defined_in(registry)
                .into_iter()
                .map(str::to_owned)
                .collect(),
            reason: match lock.kind() {
                registry::Kind::Retired { reason } | registry::Kind::Reserved { reason } => {
                    Some(reason.clone())
                }
                _ => None,
            },
        }
    }
}

#[pymethods]
impl Lock {
    fn __repr__(&self) -> String {
        let mut text = format!("Lock({}, {}", self.literal, self.kind);
        if let Some(constant) = &self.constant {
            let _ = write!(text, ", {constant}");
        }
        if let Some(owner) = &self.owner {
            let _ = write!(text, ", owner={owner}");
        }
        text.push(')');
        text
    }
}

/// A plugin that passed admission: its name and the ids its workers may hold.
///
/// Pass it in `loaded=` when admitting the next plugin, so that two plugins that declare the same
/// id are refused (rule 4).
#[pyclass(frozen, module = "lockward", name = "AdmittedPlugin")]
struct AdmittedPlugin {
    admitted: registry::AdmittedPlugin,
    manifest: registry::Manifest,
    /// Admitted from `admit_ids`: its manifest text is this module's, without positions that
    /// mean anything to the host.
    held_by_host: bool,
}

#[pymethods]
impl AdmittedPlugin {
    /// The plugin's name.
    #[getter]
    fn name(&self) -> &str {
        self.admitted.name()
    }

    /// The ids it declared, in the order declared.
    #[getter]
    fn ids(&self) -> Vec<i64> {
        self.admitted
            .ids()
            .iter()
            .map(registry::Id::value)
            .collect()
    }

    /// Where its ids were declared: the manifest's path (relative to the registry's directory
    /// when it is under it), or the `source` given to `admit_ids`.
    #[getter]
    fn manifest(&self) -> &str {
        self.admitted.manifest()
    }

    fn __repr__(&self) -> String {
        format!(
            "AdmittedPlugin(name={:?}, ids={:?})",
            self.admitted.name(),
            self.ids()
        )
    }
}

/// A registry that passed every rule of `lockward.toml`.
#[pyclass(frozen, module = "lockward", name = "Registry")]
struct Registry {
    inner: registry::Registry,
    /// The registry file, absolute.
    file: PathBuf,
    /// Its directory: manifest paths in findings are relative to it.
    root: PathBuf,
    warnings: Vec<Finding>,
}

impl Registry {
    /// The entry a constant name (str) or an id (int) names: `KeyError` when there is none,
    /// `TypeError` for anything else.
    fn entry(&self, key: &Bound<'_, PyAny>) -> PyResult<&registry::Lock> {
        if key.is_instance_of::<PyString>() {
            let name: String = key.extract()?;
            // By its id: `lock_by_constant`'s answer borrows the name too.
            let id = self
                .inner
                .lock_by_constant(&name)
                .map(|lock| lock.id().value());
            if let Some(lock) = id.and_then(|id| self.inner.lock(id)) {
                return Ok(lock);
            }
            let named = self.inner.locks_named(&name).count();
            return Err(if named > 1 {
                PyKeyError::new_err(format!(
                    "`{name}` names {named} externals in different files: look it up by id"
                ))
            } else {
                PyKeyError::new_err(format!("no lock named `{name}` in {}", self.shown()))
            });
        }
        if key.is_instance_of::<PyInt>() && !key.is_instance_of::<PyBool>() {
            // An int beyond bigint cannot be registered: absent, like any other.
            let found = key.extract::<i64>().ok().and_then(|id| self.inner.lock(id));
            return found.ok_or_else(|| {
                PyKeyError::new_err(format!("no lock with id {key} in {}", self.shown()))
            });
        }
        Err(PyTypeError::new_err(format!(
            "a lock is looked up by constant name (str) or id (int), not {}",
            key.get_type().name()?
        )))
    }
}

#[pymethods]
impl Registry {
    /// Reads and validates the registry at `path`; raises `lockward.RegistryError` carrying
    /// every finding when the file cannot be read or breaks a rule.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        let root = file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let label = file.file_name().map_or_else(
            || "lockward.toml".to_owned(),
            |name| name.to_string_lossy().into_owned(),
        );
        match registry::Registry::load(&file, &label) {
            Ok(loaded) => Ok(Self {
                inner: loaded.registry,
                file,
                root,
                warnings: loaded.warnings.iter().map(Finding::new).collect(),
            }),
            // A file that cannot be read is the OSError Python's own `open` raises
            // (`FileNotFoundError` for a missing one, with its errno and file name), not a
            // RegistryError that says the reason twice.
            Err(registry::LoadError::Io { source, .. }) => Err(os_error(&source, &file)),
            Err(error @ registry::LoadError::Invalid { .. }) => {
                let registry::LoadError::Invalid { findings, .. } = &error else {
                    unreachable!("matched Invalid");
                };
                Err(raise(
                    py,
                    "RegistryError",
                    error.to_string(),
                    findings,
                    None,
                ))
            }
        }
    }

    /// The project's name (`[project] name`).
    #[getter]
    fn project(&self) -> &str {
        &self.inner.project().name
    }

    /// The registry file, as an absolute path.
    #[getter]
    fn path(&self) -> String {
        self.file.display().to_string()
    }

    /// The next free id of core's block: one more than the highest id the registry file records
    /// inside the block, or None when the block is used up. `lockward list` prints the figure that
    /// also counts the plugin manifests' ids and other git branches' reservations.
    #[getter]
    fn next_free_id(&self) -> Option<i64> {
        self.inner
            .next_free_id(std::iter::empty())
            .map(|id| id.value())
    }

    /// How many `constant` entries the registry has.
    #[getter]
    fn core_constants(&self) -> usize {
        self.inner.core_constant_count()
    }

    /// The findings that do not make the registry invalid (a core constant outside the block).
    #[getter]
    fn warnings(&self) -> Vec<Finding> {
        self.warnings.clone()
    }

    /// The entry for a constant name or an id; raises KeyError when there is none.
    fn lock(&self, key: &Bound<'_, PyAny>) -> PyResult<Lock> {
        self.entry(key).map(|lock| Lock::new(lock, &self.inner))
    }

    /// Every entry, sorted by numeric id.
    fn locks(&self) -> Vec<Lock> {
        self.inner
            .locks()
            .iter()
            .map(|lock| Lock::new(lock, &self.inner))
            .collect()
    }

    /// Admits the plugin whose manifest is at `path` (TOML, or JSON by extension; its table is
    /// the registry's `[plugins] table`), held to the registry and to the plugins in `loaded`.
    /// Raises `lockward.PluginRefused` with every reason when it is refused.
    #[pyo3(
        signature = (path, loaded = Vec::new()),
        text_signature = "($self, path, loaded=())"
    )]
    fn admit(
        &self,
        py: Python<'_>,
        path: PathBuf,
        loaded: Vec<PyRef<'_, AdmittedPlugin>>,
    ) -> PyResult<AdmittedPlugin> {
        let label = self.relative(&path);
        let text = std::fs::read(&path)
            .map_err(|error| {
                registry::Finding::file(
                    registry::Code::Unreadable,
                    registry::Severity::Error,
                    &label,
                    format!("cannot read the plugin manifest: {error}"),
                )
            })
            .and_then(|bytes| registry::decode_utf8(&label, bytes));
        let text = match text {
            Ok(text) => text,
            Err(finding) => {
                return Err(refused(
                    py,
                    &self.root,
                    &format!("`{}`", for_the_prompt(&self.root, &label)),
                    &[finding],
                ));
            }
        };
        let manifest =
            match registry::Manifest::parse(&label, &text, &self.inner.plugin_settings().table) {
                Ok(manifest) => manifest,
                Err(findings) => {
                    return Err(refused(
                        py,
                        &self.root,
                        &format!("`{}`", for_the_prompt(&self.root, &label)),
                        &findings,
                    ));
                }
            };
        self.admit_manifest(py, manifest, &loaded, false)
    }

    /// Admits a plugin from its name and ids, as a host that parsed the plugin's manifest itself
    /// holds them. `source` names where the host read them from, in findings and messages.
    #[pyo3(
        signature = (name, ids, loaded = Vec::new(), source = None),
        text_signature = "($self, name, ids, loaded=(), source=None)"
    )]
    fn admit_ids(
        &self,
        py: Python<'_>,
        name: &str,
        ids: Vec<Bound<'_, PyAny>>,
        loaded: Vec<PyRef<'_, AdmittedPlugin>>,
        source: Option<String>,
    ) -> PyResult<AdmittedPlugin> {
        let label = source.unwrap_or_else(|| format!("<admit_ids {name}>"));
        // The one manifest parser reads the ids, so a name or an id it refuses in a file is
        // refused here too. Its TOML text is this call's own, so positions in it mean nothing
        // to the host and are dropped from the findings.
        // The parser reads JSON when the path ends in `.json`, so a `source` named so gets JSON.
        // An id is an int, never a bool (`True` was id 1 here while `lock(True)` was refused),
        // and one PostgreSQL's bigint holds (`2**64` was a raw `OverflowError: ... C long`).
        let ids = ids
            .iter()
            .map(|id| {
                if id.is_instance_of::<PyInt>() && !id.is_instance_of::<PyBool>() {
                    id.extract::<i64>().map(|id| id.to_string()).map_err(|_| {
                        PyValueError::new_err(format!(
                            "advisory lock id {id} does not fit PostgreSQL's bigint (from -2**63 \
                             to 2**63 - 1)"
                        ))
                    })
                } else {
                    Err(PyTypeError::new_err(format!(
                        "advisory lock ids are ints, not {} ({})",
                        id.get_type().name()?,
                        id.repr()?
                    )))
                }
            })
            .collect::<PyResult<Vec<_>>>()?
            .join(", ");
        let quoted = serde_json::to_string(name).expect("a string serializes to JSON");
        let is_json = Path::new(&label)
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("json"));
        let text = if is_json {
            format!("{{\"plugin\": {{\"name\": {quoted}, \"advisory_lock_ids\": [{ids}]}}}}")
        } else {
            // A JSON string with its escapes is a TOML basic string.
            format!("[plugin]\nname = {quoted}\nadvisory_lock_ids = [{ids}]\n")
        };
        let manifest = match registry::Manifest::parse(&label, &text, "plugin") {
            Ok(manifest) => manifest,
            Err(findings) => {
                let findings = without_positions(findings, &label);
                return Err(refused(
                    py,
                    &self.root,
                    &format!("plugin `{name}`"),
                    &findings,
                ));
            }
        };
        self.admit_manifest(py, manifest, &loaded, true)
    }

    fn __repr__(&self) -> String {
        format!(
            "Registry(project={:?}, path={:?})",
            self.inner.project().name,
            self.file.display().to_string()
        )
    }
}

impl Registry {
    fn admit_manifest(
        &self,
        py: Python<'_>,
        manifest: registry::Manifest,
        loaded: &[PyRef<'_, AdmittedPlugin>],
        held_by_host: bool,
    ) -> PyResult<AdmittedPlugin> {
        let others: Vec<&registry::Manifest> =
            loaded.iter().map(|plugin| &plugin.manifest).collect();
        match self.inner.admit(&manifest, &others) {
            Ok(admitted) => Ok(AdmittedPlugin {
                admitted,
                manifest,
                held_by_host,
            }),
            Err(mut findings) => {
                if held_by_host {
                    findings = without_positions(findings, manifest.path());
                }
                for plugin in loaded.iter().filter(|plugin| plugin.held_by_host) {
                    findings = without_positions(findings, plugin.manifest.path());
                }
                let who = format!(
                    "plugin `{}` ({})",
                    manifest.name,
                    for_the_prompt(&self.root, manifest.path())
                );
                Err(refused(py, &self.root, &who, &findings))
            }
        }
    }

    /// `path` as findings show it: relative to the registry's directory when it is under it,
    /// else absolute; its `.` and `..` resolved (`host/../evil/plugin.toml` was shown so).
    fn relative(&self, path: &Path) -> String {
        let absolute = normalized(path);
        match absolute.strip_prefix(&self.root) {
            Ok(relative) => relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => absolute.display().to_string(),
        }
    }

    /// The registry file as messages name it.
    fn shown(&self) -> String {
        self.file.display().to_string()
    }
}

/// `path` made absolute with its `.` and `..` resolved by name (what the file system would do
/// too, but for symlinks, which a path to a manifest about to be refused need not follow).
fn normalized(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A finding's path (relative to the registry's directory) as a person at the prompt reads it:
/// relative to the working directory when it is under it, else absolute. Pseudo-paths such as
/// `<admit_ids billing>` stay as they are.
fn for_the_prompt(root: &Path, path: &str) -> String {
    if path.starts_with('<') {
        return path.to_owned();
    }
    let full = normalized(&root.join(path));
    let Ok(cwd) = std::env::current_dir() else {
        return full.display().to_string();
    };
    match full.strip_prefix(&cwd) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => full.display().to_string(),
    }
}

/// `findings` with the line and column of every location in `path` dropped.
fn without_positions(findings: Vec<registry::Finding>, path: &str) -> Vec<registry::Finding> {
    findings
        .into_iter()
        .map(|mut finding| {
            if finding.path == path {
                finding.span = None;
            }
            for label in &mut finding.labels {
                if label.path == path {
                    label.span = None;
                }
            }
            finding
        })
        .collect()
}

/// A `lockward.PluginRefused` naming `who` and every reason.
fn refused(py: Python<'_>, root: &Path, who: &str, findings: &[registry::Finding]) -> PyErr {
    let reasons = findings.iter().filter(|f| f.is_error()).count();
    let header = format!(
        "{who} is refused ({} {}):",
        reasons,
        if reasons == 1 { "reason" } else { "reasons" }
    );
    raise(py, "PluginRefused", header, findings, Some(root))
}

/// The `OSError` subclass Python raises for `error` on `path` (`FileNotFoundError`,
/// `PermissionError`, `IsADirectoryError`, ...), with its errno, message and file name; a plain
/// `OSError` for what has no errno (a FIFO or a file too large, which lockward refuses).
fn os_error(error: &std::io::Error, path: &Path) -> PyErr {
    let filename = path.display().to_string();
    match error.raw_os_error() {
        Some(errno) => {
            let message = std::io::Error::from_raw_os_error(errno).to_string();
            let message = message
                .split(" (os error")
                .next()
                .unwrap_or(&message)
                .to_owned();
            PyOSError::new_err((errno, message, filename))
        }
        None => PyOSError::new_err(format!("{filename}: {error}")),
    }
}

/// An instance of `lockward._errors.NAME(message, findings)`: the message, then each finding on
/// lines of its own.
/// With the registry's directory `root`, the message names files relative to the working
/// directory, as a person at the prompt reads them; the findings keep the paths
/// `lockward plugins --format json` prints.
fn raise(
    py: Python<'_>,
    name: &str,
    header: String,
    findings: &[registry::Finding],
    root: Option<&Path>,
) -> PyErr {
    let findings: Vec<Finding> = findings.iter().map(Finding::new).collect();
    let mut message = header;
    for finding in &findings {
        message.push('\n');
        message.push_str(&finding.render_from(root));
    }
    let instance = py
        .import("lockward._errors")
        .and_then(|errors| errors.getattr(name))
        .and_then(|class| class.call1((message, findings)));
    match instance {
        Ok(instance) => PyErr::from_value(instance),
        Err(error) => error,
    }
}

/// The extension module; `lockward/__init__.py` re-exports its classes.
#[pymodule]
fn _lockward(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Registry>()?;
    module.add_class::<Lock>()?;
    module.add_class::<Finding>()?;
    module.add_class::<Label>()?;
    module.add_class::<AdmittedPlugin>()?;
    module.add_class::<worker::PyWorker>()?;
    module.add_class::<worker::Run>()?;
    module.add_class::<worker::PyCycle>()?;
    module.add_class::<worker::Report>()?;
    module.add_function(wrap_pyfunction!(worker::serve_metrics, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The worker's log lines (`tracing`, emitted as `log` records with no subscriber set) go to
    // Python's `logging`, under loggers named after the Rust modules (`lockward_pg.worker.run`).
    // Levels are asked of Python at each record (no cache), so `logging.getLogger(...)
    // .setLevel(...)` after the import takes effect. A process that installed a Rust logger
    // already keeps it.
    // Only lockward's own records: the libraries under it (hyper in the metrics exporter,
    // tokio-postgres) log from their threads, and one that does while the interpreter
    // finalizes must not call into it.
    let _ = pyo3_log::Logger::new(module.py(), pyo3_log::Caching::Nothing)?
        .filter(log::LevelFilter::Off)
        // Info and above: each record asks Python's logging whether it is enabled (with the
        // GIL), and the worker's debug lines sit inside the cycles it times.
        .filter_target("lockward_pg".to_owned(), log::LevelFilter::Info)
        .install();
    Ok(())
}
