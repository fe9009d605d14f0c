//! Every finding this crate reports, phrased: one function per diagnostic, named after what it
//! says, taking the values the logic found and returning what the finding says ([`Said`]). The
//! logic decides whether and where; this module decides the words.

use std::fmt::{Display, Write as _};

use crate::finding::{Code, Severity};
use crate::id::{Id, Keys};
use crate::said::Said;

/// A finding's words, without help yet.
fn said(code: Code, severity: Severity, message: impl Into<String>) -> Said {
    Said::new(code, severity, message)
}

/// What an error says.
fn error(code: Code, message: impl Into<String>) -> Said {
    said(code, Severity::Error, message)
}

/// What a warning says.
fn warning(code: Code, message: impl Into<String>) -> Said {
    said(code, Severity::Warning, message)
}

// The registry file: reading and TOML.

/// A file's bytes are not UTF-8; `byte` is the first invalid one.
pub(crate) fn not_utf8(byte: u8) -> Said {
    error(
        Code::Unreadable,
        format!("the file is not UTF-8: invalid byte 0x{byte:02X}"),
    )
    .with_help("save the file as UTF-8")
}

/// The TOML parser overflowed on an integer: it does not fit a bigint.
pub(crate) fn integer_beyond_bigint() -> Said {
    error(
        Code::IdOutOfRange,
        "integer does not fit in PostgreSQL's bigint (-2^63 ..= 2^63-1)",
    )
    .with_help("advisory lock ids are bigint; pick an id inside core's block")
}

/// The registry is not TOML; `reason` is the parser's message.
pub(crate) fn invalid_toml(reason: &str) -> Said {
    error(Code::TomlSyntax, format!("invalid TOML: {reason}"))
}

// The registry's tables and values.

/// `[project] name` is empty, too long or has characters other than the allowed ones; `max` is
/// the longest name allowed.
pub(crate) fn project_name_not_allowed(name: &str, max: usize) -> Said {
    error(
        Code::InvalidProjectName,
        format!("project name `{}` is not allowed", name.escape_debug()),
    )
    .with_help(format!(
        "a project name is 1 to {max} ASCII letters, digits, `_`, `-` or `.` \
         (no spaces): it names every lock session in PostgreSQL's application_name"
    ))
}

/// A required table (`[project]`, `[core]`) is missing.
pub(crate) fn missing_table(key: &str) -> Said {
    error(Code::MissingField, format!("missing the [{key}] table")).with_help(format!(
        "add a [{key}] table; the registry guide (docs/registry.md) shows its fields"
    ))
}

/// `key` should be a table but holds a value of type `found`.
pub(crate) fn not_a_table(key: &str, found: &str) -> Said {
    error(
        Code::WrongType,
        format!("`{key}` must be a table, found {found}"),
    )
}

/// `key` is not one of the `known` keys of `place`; `near` is the known key it most likely meant.
pub(crate) fn unknown_key(key: &str, place: &str, near: Option<&str>, known: &[&str]) -> Said {
    error(Code::UnknownKey, format!("unknown key `{key}` in {place}")).with_help(match near {
        Some(near) => format!("did you mean `{near}`?"),
        None => format!("known keys here: {}", known.join(", ")),
    })
}

/// Core's constants file `path` is in a language `lockward take` does not write constants in.
pub(crate) fn constants_language_not_written(path: &str) -> Said {
    error(
        Code::UnsupportedConstantsLanguage,
        format!("core's constants file `{path}` is not in a language lockward writes constants in"),
    )
    .with_help(format!(
        "use a {} file (by its extension); ids defined elsewhere are `defined_in` entries",
        lockward_lang::Language::CONSTANTS_LANGUAGES
    ))
}

/// The path `path` that `key` names leaves the registry's directory: it is absolute, or (when
/// not `absolute`) it climbs out with `..`.
pub(crate) fn path_outside_project(key: &str, path: &str, absolute: bool) -> Said {
    let why = if absolute {
        "is absolute: paths in the registry are relative to its directory"
    } else {
        "climbs out of the registry's directory with `..`"
    };
    error(Code::PathOutsideProject, format!("{key} `{path}` {why}"))
        .with_help("name a file inside the project, relative to the registry's directory")
}

/// `place` (a table, an entry) does not have the required `key`.
pub(crate) fn missing_key(place: &str, key: &str) -> Said {
    error(Code::MissingField, format!("{place} is missing `{key}`"))
}

/// A string value of `key` is empty or blank.
pub(crate) fn empty_string(key: &str) -> Said {
    error(Code::WrongType, format!("`{key}` must not be empty"))
}

/// `key` should be a string but holds a value of type `found`.
pub(crate) fn not_a_string(key: &str, found: &str) -> Said {
    error(
        Code::WrongType,
        format!("`{key}` must be a string, found {found}"),
    )
}

/// `key` should be an array of strings but holds a value of type `found`.
pub(crate) fn not_a_string_list(key: &str, found: &str) -> Said {
    error(
        Code::WrongType,
        format!("`{key}` must be an array of strings, found {found}"),
    )
}

/// An item of the array `key` is a value of type `found`, not a string.
pub(crate) fn list_item_not_a_string(key: &str, found: &str) -> Said {
    error(
        Code::WrongType,
        format!("`{key}` must hold strings, found {found}"),
    )
}

/// `key` should be an integer but holds a value of type `found`.
pub(crate) fn not_an_integer(key: &str, found: &str) -> Said {
    error(
        Code::WrongType,
        format!("`{key}` must be an integer, found {found}"),
    )
}

/// `key` should be an array of tables (`[[key]]`) but holds a value of type `found`.
pub(crate) fn not_an_array_of_tables(key: &str, found: &str) -> Said {
    error(
        Code::WrongType,
        format!("`{key}` must be an array of tables (`[[{key}]]`), found {found}"),
    )
}

/// `[core]` has no `block`.
pub(crate) fn missing_block() -> Said {
    missing_key("[core]", "block").with_help("add `block = { start = 1_001_001, end = 1_001_999 }`")
}

/// Core's block starts above its end.
pub(crate) fn block_inverted(start: &Id, end: &Id) -> Said {
    error(
        Code::InvalidBlock,
        format!("the block starts at {start} but ends at {end}"),
    )
    .with_help("the block is inclusive: `start` must not be above `end`")
}

/// A glob does not parse; `reason` is why.
pub(crate) fn invalid_glob(glob: &str, reason: &dyn Display) -> Said {
    error(
        Code::InvalidGlob,
        format!("`{glob}` is not a valid glob: {reason}"),
    )
}

/// A `[plugins] manifests` glob reaches outside the registry's directory: it is absolute, or
/// (when not `absolute`) it climbs out with `..`.
pub(crate) fn glob_outside_project(glob: &str, absolute: bool) -> Said {
    let why = if absolute {
        "is absolute"
    } else {
        "climbs out with `..`"
    };
    error(
        Code::GlobOutsideProject,
        format!(
            "manifest glob `{}` {why}: it would read files outside the registry's directory",
            glob.escape_debug()
        ),
    )
    .with_help(
        "manifest globs are relative to lockward.toml and stay under its directory, e.g. `plugins/*/plugin.toml`",
    )
}

/// `[scan] wrappers` holds a value of type `found`, not an array.
pub(crate) fn wrappers_not_an_array(found: &str) -> Said {
    error(
        Code::WrongType,
        format!("`wrappers` must be an array of inline tables, found {found}"),
    )
}

/// A `wrappers` entry is a value of type `found`, not an inline table.
pub(crate) fn wrapper_not_a_table(found: &str) -> Said {
    error(
        Code::WrongType,
        format!(
            "a wrapper must be an inline table such as `{{ name = \"with_lock\", position = 1 }}`, found {found}"
        ),
    )
}

/// A wrapper's `name` is not a function name.
pub(crate) fn wrapper_name_not_a_function(name: &str) -> Said {
    error(
        Code::WrongType,
        format!(
            "wrapper name `{}` is not a function name (`with_lock`, or `Locker.acquire`)",
            name.escape_debug()
        ),
    )
}

/// A wrapper's `position` is not an argument position from 1 to 64.
pub(crate) fn wrapper_position_out_of_range() -> Said {
    error(
        Code::WrongType,
        "a wrapper's `position` is the key's argument position, from 1 (the first argument) to 64",
    )
}

/// A wrapper's `keyword` is not an identifier.
pub(crate) fn wrapper_keyword_not_an_identifier(keyword: &str) -> Said {
    error(
        Code::WrongType,
        format!(
            "wrapper keyword `{}` is not an identifier",
            keyword.escape_debug()
        ),
    )
}

/// A wrapper says neither where its key is (`position`) nor by which name (`keyword`).
pub(crate) fn wrapper_without_position() -> Said {
    error(
        Code::MissingField,
        "a wrapper needs `position` (1-based), `keyword`, or both",
    )
    .with_help("e.g. `{ name = \"with_lock\", position = 1 }`")
}

/// A `[[share]]` entry's `registry` is blank.
pub(crate) fn share_registry_empty() -> Said {
    error(
        Code::WrongType,
        "`registry` is empty: name the other project's lockward.toml",
    )
}

// The registry's entries.

/// A `[[lock]]` entry has neither an `id` nor a `name`.
pub(crate) fn lock_without_id() -> Said {
    error(Code::MissingField, "this [[lock]] entry has no `id`")
}

/// An entry's `key` is neither `exact` nor `family`.
pub(crate) fn key_form_unknown() -> Said {
    error(Code::WrongType, "`key` must be \"exact\" or \"family\"")
}

/// A lock taken by name does not say which library hashes its name; `known` are the libraries
/// lockward knows.
pub(crate) fn named_lock_without_hash(name: &str, known: &[&str]) -> Said {
    error(
        Code::MissingField,
        format!("the lock named {name:?} does not say which library hashes its name (`hash`)"),
    )
    .with_help(format!(
        "add `hash = \"LIBRARY\"`, one of: {}",
        known.join(", ")
    ))
}

/// An entry has a `hash` but no `name`.
pub(crate) fn hash_without_name() -> Said {
    error(Code::MissingField, "`hash` without the `name` it hashes")
        .with_help("add `name = \"...\"`, the lock's name as the code passes it")
}

/// A named lock's `hash` is no library lockward knows (`known`); `near` is the one it most
/// likely meant.
pub(crate) fn unknown_name_hash(hash: &str, near: Option<&str>, known: &[&str]) -> Said {
    error(
        Code::UnknownNameHash,
        format!("lockward does not know how `{hash}` turns a lock's name into a key"),
    )
    .with_help(match near {
        Some(near) => format!("did you mean `{near}`? known: {}", known.join(", ")),
        None => format!("known: {}", known.join(", ")),
    })
}

/// A named lock's `key` is not the form its library takes it in.
pub(crate) fn named_lock_in_other_key_form(hash: &str, name: &str) -> Said {
    error(
        Code::NameKeyMismatch,
        format!("{hash} takes the lock named {name:?} in the other key form"),
    )
    .with_help("leave `key` out: a named lock's form is its library's")
}

/// A named lock's `id` is not `key`, the key its library computes for its name.
pub(crate) fn named_lock_id_not_its_key(id: &Id, hash: &str, name: &str, key: i64) -> Said {
    error(
        Code::NameKeyMismatch,
        format!("id {id} is not the key {hash} takes for the lock named {name:?}, which is {key}"),
    )
    .with_help(format!(
        "write `id = {key}`, or leave `id` out: it is computed from the name"
    ))
}

/// Two entries register one id.
pub(crate) fn duplicate_id(id: &Id) -> Said {
    error(Code::DuplicateId, format!("id {id} is registered twice"))
        .with_help("every id has exactly one entry; take a new one with `lockward take`")
}

/// The label at the entry that registered an id or a constant first.
pub(crate) fn first_registered_here() -> &'static str {
    "first registered here"
}

/// Two entries register the constant `constant` for the defining file `path`.
pub(crate) fn duplicate_constant(constant: &str, path: &str) -> Said {
    error(
        Code::DuplicateConstant,
        format!("constant `{constant}` is registered twice for {path}"),
    )
}

/// An entry's `constant` is neither an identifier nor a member name.
pub(crate) fn invalid_constant_name(constant: &str) -> Said {
    error(
        Code::InvalidConstantName,
        format!("`{constant}` is not an identifier nor a member name"),
    )
    .with_help(
        "a constant name is ASCII letters, digits and `_`, not starting with a digit; a member of a collection or enum is `LOCKS[\"reindex\"]`, `LOCKS[:reindex]`, `Locks.REINDEX` or `Locks::Reindex`",
    )
}

/// An external entry has neither a `constant` nor a `site`.
pub(crate) fn external_without_constant(id: &Id) -> Said {
    error(
        Code::MissingField,
        format!(
            "external id {id} needs the `constant` it is defined as, or the `site` it is written at"
        ),
    )
    .with_help(
        "add `constant = \"NAME\"`; for a literal at a call site, say where: `site = \"PeriodicTask(advisory_lock_id=)\"`",
    )
}

/// An entry has a `site` but no `defined_in`, and is nothing else.
pub(crate) fn site_without_defined_in(id: &Id) -> Said {
    error(
        Code::MissingField,
        format!(
            "id {id} has a `site` but no `defined_in`: an external says which files \
             write it"
        ),
    )
    .with_help(
        "an id written at a call site is an external: list the files that write it in `defined_in`",
    )
}

/// An entry sets none of the fields that say what it is.
pub(crate) fn entry_without_kind(id: &Id) -> Said {
    error(
        Code::MissingField,
        format!("id {id} does not say what it is"),
    )
    .with_help(
        "give it a `constant` (with `worker`), or `plugin`, `retired`, `reserved` or `defined_in`",
    )
}

/// An entry of `kind` (`constant`, `external`, `named`) does not name its worker.
pub(crate) fn missing_worker(kind: &str, id: &Id) -> Said {
    error(
        Code::MissingWorker,
        format!("{kind} id {id} does not name its `worker`"),
    )
    .with_help("add `worker = \"...\"`: the background worker that holds this lock")
}

/// A family's id does not fit in an int4.
pub(crate) fn family_beyond_int4(id: &Id) -> Said {
    error(
        Code::FamilyOutOfRange,
        format!("family id {id} does not fit in an int4"),
    )
    .with_help(
        "a family id is the first int4 of `pg_advisory_lock(id, n)`: -2147483648 ..= 2147483647",
    )
}

/// A core constant's id lies outside core's block `start..=end`.
pub(crate) fn constant_outside_block(id: &Id, start: &Id, end: &Id) -> Said {
    warning(
        Code::ConstantOutsideBlock,
        format!("core constant id {id} lies outside core's block {start}..={end}"),
    )
    .with_help("legacy ids are allowed; new ids come from the block (`lockward take`)")
}

/// An entry sets the fields `fields` (at least two), which exclude each other.
pub(crate) fn conflicting_kinds(id: &Id, fields: &[&str]) -> Said {
    let fields: Vec<String> = fields.iter().map(|field| format!("`{field}`")).collect();
    error(
        Code::ConflictingKinds,
        format!(
            "id {id} sets {}, which exclude each other",
            fields.join(" and ")
        ),
    )
    .with_help(
        "an entry is exactly one of: a constant, an external (defined_in), a lock taken by name (name and hash), a handover (plugin), retired or reserved",
    )
}

/// The label at a field that conflicts with the finding's.
pub(crate) fn set_here(field: &str) -> String {
    format!("`{field}` set here")
}

/// An entry sets both `constant` and `site`.
pub(crate) fn constant_and_site(id: &Id) -> Said {
    error(
        Code::ConflictingKinds,
        format!("id {id} sets both `constant` and `site`, which exclude each other"),
    )
    .with_help(
        "an external is either defined as a constant (`constant`) or written as a literal at a call site (`site`)",
    )
}

// Plugin manifests.

/// A manifest is not TOML; `reason` is the parser's message.
pub(crate) fn manifest_not_toml(reason: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("the manifest is not valid TOML: {reason}"),
    )
}

/// A manifest is not JSON; `reason` is the parser's message.
pub(crate) fn manifest_not_json(reason: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("the manifest is not valid JSON: {reason}"),
    )
}

/// A TOML manifest has no table at the dotted path `table`.
pub(crate) fn manifest_without_table(table: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("the manifest has no `[{table}]` table"),
    )
}

/// A JSON manifest has no object at the dotted path `table`.
pub(crate) fn manifest_without_object(table: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("the manifest has no `{table}` object"),
    )
}

/// A TOML manifest's table has no `name`.
pub(crate) fn table_without_name(table: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("`[{table}]` is missing the plugin's `name`"),
    )
}

/// A JSON manifest's object has no `name`.
pub(crate) fn object_without_name(table: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("`{table}` is missing the plugin's `name` string"),
    )
}

/// A manifest's `name` is not a string, or is blank.
pub(crate) fn plugin_name_empty() -> Said {
    error(
        Code::MalformedManifest,
        "the plugin's `name` must be a non-empty string",
    )
}

/// A TOML manifest's table has no `advisory_lock_ids`.
pub(crate) fn table_without_ids(table: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("`[{table}]` is missing `advisory_lock_ids`"),
    )
}

/// A JSON manifest's object has no `advisory_lock_ids`.
pub(crate) fn object_without_ids(table: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("`{table}` is missing the `advisory_lock_ids` array"),
    )
}

/// A TOML manifest's `advisory_lock_ids` is not an array.
pub(crate) fn ids_not_an_array() -> Said {
    error(
        Code::MalformedManifest,
        "`advisory_lock_ids` must be an array of integers",
    )
}

/// A JSON manifest's `advisory_lock_ids` is a value of type `found`, not an array.
pub(crate) fn ids_not_an_array_found(found: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("`advisory_lock_ids` must be an array of integers, found {found}"),
    )
}

/// A declared id is a value of type `found`, not an integer.
pub(crate) fn id_not_an_integer(found: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("advisory lock ids are integers, found {found}"),
    )
}

/// A declared id is a number written with a fraction or an exponent (`written`).
pub(crate) fn id_not_an_integer_literal(written: &str) -> Said {
    id_not_an_integer(&format!("`{written}`"))
}

/// A declared id (`written`) does not fit a bigint.
pub(crate) fn id_beyond_bigint(written: &str) -> Said {
    error(
        Code::MalformedManifest,
        format!("`{written}` does not fit in PostgreSQL's bigint (-2^63 ..= 2^63-1)"),
    )
}

/// A manifest declares one id twice.
pub(crate) fn id_declared_twice(plugin: &str, id: &Id) -> Said {
    error(
        Code::MalformedManifest,
        format!("plugin `{plugin}` declares id {id} twice"),
    )
}

/// The label at the first declaration of an id a manifest declares twice.
pub(crate) fn first_declared_here() -> &'static str {
    "first declared here"
}

/// Two manifests (at `first` and `second`) name the same plugin.
pub(crate) fn plugin_name_used_twice(name: &str, first: &str, second: &str) -> Said {
    error(
        Code::DuplicatePlugin,
        format!("plugin name `{name}` is used by two manifests: {first} and {second}"),
    )
}

/// The label at the other manifest that uses a plugin's name.
pub(crate) fn also_named_here() -> &'static str {
    "also named here"
}

/// The help of a refused id that core holds for itself or another plugin.
const OWN_ID: &str = "give the plugin an id of its own";

/// A plugin declares an id that is core's: an entry of `kind` (`constant`, `external`, `named`)
/// named `name` (its constant, site or lock name).
pub(crate) fn plugin_collides_with_core(plugin: &str, id: &Id, kind: &str, name: &str) -> Said {
    let what = match kind {
        "constant" => "constant",
        "named" => "lock taken by name",
        _ => "external id",
    };
    error(
        Code::PluginCollidesWithCore,
        format!("plugin `{plugin}` declares id {id}, which is core's {what} `{name}`"),
    )
    .with_help(OWN_ID)
}

/// The label at the core entry a plugin's id collides with.
pub(crate) fn core_uses_it() -> &'static str {
    "core uses it"
}

/// A plugin declares a retired id.
pub(crate) fn plugin_uses_retired_id(plugin: &str, id: &Id, reason: &str) -> Said {
    error(
        Code::PluginUsesRetiredId,
        format!(
            "plugin `{plugin}` declares id {id}, which is retired ({reason}) and never reassigned"
        ),
    )
    .with_help(OWN_ID)
}

/// The label at the entry that retired an id.
pub(crate) fn retired_here() -> &'static str {
    "retired here"
}

/// A plugin declares an id core handed over to the plugin `holder`.
pub(crate) fn plugin_takes_others_handover(plugin: &str, id: &Id, holder: &str) -> Said {
    error(
        Code::PluginTakesOthersHandover,
        format!("plugin `{plugin}` declares id {id}, which core handed over to plugin `{holder}`"),
    )
    .with_help(OWN_ID)
}

/// The label at the entry that handed an id over.
pub(crate) fn handed_over_here() -> &'static str {
    "handed over here"
}

/// A plugin declares an id core reserved; core's block is `start..=end`.
pub(crate) fn plugin_id_reserved(
    plugin: &str,
    id: &Id,
    reason: &str,
    start: &Id,
    end: &Id,
) -> Said {
    error(
        Code::PluginIdInCoreBlock,
        format!("plugin `{plugin}` declares id {id}, which is reserved: {reason}"),
    )
    .with_help(block_is_cores(plugin, start, end))
}

/// The label at the entry that reserved an id.
pub(crate) fn reserved_here() -> &'static str {
    "reserved here"
}

/// A plugin declares an id inside core's block `start..=end` that was not handed over to it.
pub(crate) fn plugin_id_in_core_block(plugin: &str, id: &Id, start: &Id, end: &Id) -> Said {
    error(
        Code::PluginIdInCoreBlock,
        format!(
            "plugin `{plugin}` declares id {id}, inside core's block {start}..={end} without a handover"
        ),
    )
    .with_help(block_is_cores(plugin, start, end))
}

/// The help of a plugin's id inside core's block `start..=end`.
fn block_is_cores(plugin: &str, start: &Id, end: &Id) -> String {
    format!(
        "the block is core's to allocate: hand the id over with `lockward take CONSTANT --worker TEXT --plugin {plugin}`, or pick an id outside {start}..={end}"
    )
}

/// Two plugins declare one id: `plugin`, and `other`, whose manifest is at `other_path`.
pub(crate) fn plugin_id_shared(plugin: &str, id: &Id, other: &str, other_path: &str) -> Said {
    error(
        Code::PluginIdShared,
        format!(
            "plugin `{plugin}` declares id {id}, which plugin `{other}` also declares ({other_path})"
        ),
    )
    .with_help("two workers on one id skip each other's cycles; give each plugin its own id")
}

/// The label at another plugin's declaration of a shared id.
pub(crate) fn declared_by_here(plugin: &str) -> String {
    format!("declared by `{plugin}` here")
}

/// An id is handed over to `plugin`, whose manifests do not declare it.
pub(crate) fn unused_handover(id: &Id, plugin: &str) -> Said {
    warning(
        Code::UnusedHandover,
        format!(
            "id {id} is handed over to plugin `{plugin}`, but no manifest of `{plugin}` declares it"
        ),
    )
    .with_help(format!(
        "add {id} to `{plugin}`'s advisory_lock_ids, or retire the id"
    ))
}

// Registries that share a database.

/// The registry at `path`, shared with this one, is of this project's name `project` too.
pub(crate) fn shared_project_name(path: &str, project: &str) -> Said {
    error(
        Code::SharedProjectName,
        format!(
            "the shared registry {path} is project `{project}` too: two projects of one name on one database cannot be told apart"
        ),
    )
    .with_help("give one of the projects another `[project] name`")
}

/// One registry's entry that owns a key another registry's entry owns too, as [`shared_key`]
/// names it.
pub(crate) struct Owner<'a> {
    /// The registry's project name.
    pub(crate) project: &'a str,
    /// The registry's block: its first and last id.
    pub(crate) block: (&'a Id, &'a Id),
    /// The entry's id.
    pub(crate) id: &'a Id,
    /// The entry's constant, if it has one.
    pub(crate) constant: Option<&'a str>,
    /// The plugin the id is handed over to, for a handover.
    pub(crate) plugin: Option<&'a str>,
    /// The entry's kind (`constant`, `retired`, ...).
    pub(crate) kind: &'a str,
    /// The keys the entry owns.
    pub(crate) keys: Keys,
}

impl Owner<'_> {
    /// ` (ADVISORY_LOCK_X)`, ` (retired)`, ` (plugin billing)`: what the entry is.
    fn described(&self) -> String {
        match (self.constant, self.plugin) {
            (Some(constant), _) => format!(" ({constant})"),
            (None, Some(plugin)) => format!(" (plugin {plugin})"),
            (None, None) => format!(" ({})", self.kind),
        }
    }
}

/// An entry of this registry (`mine`, reserved on `branch` when it is not on the current one) and
/// one of another (`theirs`) own a key; `severity` is a warning when one of them is retired.
pub(crate) fn shared_key(
    mine: &Owner<'_>,
    theirs: &Owner<'_>,
    branch: Option<&str>,
    severity: Severity,
) -> Said {
    let other = theirs.project;
    let (my_keys, their_keys) = (mine.keys, theirs.keys);
    let shared = if my_keys == their_keys {
        format!("both own {my_keys}")
    } else {
        format!("{my_keys} here and {their_keys} there share keys")
    };
    let mut message = format!(
        "id {}{} is project {other}'s too ({}{}): {shared}, so their workers skip each other's cycles",
        mine.id,
        mine.described(),
        theirs.id,
        theirs.described(),
    );
    if let Some(branch) = branch {
        let _ = write!(message, " (reserved on branch {branch})");
    }
    let help = if severity == Severity::Error {
        format!(
            "one of the two projects takes a new id (`lockward take`); blocks that do not overlap keep it so: this registry's is {}..={}, {other}'s {}..={}",
            mine.block.0, mine.block.1, theirs.block.0, theirs.block.1,
        )
    } else {
        "a retired id is never taken again here; a worker still running the old code would collide with the other project's".to_owned()
    };
    said(Code::SharedKey, severity, message).with_help(help)
}

/// The label at the other registry's entry for a shared key.
pub(crate) fn their_entry(project: &str, id: &Id) -> String {
    format!("project {project}'s entry for {id}")
}

// Well-known tools' keys.

/// A registry id is `key`, the fixed advisory lock key of the tool `holder` (as found at
/// `source`).
pub(crate) fn well_known_key(id: &Id, holder: &str, key: i64, source: &str) -> Said {
    error(
        Code::WellKnownKey,
        format!(
            "id {id} is the advisory lock key of {holder} ({key}, from {source}): while it holds it, this worker skips its cycles, and the other way round"
        ),
    )
    .with_help("give the worker another id (`lockward take` never hands out a well-known key)")
}

/// The project uses Que (named in `gemfile`), whose job ids, counting up from `start` (as found
/// at `source`), will reach the registry id `id`.
pub(crate) fn que_job_ids(gemfile: &str, start: i64, source: &str, id: &Id) -> Said {
    warning(
        Code::QueJobIds,
        format!(
            "{gemfile} uses Que, which locks each job by its id (pg_try_advisory_lock(job id), ids counting up from {start}; {source}): once Que has made {id} jobs, one of them and this worker share a key"
        ),
    )
    .with_help(
        "use an id Que's job ids will not reach (2_147_483_648 or above) or a family (`key = \"family\"`: Que takes one-int keys only)",
    )
}
