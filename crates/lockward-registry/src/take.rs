//! The edits `lockward take` and `lockward retire` make, as pure functions from text to text.
//!
//! Taking an id appends one `[[lock]]` entry after the last byte of the registry and one constant
//! to core's constants file; retiring rewrites the lines of one entry. Every other byte of both
//! files stays exactly as it was (comments, blank lines, key order, line endings), because these
//! files are written by people and reviewed as diffs: a take should read as a few added lines,
//! nothing else. Each edit of the registry is parsed again before it is returned, so an edit
//! that would break a rule is refused instead of written.
//!
//! The new constant copies the shape of the last simple integer constant already in the file
//! (indentation, `pub const NAME: i64 =`, a Go `const (` block, a Ruby module, a Java class body,
//! a suffix like `L` or `i64`), so it lands beside its siblings and compiles where they do. A
//! file with no such constant gets the language's plain form: at the end of the file, or inside
//! the class body for Java and a Kotlin `object`.
//!
//! Nothing here reads or writes files: the caller holds the lock, reads, and writes atomically.

use std::fmt::Write as _;
use std::ops::Range;

use crate::finding::Finding;
use crate::id::{Id, KeyShape};
use crate::parse::{is_identifier, is_member_name, parse};
use crate::registry::{Kind, Lock, Registry, Source};

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
        "`{0}` names a member of a collection or an enum; `take` writes plain constants only: add the member to its collection in the code and register it by hand with `constant = {0:?}`"
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
    #[error("{0}: lockward writes constants in {names} files, not this one", names = Language::NAMES)]
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
            .ok_or_else(|| EditError::UnsupportedLanguage(constants_path.to_owned()))?;
        if language.reserves(&request.constant) {
            return Err(EditError::ReservedWord {
                path: constants_path.to_owned(),
                constant: request.constant.clone(),
                language: language.name(),
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
        if let Some(line) = find_definition(text, &request.constant) {
            return Err(EditError::AlreadyDefined {
                path: constants_path.to_owned(),
                constant: request.constant.clone(),
                line,
            });
        }
        Some((language, text))
    };

    let block = &registry.core().block;
    let id = registry
        .next_free_id(also_taken.iter().copied())
        .ok_or_else(|| EditError::BlockUsedUp {
            start: block.start.to_string(),
            end: block.end.to_string(),
        })?;
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
    let registry_text = append_entry(registry.file().text(), &entry);
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

/// The entry `target` names: an id in any TOML integer form (`1_001_003`, `1001003`,
/// `0xF462B`), or a constant's name.
pub fn find_lock<'a>(registry: &'a Registry, target: &str) -> Result<&'a Lock, EditError> {
    let not_registered = || EditError::NotRegistered(target.to_owned());
    if let Some(value) = parse_id(target) {
        return registry.lock(value).ok_or_else(not_registered);
    }
    let mut named = registry
        .locks()
        .iter()
        .filter(|lock| lock.constant.as_deref() == Some(target));
    let first = named.next().ok_or_else(not_registered)?;
    if named.next().is_some() {
        return Err(EditError::Ambiguous(target.to_owned()));
    }
    Ok(first)
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

/// Parses an edited registry and carries over the reservations `old` had from other branches.
fn reparse(old: &Registry, text: &str) -> Result<Registry, EditError> {
    let mut registry = parse(old.file().path(), text)
        .map_err(EditError::Rejected)?
        .registry;
    registry.keep_reservations_of(old);
    Ok(registry)
}

/// Parses an id as TOML writes integers: decimal with `_` separators and an optional sign, or
/// `0x`, `0o`, `0b` with digits. `None` for anything else.
pub fn parse_id(text: &str) -> Option<i64> {
    let text = text.trim();
    let digits_ok = |digits: &str, radix: u32| {
        !digits.is_empty()
            && !digits.starts_with('_')
            && !digits.ends_with('_')
            && !digits.contains("__")
            && digits.chars().all(|c| c == '_' || c.is_digit(radix))
    };
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = text.strip_prefix(prefix) {
            return digits_ok(digits, radix)
                .then(|| i64::from_str_radix(&digits.replace('_', ""), radix).ok())
                .flatten();
        }
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits_ok(unsigned, 10)
        .then(|| text.replace('_', "").parse().ok())
        .flatten()
}

/// The registry's text with `entry` appended as a `[[lock]]` table after the last byte,
/// separated by one blank line. Every earlier byte is kept; the file's line ending (`\n` or
/// `\r\n`) is used for the new lines.
pub fn append_entry(registry_text: &str, entry: &Entry) -> String {
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
    let mut line = |text: String| {
        out.push_str(&text);
        out.push_str(nl);
    };
    line("[[lock]]".to_owned());
    line(format!("id = {}", entry.id.literal()));
    line(format!("constant = {}", toml_string(&entry.constant)));
    line(format!("worker = {}", toml_string(&entry.worker)));
    if let Some(plugin) = &entry.plugin {
        line(format!("plugin = {}", toml_string(plugin)));
    }
    if entry.key == KeyShape::Family {
        line("key = \"family\"".to_owned());
    }
    out
}

/// The registry's text with the entry of `id` retired: `retired = "reason"` written on the
/// line after its `id`, the lines of `plugin`, `reserved` and `defined_in` removed (with any
/// comment on them). No other byte changes.
pub fn retire_entry(registry_text: &str, id: i64, reason: &str) -> Result<String, EditError> {
    let document = toml_edit::Document::parse(registry_text).map_err(|_| {
        match parse("lockward.toml", registry_text) {
            Err(findings) => EditError::Rejected(findings),
            Ok(_) => unreachable!("text toml_edit cannot parse never validates"),
        }
    })?;
    let table = document
        .as_table()
        .get("lock")
        .and_then(toml_edit::Item::as_array_of_tables)
        .and_then(|locks| {
            locks
                .iter()
                .find(|table| table.get("id").and_then(toml_edit::Item::as_integer) == Some(id))
        })
        .ok_or_else(|| EditError::NotRegistered(id.to_string()))?;
    if let Some(reason) = table.get("retired").and_then(toml_edit::Item::as_str) {
        return Err(EditError::AlreadyRetired {
            id: id.to_string(),
            reason: reason.to_owned(),
        });
    }
    let id_end = table
        .get("id")
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
        let (Some(key_span), Some(value_span)) = (
            table.key(key).and_then(toml_edit::Key::span),
            table.get(key).and_then(toml_edit::Item::span),
        ) else {
            continue;
        };
        edits.push((
            whole_lines(registry_text, key_span.start, value_span.end),
            String::new(),
        ));
    }
    // An insertion sorts before a removal starting at the same byte: both keep their place.
    edits.sort_by_key(|(range, _)| (range.start, range.end));
    let mut out = String::with_capacity(registry_text.len() + retired_line.len() + 2);
    let mut cursor = 0;
    for (range, replacement) in edits {
        out.push_str(&registry_text[cursor..range.start]);
        out.push_str(&replacement);
        cursor = range.end;
    }
    out.push_str(&registry_text[cursor..]);
    Ok(out)
}

/// The byte range of the whole lines from the one holding `start` to the one holding `end`,
/// newline included. TOML puts every key/value pair of a table on lines of its own, so these
/// lines hold that pair and at most a comment.
fn whole_lines(text: &str, start: usize, end: usize) -> Range<usize> {
    let first = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let last = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    first..last
}

/// `"\r\n"` when the text's first line ends that way, `"\n"` otherwise.
fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// Whether the line before the text's final newline holds only whitespace.
fn ends_with_blank_line(text: &str) -> bool {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let last_line = body.rfind('\n').map_or(body, |i| &body[i + 1..]);
    last_line.trim().is_empty()
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A language lockward writes core's constants in, told by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// `.py`, `.pyi`.
    Python,
    /// `.rs`.
    Rust,
    /// `.go`.
    Go,
    /// `.ts`, `.tsx`, `.mts`, `.cts`.
    TypeScript,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`.
    JavaScript,
    /// `.rb`.
    Ruby,
    /// `.java`.
    Java,
    /// `.kt`, `.kts`.
    Kotlin,
}

impl Language {
    /// The language of a file, by its extension.
    pub fn from_path(path: &str) -> Option<Self> {
        let extension = std::path::Path::new(path)
            .extension()?
            .to_str()?
            .to_ascii_lowercase();
        Some(match extension.as_str() {
            "py" | "pyi" => Self::Python,
            "rs" => Self::Rust,
            "go" => Self::Go,
            "ts" | "tsx" | "mts" | "cts" => Self::TypeScript,
            "js" | "jsx" | "mjs" | "cjs" => Self::JavaScript,
            "rb" => Self::Ruby,
            "java" => Self::Java,
            "kt" | "kts" => Self::Kotlin,
            _ => return None,
        })
    }

    /// The languages, as messages list them.
    pub const NAMES: &'static str = "Python, Rust, Go, TypeScript/JavaScript, Ruby, Java or Kotlin";

    /// The language's name, as messages write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Python => "Python",
            Self::Rust => "Rust",
            Self::Go => "Go",
            Self::TypeScript => "TypeScript",
            Self::JavaScript => "JavaScript",
            Self::Ruby => "Ruby",
            Self::Java => "Java",
            Self::Kotlin => "Kotlin",
        }
    }

    /// Whether `name` is a reserved word of the language, which cannot name a constant: its
    /// keywords (`fn`, `class`, `func`, `None`, `True`), the words it reserves for later
    /// (Rust's `abstract`, Java's `goto`), and `_` where it names nothing (Rust, Go, Java,
    /// Kotlin). Names the language lets a declaration shadow (Go's `nil`, JavaScript's
    /// `undefined`) and contextual keywords (Python's `match`, Java's `var`) are not reserved.
    pub fn reserves(self, name: &str) -> bool {
        self.reserved_words().split(' ').any(|word| word == name)
    }

    /// The reserved words, separated by spaces.
    fn reserved_words(self) -> &'static str {
        match self {
            Self::Python => concat!(
                "False None True and as assert async await break class continue def del elif ",
                "else except finally for from global if import in is lambda nonlocal not or ",
                "pass raise return try while with yield __debug__",
            ),
            Self::Rust => concat!(
                "_ as async await break const continue crate dyn else enum extern false fn for ",
                "gen if impl in let loop match mod move mut pub ref return self Self static ",
                "struct super trait true type unsafe use where while abstract become box do ",
                "final macro override priv try typeof unsized virtual yield",
            ),
            Self::Go => concat!(
                "_ break case chan const continue default defer else fallthrough for func go ",
                "goto if import interface map package range return select struct switch type ",
                "var",
            ),
            // A module is strict code: the strict-mode reserved words and `eval`/`arguments`
            // cannot be bound there either.
            Self::TypeScript | Self::JavaScript => concat!(
                "arguments await break case catch class const continue debugger default delete ",
                "do else enum eval export extends false finally for function if implements ",
                "import in instanceof interface let new null package private protected public ",
                "return static super switch this throw true try typeof var void while with ",
                "yield",
            ),
            Self::Ruby => concat!(
                "BEGIN END __ENCODING__ __END__ __FILE__ __LINE__ alias and begin break case ",
                "class def do else elsif end ensure false for if in module next nil not ",
                "or redo rescue retry return self super then true undef unless until when while ",
                "yield",
            ),
            Self::Java => concat!(
                "_ abstract assert boolean break byte case catch char class const continue ",
                "default do double else enum extends false final finally float for goto if ",
                "implements import instanceof int interface long native new null package ",
                "private protected public return short static strictfp super switch ",
                "synchronized this throw throws transient true try void volatile while",
            ),
            Self::Kotlin => concat!(
                "_ as break class continue do else false for fun if in interface is null object ",
                "package return super this throw true try typealias typeof val var when while",
            ),
        }
    }

    fn line_comment(self) -> &'static str {
        match self {
            Self::Python | Self::Ruby => "#",
            _ => "//",
        }
    }

    /// The comment naming the worker, above the constant: one line, whatever the text holds.
    /// Control characters (a NUL is an error in Go and Python source) and a byte order mark
    /// (an error in Go past the file's start) become spaces, and runs of whitespace (line
    /// breaks included, U+2028 too, which ends a line in JavaScript) one space.
    fn doc_comment(self, worker: &str) -> String {
        let worker = worker
            .replace(|c: char| c.is_control() || c == '\u{FEFF}', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        match self {
            Self::Python | Self::Ruby => format!("# {worker}"),
            Self::Rust => format!("/// {worker}"),
            Self::Go | Self::TypeScript | Self::JavaScript => format!("// {worker}"),
            Self::Java => format!(
                "/** {} */",
                no_unicode_escapes(&block_comment_safe(&worker))
            ),
            Self::Kotlin => format!("/** {} */", block_comment_safe(&worker)),
        }
    }
}

/// `text` with a space between the characters of every `*/` (which would end a block comment
/// early) and `/*` (which opens a nested comment in Kotlin, leaving the outer one unclosed).
fn block_comment_safe(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous = None;
    for c in text.chars() {
        if matches!((previous, c), (Some('*'), '/') | (Some('/'), '*')) {
            out.push(' ');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

/// `text` with every backslash that Java would read as the start of a Unicode escape (`\u`
/// after an even number of backslashes) doubled. Java decodes those escapes before it finds
/// comments, so `\u002A/` would end the comment and `\users` is a compile error even there.
fn no_unicode_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut backslashes = 0;
    for c in text.chars() {
        if c == 'u' && backslashes % 2 == 1 {
            out.push('\\');
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        out.push(c);
    }
    out
}

/// Where a name is defined as a constant in `text`: the 1-based line of the first
/// `NAME = ...` assignment in any of the supported languages' forms (`pub const NAME: i64 =`,
/// `const NAME =`, `export const NAME =`, `module.exports.NAME =`,
/// `public static final long NAME =`, `const val NAME: Long =`, a Go `const (` block line).
/// Uses of the name (`f(NAME)`, `x = NAME`) and comments do not count.
pub fn find_definition(text: &str, name: &str) -> Option<usize> {
    text.lines().enumerate().find_map(|(index, line)| {
        let trimmed = line.trim_start();
        if ["#", "//", "/*", "*"]
            .iter()
            .any(|marker| trimmed.starts_with(marker))
        {
            return None;
        }
        word_occurrences(line, name)
            .any(|start| defines_at(line, start, name.len()))
            .then_some(index + 1)
    })
}

fn word_occurrences<'a>(line: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(word).filter_map(move |(start, _)| {
        let before = line[..start].chars().next_back();
        let after = line[start + word.len()..].chars().next();
        (!before.is_some_and(is_ident) && !after.is_some_and(is_ident)).then_some(start)
    })
}

/// Whether the name at `start..start + len` of `line` is the target of an assignment: nothing
/// before it assigns or calls, and after it come at most a type and then `=` (not `==`, `=>`).
fn defines_at(line: &str, start: usize, len: usize) -> bool {
    let before = without_restricted_visibility(&line[..start]);
    if before.contains(['=', '(', '"', '\'']) {
        return false;
    }
    let after = &line[start + len..];
    let Some(eq) = after.find('=') else {
        return false;
    };
    let between = after[..eq].trim();
    let type_like = between.is_empty()
        || between.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | ' ' | '.' | '[' | ']' | '<' | '>')
        });
    let next = after[eq + 1..].chars().next();
    type_like && !matches!(next, Some('=' | '>')) && !between.ends_with(['!', '<', '>'])
}

/// `code` with a Rust restricted visibility (`pub(crate)`, `pub(super)`, `pub(in path)`) read
/// as `pub`, so that its parentheses do not make a definition look like a call.
fn without_restricted_visibility(code: &str) -> std::borrow::Cow<'_, str> {
    let Some(open) = code.find("pub(") else {
        return code.into();
    };
    let Some(close) = code[open..].find(')') else {
        return code.into();
    };
    format!("{}pub{}", &code[..open], &code[open + close + 1..]).into()
}

/// The shape of a simple integer constant line, to be copied for a new constant.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Shape<'a> {
    /// The constant's name.
    name: &'a str,
    /// Everything before the name: indentation and keywords (`    pub const `, `\t`).
    head: &'a str,
    /// From the end of the name to the start of the literal (`: i64 = `, ` = `).
    between: &'a str,
    /// The literal's suffix (`L`, `i64`, `_i64`, `n`), if any.
    suffix: &'a str,
    /// The code after the literal, without a trailing comment (`;`).
    tail: &'a str,
    /// Whether a blank line separates this constant (with its comments) from what is above.
    spaced: bool,
}

impl Shape<'_> {
    fn indent(&self) -> &str {
        let code = self.head.trim_start();
        &self.head[..self.head.len() - code.len()]
    }
}

/// Recognises `line` as a simple integer constant definition in `language` and returns its
/// shape. `spaced` is left false.
fn shape_of(line: &str, language: Language) -> Option<Shape<'_>> {
    let trimmed = line.trim_start();
    if trimmed.starts_with(language.line_comment()) || trimmed.starts_with(['*', '/']) {
        return None;
    }
    let eq = line.find('=')?;
    if line[eq + 1..].starts_with(['=', '>']) {
        return None;
    }
    let left = &line[..eq];
    if !without_restricted_visibility(left)
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || " \t_:.[]<>".contains(c))
    {
        return None;
    }
    let name = name_in(left, language)?;
    if !is_identifier(&left[name.clone()])
        || !left[name.clone()].contains(|c: char| c.is_ascii_uppercase())
    {
        return None;
    }

    let right = &line[eq + 1..];
    let code = match right.find(language.line_comment()) {
        Some(comment) => &right[..comment],
        None => right,
    }
    .trim_end();
    let literal_start = eq + 1 + (code.len() - code.trim_start().len());
    let code = code.trim_start();
    let (body, rest) = split_literal(code)?;
    let suffix_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (suffix, tail) = rest.split_at(suffix_len);
    if !matches!(tail.trim(), "" | ";") {
        return None;
    }
    // `1_001_001_i64`: the separator before the suffix belongs to the suffix's style.
    let suffix_start = literal_start + body.len();
    let suffix = if body.ends_with('_') {
        &line[suffix_start - 1..suffix_start + suffix.len()]
    } else {
        suffix
    };
    Some(Shape {
        name: &line[name.clone()],
        head: &line[..name.start],
        between: &line[name.end..literal_start],
        suffix,
        tail: tail.trim(),
        spaced: false,
    })
}

/// The byte range of the constant's name in the left-hand side of an assignment.
fn name_in(left: &str, language: Language) -> Option<Range<usize>> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if language == Language::Go {
        // `const NAME int64`, `NAME int64` or `NAME` in a `const (` block: the name comes first.
        let code_start = left.len() - left.trim_start().len();
        let mut start = code_start;
        if left[start..].starts_with("const ") {
            start += "const ".len();
            start += left[start..].len() - left[start..].trim_start().len();
        }
        let len = left[start..]
            .find(|c: char| !is_ident(c))
            .unwrap_or(left.len() - start);
        let first_word = &left[code_start..];
        if ["var ", "type ", "func "]
            .iter()
            .any(|keyword| first_word.starts_with(keyword))
        {
            return None;
        }
        return (len > 0).then(|| start..start + len);
    }
    // The name is the last word before the `:` of a type annotation, or before the `=`.
    let before_type = left.find(':').map_or(left, |colon| &left[..colon]);
    let end = before_type.trim_end().len();
    let start = before_type[..end]
        .rfind(|c: char| !is_ident(c))
        .map_or(0, |i| i + 1);
    (start < end).then_some(start..end)
}

/// Splits an integer literal (`-1_001_001`, `0x6E69`) from what follows it.
fn split_literal(code: &str) -> Option<(&str, &str)> {
    let unsigned = code.strip_prefix('-').unwrap_or(code);
    let sign = code.len() - unsigned.len();
    let (prefix, radix) = if unsigned.starts_with("0x") || unsigned.starts_with("0X") {
        (2, 16)
    } else {
        (0, 10)
    };
    let digits = &unsigned[prefix..];
    let len = digits
        .find(|c: char| !(c == '_' || c.is_digit(radix)))
        .unwrap_or(digits.len());
    if len == 0 || !digits.starts_with(|c: char| c.is_digit(radix)) {
        return None;
    }
    Some(code.split_at(sign + prefix + len))
}

/// Core's constants file's text with the constant `name = id` appended, under a comment naming
/// `worker`, in `language`: after the last simple integer constant in the file and shaped like
/// it (the last of `siblings`, the constants the registry places in this file, when the file
/// defines one: an unrelated constant further down, in a test module say, is no model), or in
/// the language's plain form when there is none.
pub fn append_constant(
    language: Language,
    path: &str,
    text: &str,
    siblings: &[&str],
    name: &str,
    id: &Id,
    worker: &str,
) -> Result<String, EditError> {
    let nl = line_ending(text);
    let comment = language.doc_comment(worker);
    // CommonJS exports what is assigned to `module.exports`, often an object built at the end
    // of the file: only an assignment after it exports the new constant.
    let commonjs = language == Language::JavaScript && is_commonjs(path, text);
    let shapes: Vec<(usize, Range<usize>, Shape<'_>)> = lines_with_offsets(text)
        .enumerate()
        .filter(|_| !commonjs)
        .filter_map(|(index, (range, line))| Some((index, range, shape_of(line, language)?)))
        .collect();
    let siblings: std::collections::HashSet<&str> = siblings.iter().copied().collect();
    let last_shape = shapes
        .iter()
        .rev()
        .find(|(_, _, shape)| siblings.contains(shape.name))
        .or(shapes.last())
        .cloned();
    if let Some((index, range, mut shape)) = last_shape {
        shape.spaced = spaced_above(text, index, language);
        let indent = shape.indent();
        let literal = literal_for(language, id, shape.suffix);
        // `const A = 1; export { A };`: the sibling is exported by a list lockward does not
        // edit, so the new constant exports itself.
        let export = if matches!(language, Language::JavaScript | Language::TypeScript)
            && ["const ", "let ", "var "]
                .iter()
                .any(|keyword| shape.head.trim_start().starts_with(keyword))
        {
            "export "
        } else {
            ""
        };
        let declaration = format!(
            "{indent}{export}{}{name}{}{literal}{}",
            shape.head.trim_start(),
            shape.between,
            shape.tail
        );
        let at = range.end;
        let mut insert = String::new();
        if !text[..at].ends_with('\n') {
            insert.push_str(nl);
        }
        if shape.spaced {
            insert.push_str(nl);
        }
        let _ = write!(insert, "{indent}{comment}{nl}{declaration}");
        if text[..at].ends_with('\n') {
            insert.push_str(nl);
        }
        return Ok(splice(text, at, &insert));
    }

    let literal = literal_for(language, id, "");
    let (declaration, inside_body) = match language {
        Language::Python | Language::Ruby => (format!("{name} = {literal}"), false),
        Language::Rust => (format!("pub const {name}: i64 = {literal};"), false),
        Language::Go => (format!("const {name} = {literal}"), false),
        Language::JavaScript if commonjs => (format!("module.exports.{name} = {literal};"), false),
        Language::TypeScript | Language::JavaScript => {
            (format!("export const {name} = {literal};"), false)
        }
        Language::Java => (
            format!("public static final long {name} = {literal};"),
            true,
        ),
        Language::Kotlin => (
            format!("const val {name}: Long = {literal}"),
            has_object(text),
        ),
    };
    if !inside_body {
        let mut out = String::with_capacity(text.len() + comment.len() + declaration.len() + 4);
        out.push_str(text);
        if !out.is_empty() {
            if !out.ends_with('\n') {
                out.push_str(nl);
            }
            if !ends_with_blank_line(&out) {
                out.push_str(nl);
            }
        }
        let _ = write!(out, "{comment}{nl}{declaration}{nl}");
        return Ok(out);
    }
    // Before the closing brace of the last class or object in the file.
    let brace = text
        .rfind('}')
        .ok_or_else(|| EditError::NoClassBody(path.to_owned()))?;
    let line_start = text[..brace].rfind('\n').map_or(0, |i| i + 1);
    let brace_indent = &text[line_start..brace];
    let (at, lead) = if brace_indent.trim().is_empty() {
        (line_start, "")
    } else {
        // `class Locks { }` on one line: break the line before the brace.
        (brace, nl)
    };
    let indent = format!("{}    ", if lead.is_empty() { brace_indent } else { "" });
    let above = &text[..at];
    let spacer = if above.trim_end().ends_with('{') || ends_with_blank_line(above) {
        ""
    } else {
        nl
    };
    let insert = format!("{lead}{spacer}{indent}{comment}{nl}{indent}{declaration}{nl}");
    Ok(splice(text, at, &insert))
}

fn splice(text: &str, at: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..at]);
    out.push_str(insert);
    out.push_str(&text[at..]);
    out
}

/// The id's literal for a constant in `language`: the registry's style (`1_001_006`, hex) with
/// `suffix`, plus `L` where Java or Kotlin need a long and `n` where a JavaScript number would
/// lose precision.
fn literal_for(language: Language, id: &Id, suffix: &str) -> String {
    const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
    let suffix = match language {
        Language::Java | Language::Kotlin if suffix.is_empty() => "L",
        Language::TypeScript | Language::JavaScript
            if suffix.is_empty() && id.value().unsigned_abs() > MAX_SAFE_INTEGER.unsigned_abs() =>
        {
            "n"
        }
        _ => suffix,
    };
    format!("{}{suffix}", id.literal())
}

/// Whether a JavaScript file is CommonJS: `.cjs`, or a file that assigns `module.exports` /
/// `exports.` and has no `export` statement.
fn is_commonjs(path: &str, text: &str) -> bool {
    if path.to_ascii_lowercase().ends_with(".cjs") {
        return true;
    }
    let starts = |prefix: &str| {
        text.lines()
            .any(|line| line.trim_start().starts_with(prefix))
    };
    (text.contains("module.exports") || starts("exports.")) && !starts("export ")
}

/// Whether a Kotlin file declares an `object` to hold its constants.
fn has_object(text: &str) -> bool {
    text.lines().any(|line| {
        let mut words = line.split_whitespace();
        words.any(|word| word == "object") && line.trim_end().ends_with('{')
    })
}

/// Whether the line above constant line `index` (and the comments right above it) is blank.
fn spaced_above(text: &str, index: usize, language: Language) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let mut above = index;
    while above > 0 {
        above -= 1;
        let line = lines[above].trim();
        if line.is_empty() {
            return true;
        }
        let is_comment = line.starts_with(language.line_comment())
            || line.starts_with("/*")
            || line.starts_with('*')
            || line.starts_with("#[")
            || line.starts_with('@');
        if !is_comment {
            return false;
        }
    }
    false
}

/// Each line's byte range (newline included) and its text (newline and `\r` excluded).
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (Range<usize>, &str)> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        let line = text[start..end].trim_end_matches(['\n', '\r']);
        let range = start..end;
        start = end;
        Some((range, line))
    })
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
            "\n[[lock]]\nid = 1_001_005\nconstant = \"ADVISORY_LOCK_DUNNING\"\nworker = \"dunning \\\"reminders\\\"\\\\\"\n"
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

    #[test]
    fn retire_rewrites_only_the_entry_lines() {
        let out = retire_entry(REGISTRY, 1_001_004, "replaced by \"x\"").unwrap();
        let expected = REGISTRY.replace(
            "id = 1_001_004\n",
            "id = 1_001_004\nretired = \"replaced by \\\"x\\\"\"\n",
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
        let lock = find_lock(&registry, "1001001").unwrap().clone();
        let retired = retire(&registry, &lock, "done").unwrap();
        let again = find_lock(&retired.registry, "ADVISORY_LOCK_INVOICE_ROLLUP").unwrap();
        let error = retire(&retired.registry, again, "done").unwrap_err();
        assert_eq!(error.to_string(), "id 1_001_001 is already retired: done");
        assert!(matches!(
            find_lock(&registry, "1_001_777"),
            Err(EditError::NotRegistered(_))
        ));
        assert!(matches!(
            retire(&registry, &lock, " "),
            Err(EditError::Empty(_))
        ));
    }

    #[test]
    fn ids_parse_in_every_toml_integer_form() {
        assert_eq!(parse_id("1_001_001"), Some(1_001_001));
        assert_eq!(parse_id("0x6E697374"), Some(0x6E69_7374));
        assert_eq!(parse_id("-5"), Some(-5));
        assert_eq!(parse_id("0b101"), Some(5));
        assert_eq!(parse_id("1__0"), None);
        assert_eq!(parse_id("_1"), None);
        assert_eq!(parse_id("ADVISORY"), None);
        assert_eq!(parse_id("99999999999999999999"), None);
    }

    fn constant(path: &str, text: &str) -> String {
        let language = Language::from_path(path).unwrap();
        append_constant(
            language,
            path,
            text,
            &["A_LOCK_ID", "ADVISORY_LOCK_A"],
            "ADVISORY_LOCK_DUNNING",
            &Id::styled_like(1_001_006, "1_001_001"),
            "dunning\nreminders",
        )
        .unwrap()
    }

    #[test]
    fn constants_in_an_empty_file_take_each_languages_plain_form() {
        let cases = [
            (
                "locks.py",
                "# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_006\n",
            ),
            (
                "locks.rb",
                "# dunning reminders\nADVISORY_LOCK_DUNNING = 1_001_006\n",
            ),
            (
                "locks.rs",
                "/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_006;\n",
            ),
            (
                "locks.go",
                "// dunning reminders\nconst ADVISORY_LOCK_DUNNING = 1_001_006\n",
            ),
            (
                "locks.ts",
                "// dunning reminders\nexport const ADVISORY_LOCK_DUNNING = 1_001_006;\n",
            ),
            (
                "locks.cjs",
                "// dunning reminders\nmodule.exports.ADVISORY_LOCK_DUNNING = 1_001_006;\n",
            ),
            (
                "Locks.kt",
                "/** dunning reminders */\nconst val ADVISORY_LOCK_DUNNING: Long = 1_001_006L\n",
            ),
        ];
        for (path, expected) in cases {
            assert_eq!(constant(path, ""), expected, "{path}");
        }
    }

    #[test]
    fn a_new_constant_copies_the_shape_of_the_last_one() {
        let go = "package locks\n\nconst (\n\t// a\n\tADVISORY_LOCK_A int64 = 1_001_001\n)\n";
        assert_eq!(
            constant("locks.go", go),
            "package locks\n\nconst (\n\t// a\n\tADVISORY_LOCK_A int64 = 1_001_001\n\t// dunning reminders\n\tADVISORY_LOCK_DUNNING int64 = 1_001_006\n)\n"
        );
        let rust = "//! Locks.\n\n/// a\npub const ADVISORY_LOCK_A: i64 = 1_001_001_i64; // legacy\n\nfn unrelated() {}\n";
        assert_eq!(
            constant("locks.rs", rust),
            "//! Locks.\n\n/// a\npub const ADVISORY_LOCK_A: i64 = 1_001_001_i64; // legacy\n\n/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_006_i64;\n\nfn unrelated() {}\n"
        );
        let ruby = "module Harbor\n  module Locks\n    A_LOCK_ID = 1_001_001\n  end\nend";
        assert_eq!(
            constant("locks.rb", ruby),
            "module Harbor\n  module Locks\n    A_LOCK_ID = 1_001_001\n    # dunning reminders\n    ADVISORY_LOCK_DUNNING = 1_001_006\n  end\nend"
        );
        let java = "package h;\n\npublic final class Locks {\n    /** a */\n    public static final long A_LOCK_ID = 1_001_001L;\n}\n";
        assert_eq!(
            constant("Locks.java", java),
            "package h;\n\npublic final class Locks {\n    /** a */\n    public static final long A_LOCK_ID = 1_001_001L;\n    /** dunning reminders */\n    public static final long ADVISORY_LOCK_DUNNING = 1_001_006L;\n}\n"
        );
        let python_crlf = "A_LOCK_ID = 1  # x\r\n";
        assert_eq!(
            constant("locks.py", python_crlf),
            "A_LOCK_ID = 1  # x\r\n# dunning reminders\r\nADVISORY_LOCK_DUNNING = 1_001_006\r\n"
        );
    }

    #[test]
    fn a_new_rust_constant_keeps_its_siblings_restricted_visibility() {
        let rust = "pub(crate) const A_LOCK_ID: i64 = 1;\n\nfn unrelated() {}\n";
        assert_eq!(
            constant("locks.rs", rust),
            "pub(crate) const A_LOCK_ID: i64 = 1;\n/// dunning reminders\npub(crate) const ADVISORY_LOCK_DUNNING: i64 = 1_001_006;\n\nfn unrelated() {}\n"
        );
    }

    #[test]
    fn a_new_constant_follows_its_registered_siblings_not_a_test_module() {
        let rust = "pub const A_LOCK_ID: i64 = 1;\n\n#[cfg(test)]\nmod tests {\n    const FAKE_LOCK_ID: i64 = 9;\n}\n";
        assert_eq!(
            constant("locks.rs", rust),
            "pub const A_LOCK_ID: i64 = 1;\n/// dunning reminders\npub const ADVISORY_LOCK_DUNNING: i64 = 1_001_006;\n\n#[cfg(test)]\nmod tests {\n    const FAKE_LOCK_ID: i64 = 9;\n}\n"
        );
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
    fn javascript_constants_are_always_exported() {
        let commonjs = "const A_LOCK_ID = 1;\n\nmodule.exports = { A_LOCK_ID };\n";
        assert_eq!(
            constant("locks.js", commonjs),
            format!(
                "{commonjs}\n// dunning reminders\nmodule.exports.ADVISORY_LOCK_DUNNING = 1_001_006;\n"
            )
        );
        let listed = "const A_LOCK_ID = 1;\nexport { A_LOCK_ID };\n";
        assert_eq!(
            constant("locks.mjs", listed),
            "const A_LOCK_ID = 1;\n// dunning reminders\nexport const ADVISORY_LOCK_DUNNING = 1_001_006;\nexport { A_LOCK_ID };\n"
        );
    }

    #[test]
    fn java_and_kotlin_objects_without_constants_get_one_in_the_body() {
        assert_eq!(
            constant("Locks.java", "public final class Locks {\n}\n"),
            "public final class Locks {\n    /** dunning reminders */\n    public static final long ADVISORY_LOCK_DUNNING = 1_001_006L;\n}\n"
        );
        assert_eq!(
            constant(
                "Locks.kt",
                "package h\n\nobject Locks {\n    val unrelated = \"x\"\n}\n"
            ),
            "package h\n\nobject Locks {\n    val unrelated = \"x\"\n\n    /** dunning reminders */\n    const val ADVISORY_LOCK_DUNNING: Long = 1_001_006L\n}\n"
        );
        let error = append_constant(
            Language::Java,
            "Locks.java",
            "",
            &[],
            "X",
            &Id::plain(1),
            "w",
        )
        .unwrap_err();
        assert!(matches!(error, EditError::NoClassBody(_)));
    }

    #[test]
    fn a_worker_text_never_breaks_out_of_its_comment() {
        // Kotlin nests block comments; Java reads `\u` escapes even in comments; Go and Python
        // refuse a NUL; JavaScript ends a line at U+2028.
        let worker = "a */ b /* c\u{2028}d\u{0}e\u{FEFF}f \\users \\\\u **/ /*/";
        assert_eq!(
            Language::Kotlin.doc_comment(worker),
            "/** a * / b / * c d e f \\users \\\\u ** / / * / */"
        );
        assert_eq!(
            Language::Java.doc_comment(worker),
            "/** a * / b / * c d e f \\\\users \\\\u ** / / * / */"
        );
        assert_eq!(
            Language::Go.doc_comment(worker),
            "// a */ b /* c d e f \\users \\\\u **/ /*/"
        );
        assert_eq!(Language::Python.doc_comment("x\r\ny\u{7}z"), "# x y z");
    }

    #[test]
    fn javascript_past_the_safe_integer_range_uses_a_bigint() {
        let id = Id::plain(1 << 60);
        let out = append_constant(
            Language::TypeScript,
            "l.ts",
            "",
            &[],
            "BIG_LOCK_ID",
            &id,
            "w",
        )
        .unwrap();
        assert!(out.ends_with("export const BIG_LOCK_ID = 1152921504606846976n;\n"));
    }

    #[test]
    fn definitions_are_found_in_every_languages_form_and_uses_are_not() {
        let name = "ADVISORY_LOCK_A";
        for line in [
            "ADVISORY_LOCK_A = 1",
            "pub const ADVISORY_LOCK_A: i64 = 1;",
            "\tADVISORY_LOCK_A int64 = 1",
            "export const ADVISORY_LOCK_A = 1n;",
            "module.exports.ADVISORY_LOCK_A = 1;",
            "    public static final long ADVISORY_LOCK_A = 1L;",
            "const val ADVISORY_LOCK_A: Long = 1L",
            "ADVISORY_LOCK_A: Final[int] = 1",
            "pub(crate) const ADVISORY_LOCK_A: i64 = 1;",
            "    pub(in crate::locks) const ADVISORY_LOCK_A: i64 = 1;",
        ] {
            assert_eq!(
                find_definition(&format!("x\n{line}\n"), name),
                Some(2),
                "{line}"
            );
        }
        for line in [
            "x = ADVISORY_LOCK_A",
            "lock(ADVISORY_LOCK_A)",
            "# ADVISORY_LOCK_A = 1",
            "// ADVISORY_LOCK_A = 1",
            "if ADVISORY_LOCK_A == 1:",
            "ADVISORY_LOCK_AB = 1",
            "\"ADVISORY_LOCK_A = 1\"",
        ] {
            assert_eq!(find_definition(line, name), None, "{line}");
        }
    }
}
