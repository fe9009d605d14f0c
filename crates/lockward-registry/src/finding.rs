//! The one diagnostic shape every check reports, so `check` merges them and renders them once.

use std::ops::Range;
use std::sync::Arc;

use serde::Serialize;

/// How much a finding matters. Any `Error` makes `lockward check` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Must be fixed.
    Error,
    /// Worth a look; does not fail the check.
    Warning,
    /// Information, counted in the summary.
    Note,
}

impl Severity {
    /// `error`, `warning` or `note`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Note => "note",
        }
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal : $description:literal,)*) => {
        /// A stable, kebab-case finding code. Codes never change meaning once released.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $(#[doc = $description] $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The kebab-case code, as shown to users and used in `lockward: allow(CODE)`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// One line saying what the code means.
            pub fn description(self) -> &'static str {
                match self {
                    $(Code::$variant => $description,)*
                }
            }

            /// The code spelled `text`, if any.
            pub fn from_str_opt(text: &str) -> Option<Code> {
                match text {
                    $($code => Some(Code::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

codes! {
    // The registry file.
    Unreadable = "unreadable": "A file could not be read or is not UTF-8.",
    TomlSyntax = "toml-syntax": "The file is not valid TOML.",
    UnknownKey = "unknown-key": "A key the format does not define.",
    MissingField = "missing-field": "A required field is missing.",
    WrongType = "wrong-type": "A value has the wrong type.",
    IdOutOfRange = "id-out-of-range": "An id does not fit PostgreSQL's bigint.",
    DuplicateId = "duplicate-id": "An id is registered more than once.",
    ConflictingKinds = "conflicting-kinds": "An entry sets fields of more than one kind (plugin, retired, reserved, defined_in).",
    MissingWorker = "missing-worker": "A constant or external entry does not name its worker.",
    InvalidConstantName = "invalid-constant-name": "A constant name is not an identifier.",
    DuplicateConstant = "duplicate-constant": "One constant name is registered twice for the same defining file.",
    FamilyOutOfRange = "family-out-of-range": "A family id does not fit in an int4.",
    InvalidBlock = "invalid-block": "The block's start is after its end.",
    ConstantOutsideBlock = "constant-outside-block": "A core constant lies outside core's block (legacy ids are allowed).",
    InvalidGlob = "invalid-glob": "A glob pattern does not parse.",
    // Plugin admission.
    MalformedManifest = "malformed-manifest": "A plugin manifest is missing its name, has a non-integer id or a duplicate id.",
    PluginCollidesWithCore = "plugin-collides-with-core": "A plugin declares an id core uses (a constant or an external).",
    PluginUsesRetiredId = "plugin-uses-retired-id": "A plugin declares a retired id.",
    PluginTakesOthersHandover = "plugin-takes-others-handover": "A plugin declares an id core handed over to another plugin.",
    PluginIdShared = "plugin-id-shared": "Two plugins' manifests declare the same id.",
    PluginIdInCoreBlock = "plugin-id-in-core-block": "A plugin declares an id inside core's block that was not handed over to it.",
    UnusedHandover = "unused-handover": "A handover that no plugin manifest declares.",
    DuplicatePlugin = "duplicate-plugin": "Two manifests use the same plugin name.",
    // The code scan.
    UnregisteredId = "unregistered-id": "An advisory lock id in code that the registry does not know.",
    ConstantValueMismatch = "constant-value-mismatch": "A registered constant is defined in code with a different value.",
    ConstantMissing = "constant-missing": "A registered constant is not defined in core's constants file.",
    ExternalNotFound = "external-not-found": "An external id is not found in any of the files its entry lists.",
    UndeclaredSite = "undeclared-site": "A registered id is written in a file its entry does not list.",
    RetiredIdInUse = "retired-id-in-use": "Code uses a retired id.",
    HandoverInCoreCode = "handover-in-core-code": "A plugin's id is used outside that plugin's directory.",
    DuplicateDefinition = "duplicate-definition": "One id is defined by two constants that are not one registry entry.",
    DynamicKey = "dynamic-key": "An advisory lock call whose key cannot be resolved to an id.",
    KeyShapeMismatch = "key-shape-mismatch": "A lock call takes an id in the other key form than its entry's: a family's id as one bigint key, or an exact id as the first int4 of a pair.",
    // The page.
    StalePage = "stale-page": "The rendered page on disk differs from what the registry renders.",
    // Work that has not landed.
    BranchCollision = "branch-collision": "Two branches (the work tree counts as one) took the same id for different constants.",
    BranchRegistryUnreadable = "branch-registry-unreadable": "The registry on another branch could not be read or does not parse; its ids are not reserved.",
    NotAGitRepository = "not-a-git-repository": "The registry is not inside a git repository, so other branches were not read.",
    GitUnavailable = "git-unavailable": "The git command could not be run, so other branches were not read.",
    // Codes added after the first release, appended so that the SARIF rule indexes of the codes
    // above stay stable.
    GitFailed = "git-failed": "git could not read the repository (dubious ownership, an unknown repository format), so other branches were not read.",
    PathOutsideProject = "path-outside-project": "A path the registry names is absolute or climbs out of the registry's directory with `..`.",
    UnsupportedConstantsLanguage = "unsupported-constants-language": "Core's constants file is in a language `lockward take` cannot write constants in.",
    InvalidProjectName = "invalid-project-name": "The project's name has characters other than ASCII letters, digits, `_`, `-` and `.`, or is too long.",
    GlobOutsideProject = "glob-outside-project": "A `[plugins] manifests` glob reaches outside the registry's directory.",
    // What the scan cannot see, said out loud (issue 9, item 4).
    UnresolvedConstant = "unresolved-constant": "A name matching the lock constant patterns whose value the scan cannot compute.",
    NotALockKey = "not-a-lock-key": "A constant named like a lock id that the code passes to a lock only as something else (a hash's seed, the second int of a pair): not checked as an id.",
    FileNotRead = "file-not-read": "A source file the scan skipped: binary, too large, or a symbolic link it does not follow.",
    UnreadableFile = "unreadable-file": "A source file the scan could not read (an I/O error), so its locks were not checked.",
    UnusedAllow = "unused-allow": "A `lockward: allow(CODE)` comment that suppresses no finding.",
    UnknownAllowCode = "unknown-allow-code": "A `lockward: allow(CODE)` comment names a code that does not exist.",
    // Collections, enums and expressions (issue 9, item 3).
    UnsafeJsInteger = "unsafe-js-integer": "A JavaScript/TypeScript integer literal used as a lock id is beyond 2^53 - 1, so the number the code runs with is not the one written.",
    // A library helper out of sight (issue 17).
    UnknownLockHelper = "unknown-lock-helper": "A call of a function whose name says it takes an advisory lock, which the tree does not define and `[scan] wrappers` does not declare: the keys it takes are not checked.",
    // Every holder known (issue 19).
    SharedKey = "shared-key": "A key this registry owns is owned by another registry on the same database too (`[[share]]`, `check --with`).",
    SharedProjectName = "shared-project-name": "A shared registry has this project's name, so the two projects' workers cannot be told apart.",
    SharedRegistryUnreadable = "shared-registry-unreadable": "A registry named by `[[share]]` or `check --with` could not be read or breaks its rules, so its keys were not compared.",
    WellKnownKey = "well-known-key": "A registry id is a well-known tool's fixed advisory lock key (a migration tool's), from the catalogue of well-known keys.",
    QueJobIds = "que-job-ids": "The project uses Que, which locks each job by its id (1, 2, 3, ...), and a registry id is a small bigint that Que's job ids will reach.",
    NameKeyCollision = "name-key-collision": "A lock taken by name (a library that hashes the name into a key) takes the key of another name, or of a registered id, in the same key form.",
    UnknownNameHash = "unknown-name-hash": "A named lock's `hash` is a library lockward does not know the name hash of.",
    NameKeyMismatch = "name-key-mismatch": "A named lock's `id` or `key` is not the key its library computes for its name.",
}

impl Code {
    /// The code `text` most likely meant, for a near miss (`dynamic-keys`, `dynamic_key` →
    /// `dynamic-key`); `None` when no code is close.
    pub fn closest(text: &str) -> Option<Code> {
        let normalized = text.to_ascii_lowercase().replace('_', "-");
        Code::ALL
            .iter()
            .map(|&code| {
                (
                    crate::near_miss::edit_distance(&normalized, code.as_str()),
                    code,
                )
            })
            .filter(|&(distance, code)| distance <= 2.max(code.as_str().len() / 4))
            .min_by_key(|&(distance, _)| distance)
            .map(|(_, code)| code)
    }
}

/// Where in a file a finding or label points: a line and column, and the line's text around it.
///
/// Positions are kept as the byte range they came from; turning them into what a terminal shows
/// (tabs, wide characters, control bytes) is the renderer's business, done once. A finding carries
/// its own bounded excerpt rather than an index into a table of whole files: the scan reads tens
/// of thousands of files and keeps none of them, so a table would have to hold every file that
/// has a finding whole; an excerpt is at most a few hundred bytes, however long the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// 1-based line.
    pub line: usize,
    /// 1-based column of the first underlined character, counted in characters of the whole line.
    pub column: usize,
    /// The line's text around the span, when the file could be read.
    pub excerpt: Option<Excerpt>,
}

/// The text of one source line (or, for a long line, a window of it) and the bytes to underline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The text, without the line ending (cheap to clone with the finding).
    pub text: Arc<str>,
    /// The underlined bytes of `text` (empty: the point before `bytes.start`).
    pub bytes: Range<usize>,
    /// Whether the line goes on before `text` (it was cut to a window around the span).
    pub cut_before: bool,
    /// Whether the line goes on after `text`.
    pub cut_after: bool,
}

/// How many bytes of a line an excerpt keeps on each side of its span: enough to read the
/// context, little enough that a minified bundle's 10 MB line is not echoed whole.
pub const EXCERPT_CONTEXT: usize = 120;
/// How many bytes of the span itself an excerpt keeps.
pub const EXCERPT_SPAN: usize = 240;

impl Span {
    /// The span of the bytes `bytes` of `line_text`, which is line `line` of its file.
    ///
    /// Long lines are cut to a window around the span; offsets out of range or inside a
    /// character are moved to the nearest character boundary before them.
    pub fn in_line(line: usize, line_text: &str, bytes: Range<usize>) -> Self {
        let start = floor_char_boundary(line_text, bytes.start);
        Self {
            line,
            column: line_text[..start].chars().count() + 1,
            excerpt: Some(Excerpt::around(line_text, bytes)),
        }
    }

    /// How many characters the span underlines (at least one).
    pub fn width(&self) -> usize {
        self.excerpt.as_ref().map_or(1, |excerpt| {
            excerpt.text[excerpt.bytes.clone()].chars().count().max(1)
        })
    }
}

impl Excerpt {
    /// The bytes `bytes` of `line_text`, with the line around them: all of it, or for a long line
    /// a window of [`EXCERPT_CONTEXT`] bytes on each side (and at most [`EXCERPT_SPAN`] bytes of the
    /// span). Offsets out of range or inside a character move to the character boundary before.
    pub fn around(line_text: &str, bytes: Range<usize>) -> Self {
        let start = floor_char_boundary(line_text, bytes.start);
        let end = floor_char_boundary(line_text, bytes.end.max(start));
        let window_start = floor_char_boundary(line_text, start.saturating_sub(EXCERPT_CONTEXT));
        let span_end = floor_char_boundary(line_text, end.min(start + EXCERPT_SPAN));
        let window_end = floor_char_boundary(line_text, span_end.saturating_add(EXCERPT_CONTEXT));
        Self {
            text: Arc::from(&line_text[window_start..window_end]),
            bytes: start - window_start..span_end - window_start,
            cut_before: window_start > 0,
            cut_after: window_end < line_text.len(),
        }
    }

    /// The whole line, when the excerpt is not cut.
    pub fn whole_line(&self) -> Option<&str> {
        (!self.cut_before && !self.cut_after).then_some(&*self.text)
    }
}

/// The largest character boundary of `text` at or before `offset`.
pub(crate) fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// A secondary location that explains a finding ("first registered here").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    /// Path relative to the registry's directory, with `/` separators.
    pub path: String,
    /// Where in the file; none when the label is about a whole file (or a file on another branch).
    #[serde(flatten, serialize_with = "serialize_span")]
    pub span: Option<Span>,
    /// What this location has to do with the finding.
    pub message: String,
}

impl Label {
    /// The 1-based line, if the label points into the file.
    pub fn line(&self) -> Option<usize> {
        self.span.as_ref().map(|span| span.line)
    }

    /// The 1-based column, in characters, if the label points into the file.
    pub fn column(&self) -> Option<usize> {
        self.span.as_ref().map(|span| span.column)
    }

    /// The source text around the span, when the file could be read.
    pub fn source_line(&self) -> Option<&str> {
        self.span
            .as_ref()
            .and_then(|span| span.excerpt.as_ref())
            .map(|excerpt| &*excerpt.text)
    }
}

/// One problem found by any check, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The stable code.
    #[serde(serialize_with = "serialize_code")]
    pub code: Code,
    /// How much it matters.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Path relative to the registry's directory, with `/` separators.
    pub path: String,
    /// Where in the file; none when the finding is about a whole file. Serialized as `line`,
    /// `column` (null for a whole file) and `source_line` (the excerpt's text, when there is one).
    #[serde(flatten, serialize_with = "serialize_span")]
    pub span: Option<Span>,
    /// Other locations that explain this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

#[allow(clippy::ref_option)] // serde passes fields by reference
fn serialize_span<S: serde::Serializer>(
    span: &Option<Span>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap as _;
    let excerpt = span.as_ref().and_then(|span| span.excerpt.as_ref());
    let mut map = serializer.serialize_map(None)?;
    map.serialize_entry("line", &span.as_ref().map(|span| span.line))?;
    map.serialize_entry("column", &span.as_ref().map(|span| span.column))?;
    if let Some(excerpt) = excerpt {
        map.serialize_entry("source_line", &*excerpt.text)?;
    }
    map.end()
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes fields by reference
fn serialize_code<S: serde::Serializer>(code: &Code, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(code.as_str())
}

impl Finding {
    /// The 1-based line, if the finding points into the file.
    pub fn line(&self) -> Option<usize> {
        self.span.as_ref().map(|span| span.line)
    }

    /// The 1-based column, in characters, if the finding points into the file.
    pub fn column(&self) -> Option<usize> {
        self.span.as_ref().map(|span| span.column)
    }

    /// The source text around the span, when the file could be read.
    pub fn source_line(&self) -> Option<&str> {
        self.span
            .as_ref()
            .and_then(|span| span.excerpt.as_ref())
            .map(|excerpt| &*excerpt.text)
    }

    /// A finding about a whole file (no line or column).
    pub fn file(
        code: Code,
        severity: Severity,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            code,
            severity,
            message: message.into(),
            path: path.into(),
            span: None,
            labels: Vec::new(),
            help: None,
        }
    }

    /// Adds a help line.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a secondary label.
    #[must_use]
    pub fn with_label(mut self, label: Label) -> Self {
        self.labels.push(label);
        self
    }

    /// Whether this finding fails a check.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Sorts findings by path, line and column, so reports are stable.
pub fn sort(findings: &mut [Finding]) {
    let key = |finding: &Finding| finding.span.as_ref().map(|span| (span.line, span.column));
    findings.sort_by(|a, b| (&a.path, key(a), a.code).cmp(&(&b.path, key(b), b.code)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_kebab_case_and_described() {
        let mut seen = HashSet::new();
        for code in Code::ALL {
            let text = code.as_str();
            assert!(seen.insert(text), "code {text} is used twice");
            assert!(
                text.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !text.starts_with('-'),
                "code {text} is not kebab-case"
            );
            assert!(
                code.description().ends_with('.'),
                "{text} needs a one-line description"
            );
            assert_eq!(Code::from_str_opt(text), Some(*code));
        }
    }

    #[test]
    fn a_near_miss_of_a_code_names_the_code() {
        assert_eq!(Code::closest("dynamic-keys"), Some(Code::DynamicKey));
        assert_eq!(Code::closest("undeclared_site"), Some(Code::UndeclaredSite));
        assert_eq!(Code::closest("UNREGISTERED-ID"), Some(Code::UnregisteredId));
        assert_eq!(Code::closest("everything"), None);
    }
}
