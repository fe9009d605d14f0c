//! The parallel walk: every file read once, and only files holding a trigger word lexed.

use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, WalkBuilder, WalkState};
use lockward_registry::{Finding, Registry, ScanSettings};
use regex::bytes::Regex;

use crate::diags::{self, Skipped};
use crate::extract::{extract, extract_calls, extract_wrappers};
use crate::lang::Language;
use crate::prefilter::Prefilter;
use crate::sites::{FileSites, Names};
use crate::{NotRead, PluginDir, Progress, ScanOptions, plugins};

/// What the walk collected.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) files: Vec<FileSites>,
    pub(crate) plugins: Vec<PluginDir>,
    pub(crate) errors: Vec<Finding>,
    pub(crate) files_scanned: u64,
    pub(crate) bytes_scanned: u64,
    pub(crate) not_read: NotRead,
    /// Every file lexed (whatever it held), for a later pass that needs only those.
    pub(crate) lexed: Vec<String>,
    /// A hash of the path of every source file the walk read (lexed or not), in no order: where
    /// a later pass may look for the file a name is bound in ([`crate::bind::Index`]). Eight
    /// bytes a file, the one thing the walk keeps of every file.
    pub(crate) sources: Vec<u64>,
}

/// The constant patterns and keywords in force: the registry's, or the defaults, and every
/// constant name the registry itself registers, whatever it looks like. (`lockward take
/// NEW_LOCK` wrote `NEW_LOCK`, and `check` then said `constant-missing ... no definition of it
/// was found`: no pattern matched the name the registry chose.)
pub(crate) fn names(registry: &lockward_registry::Registry) -> Names {
    let settings = registry.scan_settings();
    let mut patterns: Vec<String> = if settings.constant_patterns.is_empty() {
        ScanSettings::DEFAULT_CONSTANT_PATTERNS
            .iter()
            .map(|&p| p.to_owned())
            .collect()
    } else {
        settings.constant_patterns.clone()
    };
    patterns.extend(
        registry
            .locks()
            .iter()
            .filter_map(|lock| lock.constant())
            .filter(|name| lockward_registry::is_identifier(name))
            .map(str::to_owned),
    );
    patterns.sort();
    patterns.dedup();
    let keywords: Vec<String> = ScanSettings::DEFAULT_KEYWORDS
        .iter()
        .map(|&k| k.to_owned())
        .chain(settings.keywords.iter().cloned())
        .collect();
    let declared = crate::wrappers::Declared::new(settings);
    Names::new(&patterns, &keywords).with_wrappers(declared.names())
}

/// Whether every file holding one of `names` as a word is one the prefilter lets through
/// (`acquire_advisory_lock` holds `advisory`), so a pass for their calls need read only the
/// files the walk lexed.
pub(crate) fn covered(names: &Names, wanted: &HashSet<String>) -> bool {
    prefilter(names).is_none_or(|prefilter| {
        wanted
            .iter()
            .all(|name| prefilter.is_triggered(name.as_bytes()))
    })
}

/// The test for a trigger word, with or without `_` between its words (`lock_key` finds
/// `LOCK_KEY`, `LockKey` and `lockKey`). `None` means every file is lexed.
pub(crate) fn prefilter(names: &Names) -> Option<Prefilter> {
    Prefilter::new(&names.trigger_runs()?)
}

/// What a walk looks for.
enum Mode {
    /// Every site, in the files a trigger word lets through.
    Sites,
    /// The calls of these names (and the definitions, for more wrappers), in the files that
    /// hold one of them as a word.
    Calls {
        matcher: Regex,
        wanted: HashSet<String>,
        /// The SQL functions among them, looked for in the SQL of every language's strings.
        sql_functions: HashSet<String>,
        /// The languages that may call them (see [`crate::wrappers::family`]): other files are
        /// not read.
        languages: HashSet<Language>,
    },
}

struct Shared<'a> {
    root: &'a Path,
    /// The root with every link resolved, to tell a link into the tree from one out of it.
    canonical_root: Option<std::path::PathBuf>,
    mode: Mode,
    lexed: Mutex<Vec<String>>,
    sources: Mutex<Vec<u64>>,
    include: Option<globset::GlobSet>,
    names: Names,
    prefilter: Option<Prefilter>,
    manifests: Option<(globset::GlobSet, &'a str)>,
    max_file_size: u64,
    files: Mutex<Vec<FileSites>>,
    plugins: Mutex<Vec<PluginDir>>,
    errors: Mutex<Vec<Finding>>,
    progress: Arc<Progress>,
    not_read: Counters,
}

/// The files not read, by reason, counted from every walker thread.
#[derive(Debug, Default)]
struct Counters {
    binary: AtomicU64,
    too_large: AtomicU64,
    not_followed: AtomicU64,
    unreadable: AtomicU64,
}

pub(crate) fn walk(registry: &Registry, root: &Path, options: &ScanOptions) -> Walked {
    walk_for(registry, root, options, Mode::Sites)
}

/// The definitions and the calls of `wanted` in the files of the tree that hold one of them as
/// a word; with `only`, in those files alone. Nothing else is reported (the first walk did).
pub(crate) fn calls(
    registry: &Registry,
    root: &Path,
    options: &ScanOptions,
    wanted: &HashSet<String>,
    sql_functions: &HashSet<String>,
    languages: &HashSet<Language>,
    only: Option<&[String]>,
) -> Vec<FileSites> {
    let callable = |language: Language| languages.contains(&crate::wrappers::family(language));
    let mut sorted: Vec<&str> = wanted.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    let pattern = sorted
        .iter()
        .map(|name| regex::escape(name))
        .collect::<Vec<_>>()
        .join("|");
    let Ok(matcher) = Regex::new(&format!(r"(?-u:\b)(?:{pattern})(?-u:\b)")) else {
        return Vec::new();
    };
    let Some(only) = only else {
        let mode = Mode::Calls {
            matcher,
            wanted: wanted.clone(),
            sql_functions: sql_functions.clone(),
            languages: languages.clone(),
        };
        return walk_for(registry, root, options, mode).files;
    };
    let names = names(registry);
    let mut files = Vec::new();
    for relative in only {
        let Some(language) = Language::from_path(relative).filter(|&l| callable(l)) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(root.join(relative)) else {
            continue;
        };
        if !matcher.is_match(&bytes) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        files.extend(extract_wrappers(
            relative,
            language,
            &text,
            &names,
            wanted,
            sql_functions,
        ));
    }
    files
}

fn walk_for(registry: &Registry, root: &Path, options: &ScanOptions, mode: Mode) -> Walked {
    let settings = registry.scan_settings();
    let mut errors = Vec::new();
    let mut builder = WalkBuilder::new(root);
    builder.threads(options.threads).require_git(false);
    // Excludes become ignore rules. Includes do not: an override that whitelists a path would
    // win over `.gitignore`, and files git ignores are never read.
    let mut overrides = OverrideBuilder::new(root);
    // A glob the registry's own rules let through but the walk cannot use is the registry's
    // problem: the finding names the registry file.
    let registry_path = registry.file().path();
    for glob in &settings.exclude {
        if let Err(error) = overrides.add(&format!("!{glob}")) {
            errors.push(diags::invalid_glob(glob, &error).file(registry_path));
        }
    }
    match overrides.build() {
        Ok(overrides) => {
            builder.overrides(overrides);
        }
        Err(error) => errors.push(diags::invalid_globs(&error).file(registry_path)),
    }
    let include = include_globs(&settings.include, registry_path, &mut errors);
    let names = names(registry);
    let shared = Shared {
        root,
        canonical_root: std::fs::canonicalize(root).ok(),
        mode,
        lexed: Mutex::default(),
        sources: Mutex::default(),
        include,
        prefilter: prefilter(&names),
        names,
        manifests: options
            .plugins
            .is_none()
            .then(|| plugins::manifest_globs(registry.plugin_settings()))
            .flatten()
            .map(|set| (set, registry.plugin_settings().table.as_str())),
        max_file_size: options.max_file_size,
        files: Mutex::default(),
        plugins: Mutex::default(),
        errors: Mutex::new(errors),
        progress: options.progress.clone().unwrap_or_default(),
        not_read: Counters::default(),
    };
    // A caller may share one `Progress` across scans; this scan's figures are the difference.
    let (files_before, bytes_before) = (shared.progress.files(), shared.progress.bytes());
    builder.build_parallel().run(|| {
        let shared = &shared;
        let mut buffer = Vec::with_capacity(256 * 1024);
        Box::new(move |entry| {
            match entry {
                Ok(entry) => shared.visit(&entry, &mut buffer),
                Err(error) => {
                    let (path, message) = walk_error(shared.root, &error);
                    shared.error(&path, message);
                }
            }
            WalkState::Continue
        })
    });
    let mut files = shared
        .files
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut plugins = shared
        .plugins
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    plugins.sort_by(|a, b| (&a.name, &a.dir).cmp(&(&b.name, &b.dir)));
    Walked {
        files,
        plugins,
        errors: shared
            .errors
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
        files_scanned: shared.progress.files() - files_before,
        bytes_scanned: shared.progress.bytes() - bytes_before,
        not_read: NotRead {
            binary: shared.not_read.binary.into_inner(),
            too_large: shared.not_read.too_large.into_inner(),
            not_followed: shared.not_read.not_followed.into_inner(),
            unreadable: shared.not_read.unreadable.into_inner(),
        },
        lexed: shared
            .lexed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
        sources: shared
            .sources
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    }
}

/// Reads and extracts one source file of the tree (a path the walk listed in
/// [`Walked::sources`]), looking for the calls of `wanted` too; `None` if it cannot be read, is
/// too large or is not text (the walk reported each of those already), or, with `defines`,
/// holds none of those names (another file of a Go package, read for the one name it may
/// define: most files of a package cannot, and their extraction, a parse included, is spared).
pub(crate) fn load(
    root: &Path,
    relative: &str,
    max_file_size: u64,
    names: &Names,
    wanted: &HashSet<String>,
    defines: Option<&std::collections::BTreeSet<String>>,
) -> Option<FileSites> {
    let language = Language::from_path(relative)?;
    let mut buffer = Vec::new();
    std::fs::File::open(root.join(relative))
        .and_then(|file| file.take(max_file_size + 1).read_to_end(&mut buffer))
        .ok()?;
    if buffer.len() as u64 > max_file_size || looks_binary(&buffer) {
        return None;
    }
    if defines.is_some_and(|defines| {
        !defines
            .iter()
            .any(|name| memchr::memmem::find(&buffer, name.as_bytes()).is_some())
    }) {
        return None;
    }
    let text = String::from_utf8_lossy(&buffer);
    Some(extract_calls(relative, language, &text, names, wanted))
}

/// Where a walk error happened, relative to `root` like every finding's path (`.` for the root
/// itself, empty when the error names no path), and what went wrong, without the absolute path
/// the walker puts in front of it.
fn walk_error(root: &Path, error: &ignore::Error) -> (String, String) {
    let relative = |path: &Path| {
        let relative = path.strip_prefix(root).unwrap_or(path);
        let shown = relative
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/");
        if shown.is_empty() {
            ".".to_owned()
        } else {
            shown
        }
    };
    match error {
        ignore::Error::WithPath { path, err } => (relative(path), format!("cannot read it: {err}")),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error(root, err)
        }
        ignore::Error::Loop { ancestor, child } => (
            relative(child),
            format!("a symbolic link loops back to {}", relative(ancestor)),
        ),
        other => (String::new(), other.to_string()),
    }
}

impl Shared<'_> {
    /// A file or directory that could not be read: a warning, since the rest of the tree is
    /// still checked.
    fn error(&self, path: &str, message: String) {
        lock(&self.errors).push(diags::unreadable(message).file(path));
    }

    fn visit(&self, entry: &DirEntry, buffer: &mut Vec<u8>) {
        let Some(file_type) = entry.file_type() else {
            return;
        };
        if file_type.is_dir() {
            return;
        }
        let relative = entry.path().strip_prefix(self.root).unwrap_or(entry.path());
        let relative = relative.to_string_lossy();
        let relative = if std::path::MAIN_SEPARATOR == '/' {
            relative
        } else {
            relative.replace(std::path::MAIN_SEPARATOR, "/").into()
        };
        if !file_type.is_file() {
            if matches!(self.mode, Mode::Calls { .. }) {
                return;
            }
            // A symbolic link (the walk does not follow them), a FIFO or a socket: opening one
            // could hang or leave the tree, so a source file's name on one is only reported.
            if self.source_language(&relative).is_some()
                && matches!(self.mode, Mode::Sites)
                && !self.links_into_tree(entry.path())
            {
                let link = file_type.is_symlink();
                self.not_read(&relative, Skipped::NotFollowed { link });
            }
            return;
        }
        if let Some((globs, table)) = &self.manifests
            && globs.is_match(relative.as_ref())
            && matches!(self.mode, Mode::Sites)
        {
            self.manifest(entry.path(), &relative, table);
        }
        if let Some(language) = self.source_language(&relative) {
            self.visit_file(entry.path(), &relative, language, buffer);
        }
    }

    /// Whether `path` is a symbolic link to a regular file inside the tree, which the walk
    /// reaches where it lies: skipping the link loses nothing.
    fn links_into_tree(&self, path: &Path) -> bool {
        let Some(root) = &self.canonical_root else {
            return false;
        };
        std::fs::canonicalize(path).is_ok_and(|target| target.starts_with(root) && target.is_file())
    }

    /// The language of a file the scan reads: one of its languages, and `[scan] include`d.
    fn source_language(&self, relative: &str) -> Option<Language> {
        let language = Language::from_path(relative)?;
        let excluded = self
            .include
            .as_ref()
            .is_some_and(|globs| !globs.is_match(relative));
        (!excluded).then_some(language)
    }

    /// Reads one source file and extracts its sites; a file that cannot be read, or is not
    /// text, is counted and reported. In the calls pass, only files of a language that may call
    /// the new wrappers and that name one are lexed, and nothing is counted twice.
    fn visit_file(&self, path: &Path, relative: &str, language: Language, buffer: &mut Vec<u8>) {
        if let Mode::Calls { languages, .. } = &self.mode
            && !languages.contains(&crate::wrappers::family(language))
        {
            return;
        }
        buffer.clear();
        let read = std::fs::File::open(path)
            .and_then(|file| file.take(self.max_file_size + 1).read_to_end(buffer));
        if let Mode::Calls {
            matcher,
            wanted,
            sql_functions,
            ..
        } = &self.mode
        {
            if read.is_ok()
                && buffer.len() as u64 <= self.max_file_size
                && matcher.is_match(buffer)
                && !looks_binary(buffer)
            {
                let text = String::from_utf8_lossy(buffer);
                if let Some(sites) = extract_wrappers(
                    relative,
                    language,
                    &text,
                    &self.names,
                    wanted,
                    sql_functions,
                ) {
                    lock(&self.files).push(sites);
                }
            }
            return;
        }
        if let Err(error) = read {
            self.not_read.unreadable.fetch_add(1, Ordering::Relaxed);
            lock(&self.errors).push(diags::unreadable_file(relative, &error).file(relative));
            return;
        }
        if buffer.len() as u64 > self.max_file_size {
            self.not_read(relative, Skipped::TooLarge(self.max_file_size));
            return;
        }
        self.progress.add(buffer.len() as u64);
        lock(&self.sources).push(path_hash(relative));
        if self
            .prefilter
            .as_ref()
            .is_some_and(|prefilter| !prefilter.is_triggered(buffer))
        {
            return;
        }
        // Binary: only a file that holds a trigger word loses anything by being skipped.
        if looks_binary(buffer) {
            self.not_read(relative, Skipped::Binary);
            return;
        }
        let text = String::from_utf8_lossy(buffer);
        let sites = extract(relative, language, &text, &self.names);
        lock(&self.lexed).push(relative.to_owned());
        if !sites.items.is_empty()
            || !sites.allows.is_empty()
            || !sites.wrappers.is_empty()
            || !sites.exports.is_empty()
            || !sites.members.is_empty()
            || !sites.strings.is_empty()
            || !sites.class_settings.is_empty()
        {
            lock(&self.files).push(sites);
        }
    }

    /// A source file skipped for `reason`: counted, and a `file-not-read` note.
    fn not_read(&self, relative: &str, skipped: Skipped) {
        let counter = match skipped {
            Skipped::Binary => &self.not_read.binary,
            Skipped::TooLarge(_) => &self.not_read.too_large,
            Skipped::NotFollowed { .. } => &self.not_read.not_followed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        lock(&self.errors).push(diags::file_not_read(relative, skipped).file(relative));
    }

    fn manifest(&self, path: &Path, relative: &str, table: &str) {
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        if let Some(plugin) = plugins::plugin(relative, &text, table) {
            lock(&self.plugins).push(plugin);
        }
    }
}

/// `[scan] include` as gitignore-style globs: one without a `/` matches a file name anywhere.
fn include_globs(
    include: &[String],
    registry_path: &str,
    errors: &mut Vec<Finding>,
) -> Option<globset::GlobSet> {
    if include.is_empty() {
        return None;
    }
    let mut builder = globset::GlobSetBuilder::new();
    for glob in include {
        let trimmed = glob.trim_start_matches('/');
        let pattern = if glob.contains('/') {
            trimmed.to_owned()
        } else {
            format!("**/{trimmed}")
        };
        // A pattern naming a directory includes everything under it.
        let compiled = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .and_then(|file| {
                let under = format!("{}/**", pattern.trim_end_matches('/'));
                Ok((
                    file,
                    globset::GlobBuilder::new(&under)
                        .literal_separator(true)
                        .build()?,
                ))
            });
        match compiled {
            Ok((file, under)) => {
                builder.add(file);
                builder.add(under);
            }
            Err(error) => errors.push(diags::invalid_glob(glob, &error).file(registry_path)),
        }
    }
    builder.build().ok()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A NUL byte in the first 8 KiB: a binary file, as ripgrep judges one.
fn looks_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some()
}

/// A path's hash for the later passes' index of what the walk read ([`crate::bind::Index`]).
pub(crate) fn path_hash(path: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use lockward_registry::{Code, Severity};

    use super::*;

    #[test]
    fn a_walk_error_names_the_path_relative_to_the_root_and_once() {
        let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let error = ignore::Error::WithDepth {
            depth: 1,
            err: Box::new(ignore::Error::WithPath {
                path: "/work/project/secret".into(),
                err: Box::new(ignore::Error::Io(io)),
            }),
        };
        let (path, message) = walk_error(std::path::Path::new("/work/project"), &error);
        assert_eq!(path, "secret");
        assert_eq!(message, "cannot read it: permission denied");
    }

    /// As root, a file's permissions stop no read; a directory (EISDIR) and `/proc/self/mem`
    /// (EIO) fail the way an unreadable file fails, through the same path.
    #[test]
    fn a_source_file_that_cannot_be_read_is_a_warning_and_counted() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let directory = root.path().join("x.py");
        std::fs::create_dir(&directory).expect("mkdir");
        let names = Names::new(&["ADVISORY_LOCK*".into()], &[]);
        let shared = Shared {
            root: root.path(),
            mode: Mode::Sites,
            lexed: Mutex::default(),
            sources: Mutex::default(),
            canonical_root: None,
            include: None,
            prefilter: prefilter(&names),
            names,
            manifests: None,
            max_file_size: 1 << 20,
            files: Mutex::default(),
            plugins: Mutex::default(),
            errors: Mutex::default(),
            progress: Arc::default(),
            not_read: Counters::default(),
        };
        let mut buffer = Vec::new();
        shared.visit_file(&directory, "x.py", Language::Python, &mut buffer);
        if cfg!(target_os = "linux") {
            let mem = Path::new("/proc/self/mem");
            shared.visit_file(mem, "mem.py", Language::Python, &mut buffer);
        }
        let errors = shared.errors.into_inner().expect("not poisoned");
        let expected = if cfg!(target_os = "linux") { 2 } else { 1 };
        assert_eq!(errors.len(), expected, "{errors:#?}");
        assert!(
            errors
                .iter()
                .all(|finding| finding.code == Code::UnreadableFile
                    && finding.severity == Severity::Warning)
        );
        assert!(
            errors[0].message.starts_with("cannot read `x.py`: "),
            "{}",
            errors[0].message
        );
        assert_eq!(shared.not_read.unreadable.into_inner(), expected as u64);
    }
}
