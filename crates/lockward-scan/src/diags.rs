//! Every finding the scan reports, phrased: one function per diagnostic, named after what it says,
//! taking the values the logic found and returning what the finding says ([`Said`]). The logic
//! decides whether and where; this module decides the words.

use std::fmt::Write as _;

use lockward_registry::{AdvisoryKey, Code, Finding, Id, KeyShape, Said, Severity};

use crate::sites::Location;

/// Where a finding of the scan goes: at a site of a file.
pub(crate) trait AtSite {
    /// The finding at the site `at` of `path`.
    fn at_site(self, path: &str, at: &Location) -> Finding;
}

impl AtSite for Said {
    fn at_site(self, path: &str, at: &Location) -> Finding {
        self.at_span(path, at.span.clone())
    }
}

/// What a finding of `code` at `severity` says, with its help.
fn said(code: Code, severity: Severity, message: String, help: impl Into<String>) -> Said {
    Said::new(code, severity, message).with_help(help)
}

/// The label on the registry entry a finding is about.
pub(crate) fn registered_here(id: &Id) -> String {
    format!("id {id} is registered here")
}

/// How a lock taken by name is shown in the messages about it.
pub(crate) fn lock_named(name: &str, library: &str, key: AdvisoryKey) -> String {
    format!(
        "the lock named {name:?} ({library}) takes key {}",
        key_text(key)
    )
}

/// `name-key-collision`: a lock taken by name whose key another name takes too.
pub(crate) fn name_key_collision_with_name(
    named: &str,
    other_name: &str,
    other_library: &str,
    other_path: &str,
    other_line: usize,
) -> Said {
    said(
        Code::NameKeyCollision,
        Severity::Error,
        format!(
            "{named}, as the lock named {other_name:?} ({other_library}) does at {other_path}:{other_line}: their holders skip each other's cycles"
        ),
        "rename one of the two locks",
    )
}

/// `name-key-collision`: a lock taken by name whose key is a registered entry's (`what`: its
/// constant, else its kind).
pub(crate) fn name_key_collision_with_entry(named: &str, id: &Id, what: &str) -> Said {
    said(
        Code::NameKeyCollision,
        Severity::Error,
        format!(
            "{named}, which is registered id {id} ({what}): their holders skip each other's cycles"
        ),
        "rename the lock, or give the registered worker another id (`lockward take`)",
    )
}

/// `unregistered-id`: a lock taken by a name no entry registers; `namesake_hash` is the library
/// an entry of that name says, when one does.
pub(crate) fn unregistered_name(
    named: &str,
    name: &str,
    library: &str,
    namesake_hash: Option<&str>,
) -> Said {
    let (message, help) = match namesake_hash {
        Some(hash) => (
            format!(
                "{named}, which is not in the registry: its entry named {name:?} is hashed with {hash}, not {library}"
            ),
            format!(
                "one name is another key in each library: register this one too with `lockward take --name {} --hash {library} --worker \"...\"`, or take it with {hash}, as the entry says",
                shell_word(name),
            ),
        ),
        None => (
            format!("{named}, which is not in the registry"),
            format!(
                "locks taken by name come from the registry too: register this one with `lockward take --name {} --hash {library} --worker \"...\"`",
                shell_word(name),
            ),
        ),
    };
    said(Code::UnregisteredId, Severity::Error, message, help)
}

/// `unresolved-constant`: a name that matches the patterns, with a value the scan cannot compute.
pub(crate) fn unresolved_constant(name: &str, shown: &str) -> Said {
    said(
        Code::UnresolvedConstant,
        Severity::Note,
        format!(
            "`{name}` matches the lock constant patterns but its value `{shown}` is not a value the scan can compute"
        ),
        "if it is an advisory lock id, write it as an integer literal (or an expression of literals and constants) so the scan can check it; otherwise add a trailing `lockward: allow(unresolved-constant)` comment",
    )
}

/// `not-a-lock-key`: a constant named like a lock id whose only uses the scan sees pass it to a
/// lock as something else than its key (`role`, at `used`).
pub(crate) fn not_a_lock_key(name: &str, value: &Id, role: &str, used: &str) -> Said {
    said(
        Code::NotALockKey,
        Severity::Note,
        format!(
            "`{name}` ({value}) is named like a lock id, but the code passes it only as {role} ({used}), not as a key: it is not checked as an id"
        ),
        "if it is a lock id taken elsewhere, register it; if not, a name ending in `_SEED` or `_SALT` says what it is (or add a trailing `lockward: allow(not-a-lock-key)` comment)",
    )
}

/// `unknown-allow-code`: an allow comment naming no code; `near` is the code it likely meant.
pub(crate) fn unknown_allow_code(written: &str, near: Option<Code>) -> Said {
    let help = match near {
        Some(near) => format!("did you mean `{}`?", near.as_str()),
        None => "the codes are the kebab-case names findings are shown with, e.g. `undeclared-site`, `dynamic-key`".to_owned(),
    };
    said(
        Code::UnknownAllowCode,
        Severity::Error,
        format!("`lockward: allow({written})` names no finding code"),
        help,
    )
}

/// `unused-allow`: an allow comment's code that suppressed nothing on its line.
pub(crate) fn unused_allow(code: Code) -> Said {
    let code = code.as_str();
    said(
        Code::UnusedAllow,
        Severity::Warning,
        format!("`lockward: allow({code})` allows nothing: no `{code}` finding is on this line"),
        "remove it (or the code from its list): an allow that allows nothing hides the next real finding here",
    )
}

/// `constant-value-mismatch`: a registered constant defined with another value.
pub(crate) fn constant_value_mismatch(name: &str, value: &Id, registered: &Id) -> Said {
    said(
        Code::ConstantValueMismatch,
        Severity::Error,
        format!("`{name}` is {value} here, but the registry gives it id {registered}"),
        format!("set `{name}` to {registered}: the registry is the authority"),
    )
}

/// `unregistered-id`: a constant defining an id the registry does not list. `defined_in`: the
/// files that define it, for the `take` that registers it where it is; `None` in core's
/// constants file, where `take` registers it as it is.
pub(crate) fn unregistered_constant(value: &Id, name: &str, defined_in: Option<&[&str]>) -> Said {
    // The help's command registers the id as the code has it: it works when pasted.
    let help = match defined_in {
        None => format!(
            "ids come from the registry: register this one with `lockward take {} --worker \"...\"`, which records the id it has",
            shell_word(name)
        ),
        Some(files) => {
            let files: Vec<String> = files
                .iter()
                .map(|file| format!("--defined-in {}", shell_word(file)))
                .collect();
            format!(
                "ids come from the registry: register this one where it is with `lockward take {} --worker \"...\" {}`, or move it to core's constants file",
                shell_word(name),
                files.join(" ")
            )
        }
    };
    said(
        Code::UnregisteredId,
        Severity::Error,
        format!("advisory lock id {value} (`{name}`) is not in the registry"),
        help,
    )
}

/// `duplicate-definition`: a registered id defined under another name than its entry's.
pub(crate) fn defined_under_another_name(id: &Id, name: &str, registered: &str) -> Said {
    said(
        Code::DuplicateDefinition,
        Severity::Error,
        format!("id {id} is defined here as `{name}`, but registered as `{registered}`"),
        format!("one id has one name: use `{registered}` instead of `{name}`"),
    )
}

/// `unregistered-id`: a lock call's literal key (or a local name for one) the registry does not
/// list.
pub(crate) fn unregistered_literal(value: &Id, constant: Option<&str>, path: &str) -> Said {
    let shown = constant.map_or_else(|| value.to_string(), |name| format!("{value} (`{name}`)"));
    said(
        Code::UnregisteredId,
        Severity::Error,
        format!("advisory lock id {shown} is not in the registry"),
        format!(
            "ids come from the registry: register this one where it is with `lockward take {} --worker \"...\" --defined-in {}`, or take a new id with `lockward take CONSTANT --worker \"...\"` and use its constant here",
            value.value(),
            shell_word(path)
        ),
    )
}

/// `key-shape-mismatch`: `function` takes the entry's id in the other key form than `registered`
/// (a pair's first int4 for an exact id, one bigint for a family).
pub(crate) fn key_shape_mismatch(function: &str, id: &Id, registered: KeyShape) -> Said {
    let (message, help) = match registered {
        KeyShape::Exact => (
            format!(
                "`{function}` takes id {id} as the first int4 of a pair, but it is registered as an \
                 exact key (one bigint): `{function}({id}, n)` and `{function}({id})` are different locks"
            ),
            "pass the id alone, or register a family (`key = \"family\"`) for pairs",
        ),
        KeyShape::Family => (
            format!(
                "`{function}` takes family {id} as one bigint key, but its members are \
                 `{function}({id}, n)`: `{function}({id})` is a different lock"
            ),
            "pass a member as the second argument, or register an exact id for the one-key lock",
        ),
    };
    said(Code::KeyShapeMismatch, Severity::Error, message, help)
}

/// `dynamic-key`: a lock call whose key (`text` as written, empty when built at run time) cannot
/// be resolved to an id.
pub(crate) fn dynamic_key(function: &str, text: &str) -> Said {
    let message = if text.is_empty() {
        format!(
            "the key of this `{function}` call is built at run time and cannot be resolved to an id"
        )
    } else {
        format!("the key of this `{function}` call, `{text}`, cannot be resolved to an id")
    };
    said(
        Code::DynamicKey,
        Severity::Note,
        message,
        "pass a registered constant as the key, or add a trailing `lockward: allow(dynamic-key)` comment once the key is known to be registered",
    )
}

/// `handover-in-core-code`: a plugin's own id (its manifest declares it) used outside its
/// directory.
pub(crate) fn plugin_id_outside_its_directory(value: &Id, plugin: &str, dir: &str) -> Said {
    said(
        Code::HandoverInCoreCode,
        Severity::Error,
        format!(
            "id {value} belongs to plugin `{plugin}` (its manifest declares it), but is used here outside its directory `{dir}/`"
        ),
        format!(
            "only plugin `{plugin}` may hold this lock: move this code into the plugin, or take a core id with `lockward take`"
        ),
    )
}

/// `handover-in-core-code`: an id handed over to a plugin used outside its directory (`dir`:
/// the plugin's, `None` when it has no manifest in the tree).
pub(crate) fn handover_outside_its_plugin(id: &Id, plugin: &str, dir: Option<&str>) -> Said {
    let whose = match dir {
        Some(dir) => format!("outside its directory `{dir}/`"),
        None => "and the plugin has no manifest in this tree".to_owned(),
    };
    said(
        Code::HandoverInCoreCode,
        Severity::Error,
        format!("id {id} was handed over to plugin `{plugin}`, but is used here {whose}"),
        format!(
            "only plugin `{plugin}` may hold this lock: move this code into the plugin, or take a core id with `lockward take`"
        ),
    )
}

/// `retired-id-in-use`.
pub(crate) fn retired_id_in_use(id: &Id, reason: &str) -> Said {
    said(
        Code::RetiredIdInUse,
        Severity::Error,
        format!("id {id} is retired ({reason}) but still used here"),
        "retired ids are never reused: remove this use, or take a new id with `lockward take`",
    )
}

/// `unregistered-id`: a reserved id's literal (`branch`: the branch that reserved it, if not this
/// one).
pub(crate) fn reserved_not_registered(id: &Id, branch: Option<&str>, reason: &str) -> Said {
    let by = branch.map_or_else(String::new, |branch| format!(" on branch {branch}"));
    said(
        Code::UnregisteredId,
        Severity::Error,
        format!("id {id} is reserved{by} ({reason}), not registered"),
        "if this is the work it was reserved for, make the reservation an entry with a constant and a worker; otherwise take a new id with `lockward take`",
    )
}

/// `undeclared-site`: a core constant's id written as a literal outside core's constants file
/// (`sql`: in SQL, which cannot import the constant).
pub(crate) fn core_literal_outside_constants(
    id: &Id,
    name: &str,
    constants: &str,
    sql: bool,
) -> Said {
    let help = if sql {
        format!(
            "SQL cannot import `{name}`: if this is the same worker's lock, exempt the line with a trailing `-- lockward: allow(undeclared-site)`"
        )
    } else {
        format!("use `{name}` from `{constants}` instead of repeating its value")
    };
    said(
        Code::UndeclaredSite,
        Severity::Error,
        format!(
            "id {id} (`{name}`) is written as a literal outside core's constants file `{constants}`"
        ),
        help,
    )
}

/// `undeclared-site`: an external's id used in a file its entry does not list.
pub(crate) fn external_outside_its_files(
    id: &Id,
    constant: Option<&str>,
    path: &str,
    defined_in: &[String],
) -> Said {
    let name = constant.map_or_else(String::new, |n| format!(" (`{n}`)"));
    let files = defined_in
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let help = if constant.is_some() {
        format!(
            "add \"{path}\" to the entry's defined_in, or use the id through its constant from {files}"
        )
    } else {
        format!(
            "add \"{path}\" to the entry's defined_in (it lists {files}), or take an id of its own for this site with `lockward take`"
        )
    };
    said(
        Code::UndeclaredSite,
        Severity::Error,
        format!("id {id}{name} is used in `{path}`, which its registry entry does not list"),
        help,
    )
}

/// `duplicate-definition`: one id defined by two constants of different names.
pub(crate) fn two_constants_for_one_id(value: &Id, first_name: &str, name: &str) -> Said {
    said(
        Code::DuplicateDefinition,
        Severity::Error,
        format!("id {value} is defined by two constants, `{first_name}` and `{name}`"),
        format!("one id has one name: keep `{first_name}` and use it here"),
    )
}

/// The label at the first of two constants that define one id.
pub(crate) fn defines_here(name: &str, value: &Id) -> String {
    format!("`{name}` defines {value} here")
}

/// Why a registered constant was not found in core's constants file.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Absence {
    /// The file does not exist.
    NoFile,
    /// It is defined there, but not with an integer literal.
    NotLiteral,
    /// The file has no definition of it.
    NotFound,
}

/// `constant-missing`: a registered constant core's constants file does not define.
pub(crate) fn constant_missing(name: &str, id: &Id, constants: &str, why: Absence) -> Said {
    let why = match why {
        Absence::NoFile => "which does not exist",
        Absence::NotLiteral => "where its value is not an integer literal",
        Absence::NotFound => "where no definition of it was found",
    };
    said(
        Code::ConstantMissing,
        Severity::Error,
        format!("registered constant `{name}` ({id}) is not defined in `{constants}`, {why}"),
        format!("define `{name}` = {id} in `{constants}`"),
    )
}

/// `external-not-found`: an external found in none of its files (`absent`: those that do not
/// exist).
pub(crate) fn external_not_found(
    id: &Id,
    constant: Option<&str>,
    site: Option<&str>,
    defined_in: &[String],
    absent: &[&str],
) -> Said {
    let what = match (constant, site) {
        (Some(n), _) => format!("`{n}` ({id})"),
        (None, Some(site)) => format!("id {id} (written at `{site}`)"),
        (None, None) => format!("id {id}"),
    };
    let files = defined_in
        .iter()
        .map(|f| format!("`{f}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut message = format!("external {what} is not found in any of its files: {files}");
    if !absent.is_empty() {
        let _ = write!(message, " ({} missing)", absent.join(", "));
    }
    said(
        Code::ExternalNotFound,
        Severity::Error,
        message,
        "point the entry's defined_in at the files that define or use it, or retire the id if that code is gone",
    )
}

/// `unsafe-js-integer`: a JavaScript number literal beyond 2^53 - 1 (`runs`: the value the code
/// runs with).
pub(crate) fn unsafe_js_integer(written: &str, id: &Id, runs: i128) -> Said {
    said(
        Code::UnsafeJsInteger,
        Severity::Error,
        format!(
            "`{written}` is beyond JavaScript's Number.MAX_SAFE_INTEGER (2^53 - 1): the code runs with {runs}, not the id {} written here",
            id.value()
        ),
        format!(
            "write it as a BigInt (`{}n`), as the PostgreSQL driver needs for a bigint beyond 2^53, or use an id below 2^53",
            id.value()
        ),
    )
}

/// `unknown-lock-helper`: a call of a name that says it takes an advisory lock, which the tree
/// does not define and `[scan] wrappers` does not declare.
pub(crate) fn unknown_lock_helper(name: &str) -> Said {
    said(
        Code::UnknownLockHelper,
        Severity::Note,
        format!(
            "`{name}` is named as if it takes an advisory lock, but no file of the tree defines it and `[scan] wrappers` does not declare it: the key of this call is not checked"
        ),
        format!(
            "declare the library's helper so its calls are checked: `[scan] wrappers = [{{ name = \"{name}\", position = N }}]`, N its key's place among the arguments"
        ),
    )
}

/// `invalid-glob`: one `[scan]` glob that does not parse.
pub(crate) fn invalid_glob(glob: &str, error: &dyn std::fmt::Display) -> Said {
    Said::new(
        Code::InvalidGlob,
        Severity::Error,
        format!("[scan] glob `{glob}` does not parse: {error}"),
    )
}

/// `invalid-glob`: the `[scan]` globs together do not parse.
pub(crate) fn invalid_globs(error: &dyn std::fmt::Display) -> Said {
    Said::new(
        Code::InvalidGlob,
        Severity::Error,
        format!("[scan] globs do not parse: {error}"),
    )
}

/// `unreadable`: a file or directory the walk could not read (`why`: the walk's error).
pub(crate) fn unreadable(why: String) -> Said {
    said(
        Code::Unreadable,
        Severity::Warning,
        why,
        "check the file's permissions, or exclude it with `[scan] exclude`",
    )
}

/// `unreadable-file`: a source file whose reading failed.
pub(crate) fn unreadable_file(path: &str, error: &std::io::Error) -> Said {
    said(
        Code::UnreadableFile,
        Severity::Warning,
        format!("cannot read `{path}`: {error}; its advisory locks were not checked"),
        "check the file's permissions, or exclude it with `[scan] exclude`",
    )
}

/// Why a source file was not read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Skipped {
    /// A NUL byte in its first 8 KiB.
    Binary,
    /// Over the scan's size limit (the limit, in bytes).
    TooLarge(u64),
    /// A symbolic link the walk does not follow (`true`), or another entry that is not a
    /// regular file.
    NotFollowed { link: bool },
}

/// `file-not-read`: a source file the scan skipped.
pub(crate) fn file_not_read(path: &str, skipped: Skipped) -> Said {
    let why = match skipped {
        Skipped::Binary => {
            "it has a NUL byte in its first 8 KiB, so the scan takes it for a binary file"
                .to_owned()
        }
        Skipped::TooLarge(limit) => format!("it is larger than the scan's limit of {limit} bytes"),
        Skipped::NotFollowed { link: true } => {
            "it is a symbolic link, which the scan does not follow".to_owned()
        }
        Skipped::NotFollowed { link: false } => "it is not a regular file".to_owned(),
    };
    let help = match skipped {
        Skipped::Binary => {
            "if it is text, remove the NUL byte; if it holds no lock ids, exclude it with `[scan] exclude`"
        }
        Skipped::TooLarge(_) => {
            "check its advisory lock ids by hand (a generated bundle's source is scanned where it lies), or exclude it with `[scan] exclude`"
        }
        Skipped::NotFollowed { .. } => {
            "a link's target inside the tree is scanned where it lies; one outside is not: scan it where it lives, or exclude the link with `[scan] exclude`"
        }
    };
    said(
        Code::FileNotRead,
        Severity::Note,
        format!("`{path}` was not scanned: {why}"),
        help,
    )
}

/// A key as the messages show it: a bigint, or a pair in parentheses.
fn key_text(key: AdvisoryKey) -> String {
    match key {
        AdvisoryKey::Bigint(k) => k.to_string(),
        AdvisoryKey::Pair(a, b) => format!("({a}, {b})"),
    }
}

/// `text` as one word a POSIX shell reads back unchanged: as it is when it holds only
/// characters no shell treats specially, else in single quotes.
fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '@' | '+')
        })
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_help_commands_word_is_quoted_only_when_a_shell_would_change_it() {
        use super::shell_word;
        assert_eq!(
            shell_word("services/api/reports.py"),
            "services/api/reports.py"
        );
        assert_eq!(shell_word("ADVISORY_LOCK_X"), "ADVISORY_LOCK_X");
        assert_eq!(shell_word("old api/x.py"), "'old api/x.py'");
        assert_eq!(shell_word("LOCKS[\"reindex\"]"), "'LOCKS[\"reindex\"]'");
        assert_eq!(shell_word("it's.py"), "'it'\\''s.py'");
        assert_eq!(shell_word(""), "''");
    }
}
