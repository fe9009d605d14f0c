//! The edits `lockward take` and `lockward retire` make, as pure functions from text to text.
//!
//! Taking an id appends one `[[lock]]` entry after the last byte of the registry and one constant
//! to core's constants file; retiring rewrites the lines of one entry. Every other byte of both
//! files stays exactly as it was (comments, blank lines, key order, line endings), because these
//! files are written by people and reviewed as diffs: a take should read as a few added lines,
//! nothing else. Each edit of the registry is parsed again before it is returned, so an edit
//! that would break a rule is refused instead of written.
//!
//! The constant is written by [`lockward_lang::constants`], shaped like its siblings in the
//! file; the languages, their reserved words and where a file already defines a name come from
//! [`lockward_lang`] too, the crate the scan reads code with.
//!
//! Nothing here reads or writes files: the caller holds the lock, reads, and writes atomically.

use std::ops::Range;

use lockward_lang::constants::{NewConstant, WriteError, ends_with_blank_line, line_ending};
use lockward_lang::{find_definition, is_identifier};

use crate::finding::Finding;
use crate::id::{AdvisoryKey, Id, KeyShape};
use crate::parse::{is_member_name, parse};
use crate::registry::{FindError, Kind, Lock, Registry, Source};
use crate::toml_text::toml_string;

pub use lockward_lang::Language;

/// What `lockward take` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The constant's name, an identifier in every supported language.
    pub constant: String,
    /// The background worker that will hold the id.
    pub worker: String,
    /// For a handover: the plugin the id is handed over to.
    pub plugin: Option<String>,
    /// Exact bigint key or a family.
    pub key: KeyShape,
    /// Land this registry's reserved id (in any TOML integer form) for the constant, instead of
    /// taking the next free one: the reservation's entry becomes the constant's, in place.
    pub reserved: Option<String>,
}

/// One `[[lock]]` entry to append to the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The id, written as its literal.
    pub id: Id,
    /// The constant's name. For a handover it documents the name the plugin uses.
    pub constant: String,
    /// The background worker that holds the id.
    pub worker: String,
    /// For a handover: the plugin's name (`plugin = "NAME"` makes the entry a handover).
    pub plugin: Option<String>,
    /// `key = "family"` is written for a family; an exact key is the default and not written.
    pub key: KeyShape,
}

/// The outcome of a take: every file's new text, nothing written yet.
#[derive(Debug, Clone)]
pub struct Taken {
    /// The id taken, in the block's style.
    pub id: Id,
    /// The registry's new text.
    pub registry_text: String,
    /// The new registry, parsed from `registry_text`, with the reservations of the registry it
    /// was taken from (other branches' ids) carried over.
    pub registry: Registry,
    /// Core's constants file's new text; `None` for a handover, which has no core constant.
    pub constants_text: Option<String>,
    /// The next free id after this take, for the page.
    pub next_free: Option<Id>,
}

/// The outcome of a retire: the registry's new text, nothing written yet.
#[derive(Debug, Clone)]
pub struct Retired {
    /// The entry as it was before it was retired.
    pub lock: Lock,
    /// The registry's new text.
    pub registry_text: String,
    /// The new registry, parsed from `registry_text`, reservations carried over.
    pub registry: Registry,
}

impl From<FindError> for EditError {
    fn from(error: FindError) -> Self {
        match error {
            FindError::NotRegistered(target) => Self::NotRegistered(target),
            FindError::Ambiguous(target) => Self::Ambiguous(target),
        }
    }
}

/// Why an edit was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EditError {
    /// The constant's name is not an identifier in every supported language.
    #[error(
        "`{0}` is not an identifier: use ASCII letters, digits and `_`, not starting with a digit"
    )]
    InvalidConstantName(String),
    /// The name is a member of a collection or an enum (`LOCKS["reindex"]`, `Locks.REINDEX`):
    /// `take` writes plain constants only.
    #[error(
        "`{0}` names a member of a collection or an enum; `take` writes plain constants only: add the member to its collection in the code, then register it where it is with `lockward take '{0}' --worker \"...\" --defined-in FILE`"
    )]
    MemberName(String),
    /// The name is a reserved word of the constants file's language: the constant would not
    /// compile.
    #[error(
        "{path}: `{constant}` is a reserved word in {language}, so the constant would not compile; choose another name"
    )]
    ReservedWord {
        /// The constants file.
        path: String,
        /// The name asked for.
        constant: String,
        /// The file's language, by name.
        language: &'static str,
    },
    /// The name is an identifier, but not a constant in the constants file's language (in Ruby,
    /// a name starting with a lowercase letter or `_` is a local variable).
    #[error("{path}: `{constant}` would not be a constant there: {why}")]
    NotAConstant {
        /// The constants file.
        path: String,
        /// The name asked for.
        constant: String,
        /// The language's rule.
        why: &'static str,
    },
    /// A required text (`--worker`, `--plugin`, `--reason`) is empty.
    #[error("{0} must not be empty")]
    Empty(&'static str),
    /// A lock taken by name whose library lockward does not know the hash of.
    #[error("lockward does not know how `{hash}` turns a lock's name into a key (known: {known})")]
    UnknownNameHash {
        /// The library asked for.
        hash: String,
        /// The libraries it knows, comma separated.
        known: String,
    },
    /// The key a name hashes to is an entry's already.
    #[error(
        "the lock named {name:?} ({hash}) takes key {key}, which is id {id} ({what}{where_}) already: their holders would skip each other's cycles"
    )]
    NameKeyTaken {
        /// The name asked for.
        name: String,
        /// Its library.
        hash: String,
        /// The key, as PostgreSQL takes it.
        key: String,
        /// The entry's id, as written.
        id: String,
        /// What the entry is (its constant, or its kind).
        what: String,
        /// Where the entry is, when not in this registry (`, on branch NAME`).
        where_: String,
    },
    /// The constant's name is already used by an entry.
    #[error("constant `{constant}` is already registered: id {id} ({kind}{where_})")]
    AlreadyRegistered {
        /// The name asked for.
        constant: String,
        /// The existing entry's id, as written.
        id: String,
        /// The existing entry's kind.
        kind: &'static str,
        /// Where the existing entry is, when not in this registry (`, on branch NAME`).
        where_: String,
    },
    /// Core's constants file already defines the name.
    #[error("{path}:{line}: `{constant}` is already defined in core's constants file")]
    AlreadyDefined {
        /// The constants file.
        path: String,
        /// The name asked for.
        constant: String,
        /// 1-based line of the definition.
        line: usize,
    },
    /// Every id of the block is recorded.
    #[error("core's block {start}..={end} is used up: every id in it is recorded")]
    BlockUsedUp {
        /// The block's first id.
        start: String,
        /// The block's last id.
        end: String,
    },
    /// A family was asked for but the next free id does not fit in an int4.
    #[error("the next free id {0} does not fit in an int4, so it cannot be a family")]
    FamilyOutOfRange(String),
    /// Core's constants file is in a language lockward does not write.
    #[error("{0}: lockward writes constants in {names} files, not this one", names = Language::CONSTANTS_LANGUAGES)]
    UnsupportedLanguage(String),
    /// Core's constants file does not exist.
    #[error("{0}: core's constants file does not exist; create it, then take the id again")]
    MissingConstantsFile(String),
    /// A Java file without a class body to put the constant in.
    #[error("{0}: found no class body (no closing `}}`) to add the constant to")]
    NoClassBody(String),
    /// No entry has that id or constant.
    #[error("`{0}` is not registered")]
    NotRegistered(String),
    /// A constant name shared by several externals: the id must be given.
    #[error("`{0}` names more than one entry; give the id instead")]
    Ambiguous(String),
    /// The id is reserved on another branch, not in this registry.
    #[error("id {id} is reserved on branch {branch}, not in this registry; retire it there")]
    OnOtherBranch {
        /// The id, as written.
        id: String,
        /// The branch that reserves it.
        branch: String,
    },
    /// `--reserved` named an id that is not reserved in this registry.
    #[error(
        "id {id} is not reserved (its entry is `{kind}`): --reserved lands only an id this \
         registry reserves"
    )]
    NotReserved {
        /// The id, as written.
        id: String,
        /// What its entry is.
        kind: &'static str,
    },
    /// The entry is already retired.
    #[error("id {id} is already retired: {reason}")]
    AlreadyRetired {
        /// The id, as written.
        id: String,
        /// Why it was retired.
        reason: String,
    },
    /// The edited registry does not pass its rules (a bug in the edit, or a registry that did
    /// not parse to begin with).
    #[error("the edited registry would break its rules: {}", first_error(.0))]
    Rejected(Vec<Finding>),
}

/// The message of the first finding at error level (the findings come sorted by position, with
/// the warnings among them: a legacy id outside the block is not what broke the edit).
fn first_error(findings: &[Finding]) -> &str {
    findings
        .iter()
        .find(|finding| finding.is_error())
        .or(findings.first())
        .map_or("", |finding| finding.message.as_str())
}

/// Takes the next free id for `request`: the registry's new text with the entry appended, and
/// core's constants file's new text with the constant appended (not for a handover: the plugin
/// defines its own constant, and a handover's id in core's code would be a finding).
///
/// `also_taken` holds the ids recorded outside the registry (plugin manifests' ids, the ids
/// core's constants file defines; other branches' ids go in as reservations added to
/// `registry`). `constants_text` is core's
/// constants file as read, `None` when it does not exist.
pub fn take(
    registry: &Registry,
    request: &Request,
    also_taken: &[i64],
    constants_text: Option<&str>,
) -> Result<Taken, EditError> {
    if is_member_name(&request.constant) {
        return Err(EditError::MemberName(request.constant.clone()));
    }
    if !is_identifier(&request.constant) {
        return Err(EditError::InvalidConstantName(request.constant.clone()));
    }
    if request.worker.trim().is_empty() {
        return Err(EditError::Empty("the worker"));
    }
    if request
        .plugin
        .as_ref()
        .is_some_and(|plugin| plugin.trim().is_empty())
    {
        return Err(EditError::Empty("the plugin's name"));
    }
    if let Some(existing) = registry.locks_named(&request.constant).next() {
        return Err(EditError::AlreadyRegistered {
            constant: request.constant.clone(),
            id: existing.id.to_string(),
            kind: existing.kind.as_str(),
            where_: match &existing.source {
                Source::Registry => String::new(),
                Source::Branch(branch) => format!(", on branch {branch}"),
            },
        });
    }
    let constants_path = registry.core().constants.as_str();
    let constants = if request.plugin.is_some() {
        None
    } else {
        let language = Language::from_path(constants_path)
            .filter(|language| language.writes_constants())
            .ok_or_else(|| EditError::UnsupportedLanguage(constants_path.to_owned()))?;
        if language.reserves(&request.constant) {
            return Err(EditError::ReservedWord {
                path: constants_path.to_owned(),
                constant: request.constant.clone(),
                language: language.name_for(constants_path),
            });
        }
        if language == Language::Ruby
            && !request
                .constant
                .starts_with(|c: char| c.is_ascii_uppercase())
        {
            return Err(EditError::NotAConstant {
                path: constants_path.to_owned(),
                constant: request.constant.clone(),
                why: "a Ruby constant starts with an uppercase letter",
            });
        }
        let text = constants_text
            .ok_or_else(|| EditError::MissingConstantsFile(constants_path.to_owned()))?;
        if let Some(line) = find_definition(language, text, &request.constant) {
            return Err(EditError::AlreadyDefined {
                path: constants_path.to_owned(),
                constant: request.constant.clone(),
                line,
            });
        }
        Some((language, text))
    };

    let block = &registry.core().block;
    let landed = request
        .reserved
        .as_deref()
        .map(|target| reservation(registry, target))
        .transpose()?;
    let id = match landed {
        Some(id) => id,
        None => registry
            .next_free_id(also_taken.iter().copied())
            .ok_or_else(|| EditError::BlockUsedUp {
                start: block.start.to_string(),
                end: block.end.to_string(),
            })?,
    };
    if request.key == KeyShape::Family && !id.fits_int4() {
        return Err(EditError::FamilyOutOfRange(id.to_string()));
    }
    let entry = Entry {
        id: id.clone(),
        constant: request.constant.clone(),
        worker: request.worker.clone(),
        plugin: request.plugin.clone(),
        key: request.key,
    };
    let registry_text = if request.reserved.is_some() {
        land_entry(registry.file().text(), &entry)?
    } else {
        append_entry(registry.file().text(), &entry)
    };
    let new_registry = reparse(registry, &registry_text)?;
    let constants_text = match constants {
        None => None,
        Some((language, text)) => Some(append_constant(
            language,
            constants_path,
            text,
            &registry
                .locks_of_kind("constant")
                .filter_map(|lock| lock.constant.as_deref())
                .collect::<Vec<_>>(),
            &request.constant,
            &id,
            &request.worker,
        )?),
    };
    let next_free = new_registry.next_free_id(also_taken.iter().copied());
    Ok(Taken {
        id,
        registry_text,
        registry: new_registry,
        constants_text,
        next_free,
    })
}

/// The id of the reservation `target` names, for `take --reserved`: an entry of this registry
/// whose kind is `reserved` (another branch's reservation lands on that branch).
fn reservation(registry: &Registry, target: &str) -> Result<Id, EditError> {
    let lock = registry.find(target)?;
    if let Source::Branch(branch) = &lock.source {
        return Err(EditError::OnOtherBranch {
            id: lock.id.to_string(),
            branch: branch.clone(),
        });
    }
    if !matches!(lock.kind, Kind::Reserved { .. }) {
        return Err(EditError::NotReserved {
            id: lock.id.to_string(),
            kind: lock.kind.as_str(),
        });
    }
    Ok(lock.id.clone())
}

/// The registry's text with the reserved entry of `entry.id` made `entry`'s, in place: its
/// `reserved` line becomes the `constant`, `worker` (and `plugin`, `key`) lines, and any such
/// lines it had go. No other byte changes.
pub(crate) fn land_entry(registry_text: &str, entry: &Entry) -> Result<String, EditError> {
    let document = document(registry_text)?;
    let table = lock_table(&document, entry.id.value())
        .ok_or_else(|| EditError::NotRegistered(entry.id.to_string()))?;
    let reserved =
        key_lines(registry_text, table, "reserved").ok_or_else(|| EditError::NotReserved {
            id: entry.id.to_string(),
            kind: "another kind",
        })?;
    let nl = line_ending(registry_text);
    let mut landed = format!(
        "constant = {}{nl}worker = {}{nl}",
        toml_string(&entry.constant),
        toml_string(&entry.worker)
    );
    if let Some(plugin) = &entry.plugin {
        landed.push_str("plugin = ");
        landed.push_str(&toml_string(plugin));
        landed.push_str(nl);
    }
    if entry.key == KeyShape::Family {
        landed.push_str("key = \"family\"");
        landed.push_str(nl);
    }
    let mut edits: Vec<(Range<usize>, String)> = vec![(reserved, landed)];
    for key in ["constant", "worker", "plugin", "key"] {
        if let Some(range) = key_lines(registry_text, table, key) {
            edits.push((range, String::new()));
        }
    }
    Ok(apply(registry_text, edits))
}

/// The registry's text as a TOML document, or the findings of the registry it does not parse as.
fn document(registry_text: &str) -> Result<toml_edit::Document<&str>, EditError> {
    toml_edit::Document::parse(registry_text).map_err(|_| {
        match parse("lockward.toml", registry_text) {
            Err(findings) => EditError::Rejected(findings),
            Ok(_) => unreachable!("text toml_edit cannot parse never validates"),
        }
    })
}

/// The `[[lock]]` table of `id`.
fn lock_table<'d>(
    document: &'d toml_edit::Document<&str>,
    id: i64,
) -> Option<&'d toml_edit::Table> {
    document
        .as_table()
        .get("lock")
        .and_then(toml_edit::Item::as_array_of_tables)
        .and_then(|locks| locks.iter().find(|table| table_id(table) == Some(id)))
}

/// The id of a `[[lock]]` table: its `id`, else, for a lock taken by name, the key its library
/// computes for the name (a pair's first int).
fn table_id(table: &toml_edit::Table) -> Option<i64> {
    if let Some(id) = table.get("id") {
        return id.as_integer();
    }
    let name = table.get("name")?.as_str()?;
    let hash = table.get("hash")?.as_str()?;
    match crate::well_known::name_key(hash, name)? {
        AdvisoryKey::Bigint(key) => Some(key),
        AdvisoryKey::Pair(family, _) => Some(i64::from(family)),
    }
}

/// The whole lines of `key`'s pair in `table` (see [`whole_lines`]), when it has one.
fn key_lines(registry_text: &str, table: &toml_edit::Table, key: &str) -> Option<Range<usize>> {
    let key_span = table.key(key).and_then(toml_edit::Key::span)?;
    let value_span = table.get(key).and_then(toml_edit::Item::span)?;
    Some(whole_lines(registry_text, key_span.start, value_span.end))
}

/// `text` with each range replaced by its text, in order; an insertion sorts before a removal
/// starting at the same byte, so both keep their place.
fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(text.len() + 80);
    let mut cursor = 0;
    for (range, replacement) in edits {
        out.push_str(&text[cursor..range.start]);
        out.push_str(&replacement);
        cursor = range.end;
    }
    out.push_str(&text[cursor..]);
    out
}

/// Retires `lock`: its entry is rewritten in place with `retired = "reason"`; `plugin`,
/// `reserved` and `defined_in`, which exclude `retired`, are dropped; `constant`, `worker` and
/// `key` stay as the record of what the id was.
pub fn retire(registry: &Registry, lock: &Lock, reason: &str) -> Result<Retired, EditError> {
    if reason.trim().is_empty() {
        return Err(EditError::Empty("the reason"));
    }
    if let Source::Branch(branch) = &lock.source {
        return Err(EditError::OnOtherBranch {
            id: lock.id.to_string(),
            branch: branch.clone(),
        });
    }
    if let Kind::Retired { reason } = &lock.kind {
        return Err(EditError::AlreadyRetired {
            id: lock.id.to_string(),
            reason: reason.clone(),
        });
    }
    let registry_text = retire_entry(registry.file().text(), lock.id.value(), reason)?;
    let new_registry = reparse(registry, &registry_text)?;
    Ok(Retired {
        lock: lock.clone(),
        registry_text,
        registry: new_registry,
    })
}

/// `take --name NAME --hash LIBRARY`: registers a lock the code takes by name, at the key the
/// library computes for it (`[[lock]] name = .. hash = .. worker = ..` appended, no constant
/// written). Refused when the library is unknown, or when the key is an entry's already (the
/// same name registered before, another name on the same key, or any other id), other branches'
/// reservations included.
pub fn take_named(
    registry: &Registry,
    name: &str,
    hash: &str,
    worker: &str,
    also_taken: &[i64],
) -> Result<Taken, EditError> {
    if name.is_empty() {
        return Err(EditError::Empty("the lock's name"));
    }
    if worker.trim().is_empty() {
        return Err(EditError::Empty("the worker"));
    }
    let key =
        crate::well_known::name_key(hash, name).ok_or_else(|| EditError::UnknownNameHash {
            hash: hash.to_owned(),
            known: crate::well_known::NAME_HASHES.join(", "),
        })?;
    let (value, shape, shown) = match key {
        AdvisoryKey::Bigint(k) => (k, KeyShape::Exact, k.to_string()),
        AdvisoryKey::Pair(a, b) => (i64::from(a), KeyShape::Family, format!("({a}, {b})")),
    };
    let keys = crate::id::Keys::of(value, shape)
        .ok_or_else(|| EditError::FamilyOutOfRange(value.to_string()))?;
    let taken = registry
        .locks()
        .iter()
        .find(|lock| lock.keys().is_some_and(|theirs| theirs.overlaps(keys)));
    if let Some(lock) = taken {
        return Err(EditError::NameKeyTaken {
            name: name.to_owned(),
            hash: hash.to_owned(),
            key: shown,
            id: lock.id.to_string(),
            what: match (&lock.kind, lock.constant.as_deref()) {
                (Kind::Named { name, hash }, _) => format!("the lock named {name:?}, {hash}"),
                (_, Some(constant)) => constant.to_owned(),
                (kind, None) => kind.as_str().to_owned(),
            },
            where_: match &lock.source {
                Source::Registry => String::new(),
                Source::Branch(branch) => format!(", on branch {branch}"),
            },
        });
    }
    let lines = [
        "[[lock]]".to_owned(),
        format!("name = {}", toml_string(name)),
        format!("hash = {}", toml_string(hash)),
        format!("worker = {}", toml_string(worker)),
    ];
    let registry_text = append_table(registry.file().text(), &lines);
    let new_registry = reparse(registry, &registry_text)?;
    let next_free = new_registry.next_free_id(also_taken.iter().copied());
    Ok(Taken {
        id: Id::plain(value),
        registry_text,
        registry: new_registry,
        constants_text: None,
        next_free,
    })
}

/// Parses an edited registry and carries over the reservations `old` had from other branches.
fn reparse(old: &Registry, text: &str) -> Result<Registry, EditError> {
    let mut registry = parse(old.file().path(), text)
        .map_err(EditError::Rejected)?
        .registry;
    registry.keep_reservations_of(old);
    Ok(registry)
}

/// The registry's text with `entry` appended as a `[[lock]]` table after the last byte,
/// separated by one blank line. Every earlier byte is kept; the file's line ending (`\n` or
/// `\r\n`) is used for the new lines.
pub(crate) fn append_entry(registry_text: &str, entry: &Entry) -> String {
    let mut lines = vec![
        "[[lock]]".to_owned(),
        format!("id = {}", entry.id.literal()),
        format!("constant = {}", toml_string(&entry.constant)),
        format!("worker = {}", toml_string(&entry.worker)),
    ];
    if let Some(plugin) = &entry.plugin {
        lines.push(format!("plugin = {}", toml_string(plugin)));
    }
    if entry.key == KeyShape::Family {
        lines.push("key = \"family\"".to_owned());
    }
    append_table(registry_text, &lines)
}

/// The registry's text with `lines` appended after the last byte, separated by one blank line,
/// in the file's line ending.
fn append_table(registry_text: &str, lines: &[String]) -> String {
    let nl = line_ending(registry_text);
    let mut out = String::with_capacity(registry_text.len() + 160);
    out.push_str(registry_text);
    if !out.is_empty() {
        if !out.ends_with('\n') {
            out.push_str(nl);
        }
        if !ends_with_blank_line(&out) {
            out.push_str(nl);
        }
    }
    for line in lines {
        out.push_str(line);
        out.push_str(nl);
    }
    out
}

/// The registry's text with the entry of `id` retired: `retired = "reason"` written on the
/// line after its `id`, the lines of `plugin`, `reserved` and `defined_in` removed (with any
/// comment on them). No other byte changes.
pub fn retire_entry(registry_text: &str, id: i64, reason: &str) -> Result<String, EditError> {
    let document = document(registry_text)?;
    let table =
        lock_table(&document, id).ok_or_else(|| EditError::NotRegistered(id.to_string()))?;
    if let Some(reason) = table.get("retired").and_then(toml_edit::Item::as_str) {
        return Err(EditError::AlreadyRetired {
            id: id.to_string(),
            reason: reason.to_owned(),
        });
    }
    // After the id, or a named lock's `hash`: its name and library stay as the record.
    let id_end = table
        .get("id")
        .or_else(|| table.get("hash"))
        .and_then(toml_edit::Item::span)
        .map_or(0, |span| span.end);
    let nl = line_ending(registry_text);
    let retired_line = format!("retired = {}", toml_string(reason));
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    if let Some(offset) = registry_text[id_end..].find('\n') {
        let at = id_end + offset + 1;
        edits.push((at..at, format!("{retired_line}{nl}")));
    } else {
        let at = registry_text.len();
        edits.push((at..at, format!("{nl}{retired_line}")));
    }
    for key in ["plugin", "reserved", "defined_in"] {
        if let Some(range) = key_lines(registry_text, table, key) {
            edits.push((range, String::new()));
        }
    }
    Ok(apply(registry_text, edits))
}

/// The byte range of the whole lines from the one holding `start` to the one holding `end`,
/// newline included. TOML puts every key/value pair of a table on lines of its own, so these
/// lines hold that pair and at most a comment.
fn whole_lines(text: &str, start: usize, end: usize) -> Range<usize> {
    let first = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let last = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    first..last
}

/// Core's constants file's text with the constant `name = id` appended under a comment naming
/// `worker`, shaped like the last of `siblings` (the constants the registry places in this
/// file) that the file defines, else like its last integer constant, else in the language's
/// plain form: [`lockward_lang::constants::append_constant`].
pub fn append_constant(
    language: Language,
    path: &str,
    text: &str,
    siblings: &[&str],
    name: &str,
    id: &Id,
    worker: &str,
) -> Result<String, EditError> {
    let constant = NewConstant {
        name,
        value: id.value(),
        literal: id.literal(),
        worker,
    };
    lockward_lang::constants::append_constant(language, path, text, siblings, &constant).map_err(
        |error| match error {
            WriteError::Unsupported => EditError::UnsupportedLanguage(path.to_owned()),
            WriteError::NoClassBody => EditError::NoClassBody(path.to_owned()),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejected_edit_names_the_error_not_a_warning_before_it() {
        let file = crate::SourceFile::new("lockward.toml", "id = 5\nid = 6\n");
        let warning = file.finding(
            crate::Code::ConstantOutsideBlock,
            crate::Severity::Warning,
            0..6,
            "a legacy id",
        );
        let error = file.finding(
            crate::Code::DuplicateId,
            crate::Severity::Error,
            7..13,
            "twice",
        );
        assert_eq!(
            EditError::Rejected(vec![warning, error]).to_string(),
            "the edited registry would break its rules: twice"
        );
    }

    const REGISTRY: &str = "\
# lockward.toml: the advisory lock ids of harbor.
[project]
name = \"harbor\"

[core]
constants = \"locks.py\"
block = { start = 1_001_001, end = 1_001_999 }   # core's range

[[lock]]
id = 1_001_001
constant = \"ADVISORY_LOCK_INVOICE_ROLLUP\"
worker = \"invoice rollup\"

[[lock]]
id = 1_001_002
plugin = \"billing\"   # handed over

[[lock]]
id = 1_001_004
constant = \"ADVISORY_LOCK_RELOAD_BASE\"
worker = \"reload instance lock\"
defined_in = [
    \"a.py\",   # the loader
    \"b.py\",
]
key = \"family\"
";

    fn registry(text: &str) -> Registry {
        parse("lockward.toml", text)
            .expect("valid registry")
            .registry
    }

    fn request(constant: &str) -> Request {
        Request {
            constant: constant.to_owned(),
            worker: "dunning reminders".to_owned(),
            plugin: None,
            key: KeyShape::Exact,
            reserved: None,
        }
    }

    fn entry(id: i64) -> Entry {
        Entry {
            id: Id::styled_like(id, "1_001_001"),
            constant: "ADVISORY_LOCK_DUNNING".to_owned(),
            worker: "dunning \"reminders\"\\".to_owned(),
            plugin: None,
            key: KeyShape::Exact,
        }
    }

    #[test]
    fn append_entry_keeps_every_byte_and_separates_with_one_blank_line() {
        let out = append_entry(REGISTRY, &entry(1_001_005));
        assert!(out.starts_with(REGISTRY));
        assert_eq!(
            &out[REGISTRY.len()..],
            "\n[[lock]]\nid = 1_001_005\nconstant = \"ADVISORY_LOCK_DUNNING\"\nworker = 'dunning \"reminders\"\\'\n"
        );
        let parsed = registry(&out);
        assert_eq!(
            parsed.lock(1_001_005).unwrap().worker.as_deref(),
            Some("dunning \"reminders\"\\")
        );
    }

    #[test]
    fn append_entry_handles_a_missing_trailing_newline_and_an_existing_blank_line() {
        let trimmed = REGISTRY.trim_end();
        let out = append_entry(trimmed, &entry(1_001_005));
        assert!(out.starts_with(trimmed));
        assert!(out[trimmed.len()..].starts_with("\n\n[[lock]]\n"));

        let spaced = format!("{REGISTRY}\n");
        let out = append_entry(&spaced, &entry(1_001_005));
        assert!(out[spaced.len()..].starts_with("[[lock]]\n"));
    }

    #[test]
    fn append_entry_keeps_crlf_line_endings() {
        let crlf = REGISTRY.replace('\n', "\r\n");
        let out = append_entry(&crlf, &entry(1_001_005));
        assert!(out.starts_with(&crlf));
        assert!(!out[crlf.len()..].replace("\r\n", "").contains('\n'));
        registry(&out);
    }

    #[test]
    fn append_entry_writes_a_handover_and_a_family() {
        let mut handover = entry(1_001_005);
        handover.plugin = Some("billing".to_owned());
        handover.key = KeyShape::Family;
        let out = append_entry(REGISTRY, &handover);
        let lock = registry(&out).lock(1_001_005).unwrap().clone();
        assert_eq!(
            lock.kind,
            Kind::Handover {
                plugin: "billing".to_owned()
            }
        );
        assert_eq!(lock.key, KeyShape::Family);
        assert_eq!(lock.constant.as_deref(), Some("ADVISORY_LOCK_DUNNING"));
    }

    #[test]
    fn take_skips_gaps_and_counts_plugin_ids() {
        let taken = take(
            &registry(REGISTRY),
            &request("ADVISORY_LOCK_DUNNING"),
            &[1_001_010, 5],
            Some("X = 1\n"),
        )
        .unwrap();
        assert_eq!(taken.id.literal(), "1_001_011");
        assert_eq!(taken.next_free.unwrap().literal(), "1_001_012");
        assert_eq!(
            taken.constants_text.unwrap(),
            "X = 1\n# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_011\n"
        );
        assert_eq!(taken.registry.lock(1_001_011).unwrap().kind, Kind::Constant);
    }

    #[test]
    fn take_refuses_a_registered_name_an_invalid_name_and_a_defined_name() {
        let registry = registry(REGISTRY);
        let error = take(
            &registry,
            &request("ADVISORY_LOCK_INVOICE_ROLLUP"),
            &[],
            Some(""),
        )
        .unwrap_err();
        assert!(matches!(
            error,
            EditError::AlreadyRegistered {
                kind: "constant",
                ..
            }
        ));
        let error = take(&registry, &request("1_BAD"), &[], Some("")).unwrap_err();
        assert!(matches!(error, EditError::InvalidConstantName(_)));
        for member in ["LOCKS[\"reindex\"]", "Locks.REINDEX", "Locks::Reindex"] {
            let error = take(&registry, &request(member), &[], Some("")).unwrap_err();
            assert!(matches!(error, EditError::MemberName(_)), "{member}");
            assert!(
                error.to_string().contains("plain constants only"),
                "{error}"
            );
        }
        let error = take(
            &registry,
            &request("ADVISORY_LOCK_DUNNING"),
            &[],
            Some("# x\nADVISORY_LOCK_DUNNING = 42\n"),
        )
        .unwrap_err();
        assert!(matches!(error, EditError::AlreadyDefined { line: 2, .. }));
        let error = take(&registry, &request("ADVISORY_LOCK_DUNNING"), &[], None).unwrap_err();
        assert!(matches!(error, EditError::MissingConstantsFile(_)));
    }

    #[test]
    fn take_refuses_a_name_that_ruby_would_read_as_a_local_variable() {
        let text = REGISTRY.replace("constants = \"locks.py\"", "constants = \"locks.rb\"");
        let error = take(
            &registry(&text),
            &request("advisory_lock_dunning"),
            &[],
            Some(""),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "locks.rb: `advisory_lock_dunning` would not be a constant there: a Ruby constant starts with an uppercase letter"
        );
        // Python takes the same name as it is.
        take(
            &registry(REGISTRY),
            &request("advisory_lock_dunning"),
            &[],
            Some(""),
        )
        .unwrap();
    }

    #[test]
    fn take_reports_a_used_up_block() {
        let text = REGISTRY.replace("end = 1_001_999", "end = 1_001_004");
        let error = take(&registry(&text), &request("ADVISORY_LOCK_X"), &[], Some("")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "core's block 1_001_001..=1_001_004 is used up: every id in it is recorded"
        );
    }

    #[test]
    fn a_handover_take_leaves_core_constants_alone() {
        let mut request = request("BILLING_LOCK");
        request.plugin = Some("billing".to_owned());
        let taken = take(&registry(REGISTRY), &request, &[], None).unwrap();
        assert!(taken.constants_text.is_none());
        assert_eq!(taken.id.literal(), "1_001_005");
    }

    /// A lock taken by name has no `id` line: its entry is found by the key its library
    /// computes, and keeps its name and library as the record once retired.
    #[test]
    fn retire_finds_a_named_lock_by_its_key_and_keeps_the_name() {
        let text = format!(
            "{REGISTRY}\n[[lock]]\nname = \"reindex\"\nhash = \"django-pglocks\"\nworker = \"search\"\n"
        );
        // zlib.crc32(b"reindex") is 4176679049: django-pglocks' signed key -118288247.
        let out = retire_entry(&text, -118_288_247, "gone").unwrap();
        assert!(
            out.ends_with("name = \"reindex\"\nhash = \"django-pglocks\"\nretired = \"gone\"\nworker = \"search\"\n"),
            "{out}"
        );
        let registry = registry(&out);
        let lock = registry.lock(-118_288_247).unwrap();
        assert_eq!(
            lock.kind,
            Kind::Retired {
                reason: "gone".to_owned()
            }
        );
        assert!(matches!(
            take_named(&registry, "reindex", "django-pglocks", "again", &[]),
            Err(EditError::NameKeyTaken { .. })
        ));
    }

    #[test]
    fn retire_rewrites_only_the_entry_lines() {
        let out = retire_entry(REGISTRY, 1_001_004, "replaced by \"x\"").unwrap();
        let expected = REGISTRY.replace(
            "id = 1_001_004\n",
            "id = 1_001_004\nretired = 'replaced by \"x\"'\n",
        );
        let expected = expected.replace(
            "defined_in = [\n    \"a.py\",   # the loader\n    \"b.py\",\n]\n",
            "",
        );
        assert_eq!(out, expected);
        let lock = registry(&out).lock(1_001_004).unwrap().clone();
        assert_eq!(lock.constant.as_deref(), Some("ADVISORY_LOCK_RELOAD_BASE"));
        assert_eq!(lock.key, KeyShape::Family);

        let out = retire_entry(REGISTRY, 1_001_002, "billing is gone").unwrap();
        assert_eq!(
            out,
            REGISTRY.replace(
                "id = 1_001_002\nplugin = \"billing\"   # handed over\n",
                "id = 1_001_002\nretired = \"billing is gone\"\n"
            )
        );
    }

    #[test]
    fn retire_handles_an_entry_at_the_end_without_newline() {
        let text = format!("{REGISTRY}[[lock]]\nid = 1_001_009\nplugin = \"x\"");
        let out = retire_entry(&text, 1_001_009, "gone").unwrap();
        assert!(out.ends_with("id = 1_001_009\nretired = \"gone\"\n"));
        registry(&out);
    }

    #[test]
    fn retire_refuses_twice_and_unknown_ids() {
        let registry = registry(REGISTRY);
        let lock = registry.find("1001001").unwrap().clone();
        let retired = retire(&registry, &lock, "done").unwrap();
        let again = retired
            .registry
            .find("ADVISORY_LOCK_INVOICE_ROLLUP")
            .unwrap();
        let error = retire(&retired.registry, again, "done").unwrap_err();
        assert_eq!(error.to_string(), "id 1_001_001 is already retired: done");
        assert!(matches!(
            registry.find("1_001_777"),
            Err(crate::FindError::NotRegistered(_))
        ));
        assert!(matches!(
            retire(&registry, &lock, " "),
            Err(EditError::Empty(_))
        ));
    }

    #[test]
    fn an_entry_appended_after_other_tables_still_belongs_to_the_locks() {
        let text = format!("{REGISTRY}\n[scan]\nexclude = [\"vendor/**\"]\n");
        let out = append_entry(&text, &entry(1_001_005));
        let registry = registry(&out);
        assert_eq!(registry.lock(1_001_005).unwrap().kind, Kind::Constant);
        assert_eq!(
            registry.scan_settings().exclude,
            vec!["vendor/**".to_owned()]
        );
    }

    #[test]
    fn retiring_in_a_file_that_is_not_toml_names_the_syntax_error() {
        let error = retire_entry("[[lock]\nid = 1", 1, "x").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the edited registry would break its rules: invalid TOML"),
            "{error}"
        );
    }

    #[test]
    fn a_definition_in_a_docstring_comment_or_raw_string_does_not_block_take() {
        for (path, text) in [
            (
                "locks.py",
                "\"\"\"Locks.\n\nADVISORY_LOCK_X = 5\n\"\"\"\nA_LOCK_ID = 1\n",
            ),
            (
                "locks.js",
                "/* ADVISORY_LOCK_X = 5 */\nexport const A_LOCK_ID = 1;\n",
            ),
            (
                "locks.go",
                "package locks\n\nconst doc = `\nADVISORY_LOCK_X = 5\n`\n",
            ),
        ] {
            let text_registry = REGISTRY.replace("locks.py", path);
            let taken = take(
                &registry(&text_registry),
                &request("ADVISORY_LOCK_X"),
                &[],
                Some(text),
            )
            .unwrap_or_else(|error| panic!("{path}: {error}"));
            let written = taken.constants_text.unwrap();
            // Appended after the file, and the new line is the definition `take` sees next time.
            assert!(written.starts_with(text), "{written}");
            let new_line = 1 + written
                .lines()
                .position(|line| line.contains("ADVISORY_LOCK_X") && line.contains("1_001_005"))
                .unwrap();
            assert_eq!(
                find_definition(
                    Language::from_path(path).unwrap(),
                    &written,
                    "ADVISORY_LOCK_X"
                ),
                Some(new_line),
                "{path}: {written}"
            );
        }
        // The same line in code does block it.
        let error = take(
            &registry(REGISTRY),
            &request("ADVISORY_LOCK_X"),
            &[],
            Some("\"\"\"Locks.\"\"\"\nADVISORY_LOCK_X = 5\n"),
        )
        .unwrap_err();
        assert!(matches!(error, EditError::AlreadyDefined { line: 2, .. }));
    }

    #[test]
    fn a_rake_file_is_ruby_to_take_and_sql_is_refused_where_the_registry_names_it() {
        let rake = REGISTRY.replace("locks.py", "lib/tasks/locks.rake");
        let taken = take(&registry(&rake), &request("ADVISORY_LOCK_X"), &[], Some("")).unwrap();
        assert_eq!(
            taken.constants_text.unwrap(),
            "# dunning reminders\nADVISORY_LOCK_X = 1_001_005\n"
        );
        let sql = REGISTRY.replace("locks.py", "db/locks.sql");
        let findings = parse("lockward.toml", &sql).unwrap_err();
        assert!(
            findings
                .iter()
                .any(|finding| finding.code == crate::Code::UnsupportedConstantsLanguage),
            "{findings:?}"
        );
    }
}
