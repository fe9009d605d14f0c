//! The one diagnostic shape every check reports, so `check` merges them and renders them once.

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
    // The page.
    StalePage = "stale-page": "The rendered page on disk differs from what the registry renders.",
    // Work that has not landed.
    BranchCollision = "branch-collision": "Two other branches took the same id for different constants.",
    BranchRegistryUnreadable = "branch-registry-unreadable": "The registry on another branch could not be read or does not parse; its ids are not reserved.",
    NotAGitRepository = "not-a-git-repository": "The registry is not inside a git repository, so other branches were not read.",
    GitUnavailable = "git-unavailable": "The git command could not be run or failed, so other branches were not read.",
    // Registry rules added after the first release, appended so that SARIF rule indexes of the
    // codes above stay stable.
    InvalidProjectName = "invalid-project-name": "The project's name has characters other than ASCII letters, digits, `_`, `-` and `.`, or is too long.",
    GlobOutsideProject = "glob-outside-project": "A `[plugins] manifests` glob reaches outside the registry's directory.",
}

/// A secondary location that explains a finding ("first registered here").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Label {
    /// Path relative to the registry's directory, with `/` separators.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// How many characters to underline.
    pub width: usize,
    /// The text of the line, when the file could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<String>,
    /// What this location has to do with the finding.
    pub message: String,
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
    /// 1-based line; 0 when the finding is about a whole file.
    pub line: usize,
    /// 1-based column, in characters; 0 when the finding is about a whole file.
    pub column: usize,
    /// How many characters to underline at `line:column`.
    #[serde(skip)]
    pub width: usize,
    /// The text of the line, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<String>,
    /// Other locations that explain this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes fields by reference
fn serialize_code<S: serde::Serializer>(code: &Code, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(code.as_str())
}

impl Finding {
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
            line: 0,
            column: 0,
            width: 0,
            source_line: None,
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
    findings.sort_by(|a, b| {
        (&a.path, a.line, a.column, a.code).cmp(&(&b.path, b.line, b.column, b.code))
    });
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
}
