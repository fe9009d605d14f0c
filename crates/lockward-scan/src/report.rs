//! What a scan found: its findings, its sites with their keys as PostgreSQL sees them, and what
//! it did not read.

use lockward_registry::Finding;
use serde::Serialize;

/// How a site's key reaches PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SiteKey {
    /// One bigint key (a constant's value, or a one-argument call).
    Bigint(i64),
    /// A two-argument call; the value is the first `int4`, the family.
    Pair(i64),
}

/// What kind of site it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "form", rename_all = "lowercase")]
pub enum SiteForm {
    /// A constant defined with an integer literal.
    Definition {
        /// The constant's name.
        constant: String,
    },
    /// A call of an advisory lock function.
    Call {
        /// The function, lowercase (`pg_try_advisory_lock`).
        function: String,
        /// The name the key was written as, if not a literal.
        constant: Option<String>,
    },
    /// A call of a wrapper: a function whose parameter reaches a lock call's key (inferred
    /// from the tree), or one declared in `[scan] wrappers` or the defaults.
    Wrapper {
        /// The wrapper's name as called (`with_lock`, `Acquire`).
        function: String,
        /// The name the key was written as, if not a literal.
        constant: Option<String>,
    },
    /// A keyword form such as `advisory_lock_id=1_001_042`.
    Keyword {
        /// The keyword as written.
        keyword: String,
        /// The name the value was written as, if not a literal.
        constant: Option<String>,
    },
    /// A lock taken by name through a library that hashes the name into the key
    /// (`advisory_lock("reindex")`): the site's key is the one the library computes.
    Named {
        /// The library's catalogue id (`django-pglocks`).
        library: String,
        /// The name as written.
        name: String,
    },
}

/// One place in the code that uses a lock id whose value is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Site {
    /// Path relative to the scanned root, `/`-separated.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The registry id this site belongs to: the key itself, or the family of a pair or of a
    /// bigint whose high 32 bits are a registered family.
    pub id: i64,
    /// The key as used.
    pub key: SiteKey,
    /// Definition, call or keyword.
    #[serde(flatten)]
    pub form: SiteForm,
    /// The text of the line (none for a line over 1 KiB, such as a minified bundle's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<String>,
}

/// What a scan found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScanReport {
    /// Every finding, sorted by path, line and column.
    pub findings: Vec<Finding>,
    /// How many files were read.
    pub files_scanned: u64,
    /// How many bytes were read.
    pub bytes_scanned: u64,
    /// How many lock calls have a key that cannot be resolved (each is also a `dynamic-key` note,
    /// unless allowed).
    pub dynamic_keys: usize,
    /// How many definitions under a name that matches the constant patterns have a value the
    /// scan cannot compute (each is also an `unresolved-constant` note, unless allowed).
    pub unresolved_constants: usize,
    /// The source files (of a language the scan reads) it did not read, by reason.
    pub not_read: NotRead,
    /// Every site whose id is known, sorted by path, line and column.
    pub sites: Vec<Site>,
}

/// Source files the scan did not read, by reason. Each is also a finding: `file-not-read`
/// (a note) for the first three, `unreadable-file` (a warning) for the last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NotRead {
    /// Files with a NUL byte in their first 8 KiB that hold a trigger word.
    pub binary: u64,
    /// Files over [`ScanOptions::max_file_size`](crate::ScanOptions::max_file_size).
    pub too_large: u64,
    /// Symbolic links out of the tree or to nothing, which the walk does not follow (one to a
    /// file inside the tree is not counted: the file is read where it is), and other entries
    /// that are not regular files.
    pub not_followed: u64,
    /// Files whose reading failed (permissions, an I/O error).
    pub unreadable: u64,
}

impl NotRead {
    /// All the files not read.
    pub fn total(&self) -> u64 {
        self.binary + self.too_large + self.not_followed + self.unreadable
    }
}

impl ScanReport {
    /// The sites that use `id` (definitions included): what `lockward retire` must see empty.
    pub fn uses_of(&self, id: i64) -> impl Iterator<Item = &Site> + '_ {
        self.sites.iter().filter(move |site| site.id == id)
    }
}
