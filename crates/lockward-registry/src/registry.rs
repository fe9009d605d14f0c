//! The validated registry: what the rest of lockward sees once a file has passed every rule.

use std::collections::HashMap;

use serde::Serialize;

use crate::finding::Label;
use crate::id::{Id, KeyShape, Keys};
use crate::source::SourceFile;

/// A registry that passed every rule in DESIGN §2. Build one with [`crate::parse`] or
/// [`Registry::load`](crate::Registry::load); nothing else constructs it.
#[derive(Debug, Clone)]
pub struct Registry {
    pub(crate) project: Project,
    pub(crate) core: Core,
    pub(crate) plugins: PluginSettings,
    pub(crate) scan: ScanSettings,
    pub(crate) shares: Vec<Share>,
    /// Sorted by numeric id.
    pub(crate) locks: Vec<Lock>,
    pub(crate) by_id: HashMap<i64, usize>,
    pub(crate) file: SourceFile,
}

/// `[project]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The project's name.
    pub name: String,
    /// Where `lockward render` writes the page, relative to the registry's directory.
    pub page: Option<String>,
}

/// `[[share]]`: another project's registry whose workers use the same database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// Its path as written: relative to this registry's directory, or absolute.
    pub registry: String,
    /// Byte range of the path's value in the registry file.
    pub span: std::ops::Range<usize>,
}

/// `[core]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Core {
    /// The file that defines core's constants, relative to the registry's directory.
    pub constants: String,
    /// The range core takes new ids from.
    pub block: Block,
}

/// The inclusive range core takes new ids from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// First id of the block.
    pub start: Id,
    /// Last id of the block.
    pub end: Id,
}

impl Block {
    /// Whether `value` lies inside the block.
    pub fn contains(&self, value: i64) -> bool {
        (self.start.value()..=self.end.value()).contains(&value)
    }
}

/// `[plugins]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSettings {
    /// Globs, relative to the registry's directory, that find plugin manifests.
    pub manifests: Vec<String>,
    /// Dotted path of the table holding `name` and `advisory_lock_ids` (default `plugin`).
    pub table: String,
    /// Where each of `manifests` is written in the registry file.
    pub(crate) manifest_spans: Vec<std::ops::Range<usize>>,
}

impl PluginSettings {
    /// The byte range of the `index`th manifest glob in the registry file, for findings about
    /// what it matched.
    pub fn manifest_span(&self, index: usize) -> Option<std::ops::Range<usize>> {
        self.manifest_spans.get(index).cloned()
    }
}

/// `[scan]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanSettings {
    /// Only paths matching one of these globs are scanned (all when empty).
    pub include: Vec<String>,
    /// Paths matching one of these globs are not scanned.
    pub exclude: Vec<String>,
    /// Name patterns a constant must match to count as a lock id (`*` matches any words).
    pub constant_patterns: Vec<String>,
    /// Keyword names whose `name = <integer>` / `name: <integer>` forms are lock ids.
    pub keywords: Vec<String>,
    /// `[scan] wrappers`: library helpers whose argument is a lock key, besides
    /// [`ScanSettings::DEFAULT_WRAPPERS`] (always on) and the wrappers the scan infers.
    pub wrappers: Vec<Wrapper>,
}

/// A function whose argument is an advisory lock key (`[scan] wrappers`): its calls with a
/// literal or a constant there are lock sites of that id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Wrapper {
    /// The function or method as called: its last identifier (`Acquire` matches
    /// `locker.Acquire(..)`), or a dotted `Type.name` that also requires the name before it.
    pub name: String,
    /// The key's argument position, 1-based.
    pub position: Option<usize>,
    /// The key argument's keyword name (`lock_id` in `advisory_lock(lock_id=42)`).
    pub keyword: Option<String>,
}

impl Wrapper {
    /// A wrapper whose key is at `position` (1-based), or passed as `keyword`.
    pub fn new(name: &str, position: Option<usize>, keyword: Option<&str>) -> Self {
        Self {
            name: name.to_owned(),
            position,
            keyword: keyword.map(str::to_owned),
        }
    }
}

impl ScanSettings {
    /// The constant patterns used when `[scan] constant_patterns` is not set.
    pub const DEFAULT_CONSTANT_PATTERNS: &'static [&'static str] = &[
        "ADVISORY_LOCK*",
        "ADVISORY_LOCKS*",
        "*_LOCK_KEY",
        "*_LOCK_ID",
        "*LOCK_KEYS",
        "*LOCK_IDS",
    ];
    /// The keywords always recognised, besides those in `[scan] keywords`.
    pub const DEFAULT_KEYWORDS: &'static [&'static str] = &["advisory_lock_id"];
    /// Helpers of well-known libraries that take an integer key, always on in their language:
    /// name, position (1-based), keyword and language. A string passed to one (hashed into a
    /// key by the library) is a lock taken by name, whose key the scan computes when the
    /// library is one of [`crate::well_known::NAMED_LOCK_CALLS`].
    /// - django-pglocks: `advisory_lock(lock_id, shared=False, wait=True, using=None)`;
    /// - django-pglock: `pglock.advisory(lock_id=None, ...)`;
    /// - Rails (ActiveRecord's PostgreSQL adapter): `get_advisory_lock(lock_id)`,
    ///   `release_advisory_lock(lock_id)`;
    /// - the `with_advisory_lock` gem: `Model.with_advisory_lock(lock_name)` and its raising
    ///   `with_advisory_lock!(lock_name)` (a number is the key);
    /// - Go's `github.com/allisson/go-pglock`: `pglock.NewLock(ctx, id, db)`;
    /// - Rust's sqlx: `PgAdvisoryLockKey::BigInt(key)`, `PgAdvisoryLock::new(name)`.
    pub const DEFAULT_WRAPPERS: &'static [(
        &'static str,
        usize,
        Option<&'static str>,
        lockward_lang::Language,
    )] = &[
        (
            "advisory_lock",
            1,
            Some("lock_id"),
            lockward_lang::Language::Python,
        ),
        ("get_advisory_lock", 1, None, lockward_lang::Language::Ruby),
        (
            "release_advisory_lock",
            1,
            None,
            lockward_lang::Language::Ruby,
        ),
        ("with_advisory_lock", 1, None, lockward_lang::Language::Ruby),
        (
            "with_advisory_lock!",
            1,
            None,
            lockward_lang::Language::Ruby,
        ),
        ("pglock.NewLock", 2, None, lockward_lang::Language::Go),
        (
            "PgAdvisoryLockKey.BigInt",
            1,
            None,
            lockward_lang::Language::Rust,
        ),
        // sqlx's `PgAdvisoryLock::new(name)` (a constructor, named after its type): a string
        // there is a name it hashes (`well_known::NAMED_LOCK_CALLS`).
        ("PgAdvisoryLock", 1, None, lockward_lang::Language::Rust),
        // django-pglock's `pglock.advisory(lock_id)`: an int is the key, a string a name it
        // hashes (sha256).
        (
            "pglock.advisory",
            1,
            Some("lock_id"),
            lockward_lang::Language::Python,
        ),
    ];
}

/// Which kind of entry an id is. Every id is exactly one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A core constant, defined in core's constants file.
    Constant,
    /// A core id defined outside the constants file, in the listed files.
    External {
        /// Files (relative to the registry's directory) that define or use it.
        defined_in: Vec<String>,
    },
    /// A lock core takes by name through a library that hashes the name into the key
    /// (`name = "reindex"`, `hash = "django-pglocks"`): its id is that key (a two-int key's
    /// first int, as a family).
    Named {
        /// The lock's name as the code passes it.
        name: String,
        /// The library's catalogue id ([`crate::well_known::NAME_HASHES`]).
        hash: String,
    },
    /// An id core handed over to one plugin.
    Handover {
        /// The plugin's name.
        plugin: String,
    },
    /// An id no longer used; never reassigned.
    Retired {
        /// Why it was retired.
        reason: String,
    },
    /// An id reserved for work that has not landed.
    Reserved {
        /// What it is reserved for.
        reason: String,
    },
}

impl Kind {
    /// `constant`, `external`, `named`, `handover`, `retired` or `reserved`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Constant => "constant",
            Self::External { .. } => "external",
            Self::Named { .. } => "named",
            Self::Handover { .. } => "handover",
            Self::Retired { .. } => "retired",
            Self::Reserved { .. } => "reserved",
        }
    }
}

/// Where an entry came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The registry file on the current branch.
    Registry,
    /// The registry file as it stands on another branch (a reservation by unlanded work).
    Branch(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Registry => f.write_str("registry"),
            Self::Branch(name) => write!(f, "branch {name}"),
        }
    }
}

/// One registered id. Only a validated [`Registry`] hands them out, and nothing changes one
/// after validation: its fields are read through the methods of the same names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub(crate) id: Id,
    pub(crate) kind: Kind,
    pub(crate) constant: Option<String>,
    pub(crate) site: Option<String>,
    pub(crate) worker: Option<String>,
    pub(crate) key: KeyShape,
    pub(crate) source: Source,
    /// Byte range of the entry's `id` value in the registry file (empty for entries not from
    /// the file).
    pub(crate) span: std::ops::Range<usize>,
}

impl Lock {
    /// The id, as written.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// What kind of entry it is.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The constant's name, for constants and externals (and optionally others): an identifier,
    /// or a member of a collection or an enum as the code names it (`LOCKS["reindex"]`,
    /// `Locks.REINDEX`; see [`crate::is_constant_name`]).
    pub fn constant(&self) -> Option<&str> {
        self.constant.as_deref()
    }

    /// For an external written as a literal at a call site rather than defined as a constant:
    /// how it is written there (`PeriodicTask(advisory_lock_id=)`).
    pub fn site(&self) -> Option<&str> {
        self.site.as_deref()
    }

    /// The background worker that holds it.
    pub fn worker(&self) -> Option<&str> {
        self.worker.as_deref()
    }

    /// Exact bigint key or a family.
    pub fn key(&self) -> KeyShape {
        self.key
    }

    /// The keys the entry owns, as PostgreSQL sees them.
    pub fn keys(&self) -> Option<Keys> {
        Keys::of(self.id().value(), self.key())
    }

    /// Where the entry came from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Byte range of the entry's `id` value in the registry file (empty for entries not from
    /// the file: reservations found on other branches, plugins' own ids).
    pub fn span(&self) -> std::ops::Range<usize> {
        self.span.clone()
    }

    /// Whether `other` is the same lock: the same id, kind and owner (where and how each was
    /// written does not matter, nor what else its entry says).
    pub fn same_lock(&self, other: &Lock) -> bool {
        self.id.value() == other.id.value()
            && self.kind.as_str() == other.kind.as_str()
            && self.owner() == other.owner()
    }

    /// `core`, `plugin:NAME`, or `None` (retired and reserved ids have no owner).
    pub fn owner(&self) -> Option<String> {
        match &self.kind {
            Kind::Constant | Kind::External { .. } | Kind::Named { .. } => Some("core".to_owned()),
            Kind::Handover { plugin } => Some(format!("plugin:{plugin}")),
            Kind::Retired { .. } | Kind::Reserved { .. } => None,
        }
    }

    /// The files that define the id: the constants file for a constant, the listed files for an
    /// external, none otherwise.
    pub fn defined_in<'a>(&'a self, registry: &'a Registry) -> Vec<&'a str> {
        self.defined_in_paths(&registry.core.constants)
    }

    pub(crate) fn defined_in_paths<'a>(&'a self, constants_file: &'a str) -> Vec<&'a str> {
        match &self.kind {
            Kind::Constant => vec![constants_file],
            Kind::External { defined_in } => defined_in.iter().map(String::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether core itself uses the id (a constant or an external).
    pub fn is_core(&self) -> bool {
        matches!(
            self.kind,
            Kind::Constant | Kind::External { .. } | Kind::Named { .. }
        )
    }
}

impl Registry {
    /// The registry file's text, named as it was loaded.
    pub fn file(&self) -> &SourceFile {
        &self.file
    }

    /// A label pointing at `lock`'s id in the registry file; for a reservation found on another
    /// branch, a label naming that branch.
    pub fn label(&self, lock: &Lock, message: impl Into<String>) -> Label {
        let mut label = self.file.label(lock.span.clone(), message);
        if let Source::Branch(branch) = &lock.source {
            label.span = None;
            label.message = format!("{} (on branch {branch})", label.message);
        }
        label
    }

    /// `[[share]]`: the other registries on this registry's database, in file order.
    pub fn shares(&self) -> &[Share] {
        &self.shares
    }

    /// `[project]`.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// `[core]`.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// `[plugins]`.
    pub fn plugin_settings(&self) -> &PluginSettings {
        &self.plugins
    }

    /// `[scan]`.
    pub fn scan_settings(&self) -> &ScanSettings {
        &self.scan
    }

    /// Every entry, sorted by numeric id.
    pub fn locks(&self) -> &[Lock] {
        &self.locks
    }

    /// The entry `target` names: an id in any TOML integer form (`1_001_003`, `1001003`,
    /// `0xF462B`), or a constant's name (which several externals may share: then the id must be
    /// given).
    pub fn find(&self, target: &str) -> Result<&Lock, FindError> {
        let not_registered = || FindError::NotRegistered(target.to_owned());
        if let Some(value) = lockward_lang::parse_id(target) {
            return self.lock(value).ok_or_else(not_registered);
        }
        let mut named = self
            .locks
            .iter()
            .filter(|lock| lock.constant.as_deref() == Some(target));
        let first = named.next().ok_or_else(not_registered)?;
        if named.next().is_some() {
            return Err(FindError::Ambiguous(target.to_owned()));
        }
        Ok(first)
    }

    /// The entry for `id`, if registered.
    pub fn lock(&self, id: i64) -> Option<&Lock> {
        self.by_id.get(&id).map(|&i| &self.locks[i])
    }

    /// The entry for a constant name: the core constant of that name, else the only external of
    /// that name. Two externals may share a name in different files; then use
    /// [`Registry::locks_named`].
    pub fn lock_by_constant<'a>(&'a self, name: &'a str) -> Option<&'a Lock> {
        let mut named = self.locks_named(name);
        let first = named.next()?;
        if first.kind == Kind::Constant {
            return Some(first);
        }
        let rest: Vec<&Lock> = named.collect();
        if let Some(constant) = rest.iter().find(|lock| lock.kind == Kind::Constant) {
            return Some(constant);
        }
        rest.is_empty().then_some(first)
    }

    /// Every entry whose constant is `name`.
    pub fn locks_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Lock> + 'a {
        self.locks
            .iter()
            .filter(move |lock| lock.constant.as_deref() == Some(name))
    }

    /// The entries of one kind (`"constant"`, `"external"`, ...; see [`Kind::as_str`]).
    pub fn locks_of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Lock> + 'a {
        self.locks
            .iter()
            .filter(move |lock| lock.kind.as_str() == kind)
    }

    /// The family entry whose id is `high`, if any: the owner of every key `(high, n)`.
    pub fn family(&self, high: i64) -> Option<&Lock> {
        self.lock(high).filter(|lock| lock.key == KeyShape::Family)
    }

    /// How many `constant` entries there are.
    pub fn core_constant_count(&self) -> usize {
        self.locks
            .iter()
            .filter(|lock| lock.kind == Kind::Constant)
            .count()
    }

    /// The next free id: one more than the highest id ever recorded inside the block, among the
    /// registry's entries and `also_taken` (plugin manifests' ids, other branches' ids). Gaps are
    /// never filled: a gap may be an id an unlanded branch already took. `None` when the block
    /// is used up.
    pub fn next_free_id(&self, also_taken: impl IntoIterator<Item = i64>) -> Option<Id> {
        let block = &self.core.block;
        let highest = self
            .locks
            .iter()
            .map(|lock| lock.id.value())
            .chain(also_taken)
            .filter(|&value| block.contains(value))
            .max();
        let mut next = match highest {
            None => block.start.value(),
            Some(value) => value.checked_add(1)?,
        };
        // A well-known tool's fixed key (Prisma's 72707369) is never handed out: a worker on it
        // would skip its cycles whenever that tool migrates.
        while crate::well_known::fixed_holder(next).is_some() {
            next = next.checked_add(1)?;
        }
        block
            .contains(next)
            .then(|| Id::styled_like(next, block.start.literal()))
    }

    /// Adds reservations found elsewhere (another branch's registry) as `reserved` entries with
    /// source `branch NAME`. Ids already registered here are skipped (the registry on this
    /// branch is the authority), and so are later reservations of an id already added.
    pub fn add_reservations(&mut self, reservations: impl IntoIterator<Item = Reservation>) {
        let mut added = std::collections::HashSet::new();
        for reservation in reservations {
            let value = reservation.id.value();
            if self.by_id.contains_key(&value) || !added.insert(value) {
                continue;
            }
            self.locks.push(Lock {
                id: reservation.id,
                kind: Kind::Reserved {
                    reason: reservation.reason,
                },
                constant: reservation.constant,
                site: None,
                worker: reservation.worker,
                key: reservation.key,
                source: Source::Branch(reservation.branch),
                span: 0..0,
            });
        }
        self.reindex();
    }

    /// Carries over the reservations `old` had from other branches (after an edit re-parsed the
    /// file), skipping ids registered here now.
    pub(crate) fn keep_reservations_of(&mut self, old: &Registry) {
        for lock in &old.locks {
            if matches!(lock.source, Source::Branch(_))
                && !self.by_id.contains_key(&lock.id.value())
            {
                self.locks.push(lock.clone());
            }
        }
        self.reindex();
    }

    pub(crate) fn reindex(&mut self) {
        self.locks.sort_by_key(|lock| lock.id.value());
        self.by_id = self
            .locks
            .iter()
            .enumerate()
            .map(|(i, lock)| (lock.id.value(), i))
            .collect();
    }
}

/// An id that work which has not landed took: what [`Registry::add_reservations`] turns into a
/// `reserved` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// The id, as written on the branch.
    pub id: Id,
    /// What it is reserved for.
    pub reason: String,
    /// The constant the branch gave it, if any.
    pub constant: Option<String>,
    /// The worker the branch gave it, if any.
    pub worker: Option<String>,
    /// Exact bigint key or a family.
    pub key: KeyShape,
    /// The branch it was found on.
    pub branch: String,
}

/// The `list --format json` view of one entry.
#[derive(Debug, Clone, Serialize)]
pub struct LockView<'a> {
    /// Numeric id.
    pub id: i64,
    /// The id as written.
    pub literal: &'a str,
    /// `constant`, `external`, `named`, `handover`, `retired` or `reserved`.
    pub kind: &'static str,
    /// The constant's name.
    pub constant: Option<&'a str>,
    /// For a lock taken by name: its name, and the library that hashes it (`hash`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// The library that hashes a named lock's name into its key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<&'a str>,
    /// For an external written as a literal at a call site: how it is written there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<&'a str>,
    /// `core`, `plugin:NAME` or null.
    pub owner: Option<String>,
    /// The worker that holds it.
    pub worker: Option<&'a str>,
    /// Files that define it.
    pub defined_in: Vec<&'a str>,
    /// `exact` or `family`.
    pub key: KeyShape,
    /// `registry` or `branch NAME`.
    pub source: String,
}

impl Registry {
    /// The entries as `list --format json` shows them.
    pub fn views(&self) -> Vec<LockView<'_>> {
        self.locks
            .iter()
            .map(|lock| LockView {
                id: lock.id.value(),
                literal: lock.id.literal(),
                kind: lock.kind.as_str(),
                constant: lock.constant.as_deref(),
                name: match &lock.kind {
                    Kind::Named { name, .. } => Some(name.as_str()),
                    _ => None,
                },
                hash: match &lock.kind {
                    Kind::Named { hash, .. } => Some(hash.as_str()),
                    _ => None,
                },
                site: lock.site.as_deref(),
                owner: lock.owner(),
                worker: lock.worker.as_deref(),
                defined_in: lock.defined_in(self),
                key: lock.key,
                source: lock.source.to_string(),
            })
            .collect()
    }
}

/// Why [`Registry::find`] found no one entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindError {
    /// No entry has that id or constant.
    #[error("`{0}` is not registered")]
    NotRegistered(String),
    /// A constant name shared by several externals: the id must be given.
    #[error("`{0}` names more than one entry; give the id instead")]
    Ambiguous(String),
}
