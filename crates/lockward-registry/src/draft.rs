//! Registering ids the code already uses: drafting a whole registry for a codebase that has
//! none (`lockward init`), and one entry for an id already defined (`lockward take` of an
//! existing constant).
//!
//! Everything here is a pure function from what the scan found to registry text: the caller
//! scans, decides which file is core's constants file, and writes. The rules that need no tree:
//! - the block ([`block_around`]): the aligned power-of-ten window, at least 1 000 ids wide,
//!   around the largest cluster of core's ids, with at least as much room above the highest
//!   one as the cluster spans;
//! - a worker's text from a constant's name when no comment says it ([`worker_from_name`]);
//! - the project's name from a directory's name ([`project_name`]);
//! - an id written as the code writes it, in TOML's integer syntax ([`toml_literal`]).

use std::fmt::Write as _;

use crate::finding::Finding;
use crate::id::{Id, KeyShape};
use crate::parse::parse;
use crate::registry::{Registry, Source};
use crate::toml_text::{array, toml_string};
use lockward_lang::Language;

/// Two of core's ids further apart than this belong to different clusters: a legacy id far
/// from the others does not stretch the block over millions of ids.
const CLUSTER_GAP: i128 = 100_000;

/// The narrowest block [`block_around`] proposes.
const MIN_BLOCK: i128 = 1_000;

/// The block that fits core's ids: `start..=end`, or `None` when there are none.
///
/// The ids are split into clusters where two neighbours are more than 100 000 apart; the
/// cluster with the most ids (the higher one on a tie: new ids are taken there) decides. The
/// block is the window `[k·u, (k+1)·u − 1]` for the smallest power of ten `u` ≥ 1 000 such that
/// the window holds the whole cluster and leaves at least as many free ids above its highest
/// id as the cluster spans (a window past `i64::MAX` ends there); when no window leaves that
/// much room (ids just below `-1`), the smallest window that holds the cluster, and for a
/// cluster on both sides of zero the thousands around it. Core ids outside the block stay
/// registered (`check` warns about them: legacy ids are allowed).
pub fn block_around(ids: &[i64]) -> Option<(i64, i64)> {
    let mut sorted: Vec<i128> = ids.iter().map(|&id| i128::from(id)).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut best: Option<&[i128]> = None;
    let mut start = 0;
    for end in 1..=sorted.len() {
        if end == sorted.len() || sorted[end] - sorted[end - 1] > CLUSTER_GAP {
            let cluster = &sorted[start..end];
            if best.is_none_or(|best| cluster.len() >= best.len()) {
                best = Some(cluster);
            }
            start = end;
        }
    }
    let cluster = best?;
    let (low, high) = (cluster[0], cluster[cluster.len() - 1]);
    let span = high - low + 1;
    let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
    let window = |start: i128, end: i128| {
        Some((
            i64::try_from(start.max(min)).ok()?,
            i64::try_from(end.min(max)).ok()?,
        ))
    };
    let mut fallback = None;
    let mut unit = MIN_BLOCK;
    while unit <= 10i128.pow(19) {
        let start = low.div_euclid(unit) * unit;
        let end = (start + unit - 1).min(max);
        if end >= high {
            if end - high >= span || end == max {
                return window(start, end);
            }
            fallback = fallback.or_else(|| window(start, end));
        }
        unit *= 10;
    }
    // A cluster on both sides of zero is in no aligned window: the thousands around it.
    fallback.or_else(|| {
        window(
            low.div_euclid(MIN_BLOCK) * MIN_BLOCK,
            (high.div_euclid(MIN_BLOCK) + 1) * MIN_BLOCK - 1,
        )
    })
}

/// The worker a constant's name suggests, when no comment beside it says: its words in lower
/// case, without the words that only say it is a lock (`ADVISORY_LOCK_INVOICE_ROLLUP` →
/// "invoice rollup", `_CATALOG_LOCK_KEY` → "catalog", `Locks.REINDEX` → "reindex",
/// `LOCKS["search reindex"]` → "search reindex"). A name of lock words only keeps them all.
pub fn worker_from_name(name: &str) -> String {
    let words = words(name);
    let is_lead = |w: &str| matches!(w, "advisory" | "lock" | "locks" | "pg" | "lockid" | "ids");
    let is_tail = |w: &str| matches!(w, "lock" | "locks" | "key" | "keys" | "id" | "ids" | "num");
    let mut kept: &[String] = &words;
    while let Some((first, rest)) = kept.split_first()
        && is_lead(first)
    {
        kept = rest;
    }
    while let Some((last, rest)) = kept.split_last()
        && is_tail(last)
    {
        kept = rest;
    }
    if kept.is_empty() {
        words.join(" ")
    } else {
        kept.join(" ")
    }
}

/// The words of a name in lower case, split at `_`, at punctuation (a member name's `.`, `["`,
/// `::`, spaces) and where the case changes (`advisoryLockFoo`, `HTTPServer` → `http server`).
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let chars: Vec<char> = part.chars().collect();
        let mut word = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                Some(p) if c.is_ascii_uppercase() => {
                    p.is_ascii_lowercase()
                        || p.is_ascii_digit()
                        || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
                }
                _ => false,
            };
            if boundary && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            word.push(c.to_ascii_lowercase());
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// A project name from a directory's name, kept to what `[project] name` allows: ASCII letters,
/// digits, `_`, `-` and `.`, 1 to 32 of them. Any other run of characters becomes one `-`;
/// `project` when nothing is left.
pub fn project_name(dir_name: &str) -> String {
    let mut name = String::new();
    for c in dir_name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
            name.push(c);
        } else if !name.ends_with('-') {
            name.push('-');
        }
    }
    let name: String = name.trim_matches('-').chars().take(32).collect();
    let name = name.trim_end_matches('-');
    if name.is_empty() || name.chars().all(|c| c == '.') {
        "project".to_owned()
    } else {
        name.to_owned()
    }
}

/// The id `value` as TOML writes it, keeping the code's literal where TOML can read it
/// (`1_001_001`, `0x6E697374`; the type suffix `language` allows, such as `i64`, `L`, `n`,
/// dropped), and plain decimal otherwise (`0X4C`, `-0x10`, `017`, an expression).
pub fn toml_literal(code_literal: &str, value: i64, language: Option<Language>) -> Id {
    let text = code_literal.trim();
    let text = language.map_or(text, |language| language.strip_suffix(text));
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    // TOML refuses a decimal with a leading zero (Rust reads `017` as 17, Go as 15).
    let leading_zero = unsigned.len() > 1
        && unsigned.starts_with('0')
        && !["0x", "0o", "0b"]
            .iter()
            .any(|prefix| unsigned.starts_with(prefix));
    match lockward_lang::parse_id(text) {
        Some(parsed) if parsed == value && !leading_zero => Id::new(value, text),
        _ => Id::plain(value),
    }
}

/// What one drafted `[[lock]]` entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftKind {
    /// A core constant, defined in core's constants file.
    Constant {
        /// Its name.
        constant: String,
    },
    /// An id defined outside core's constants file: by a constant, or as a literal at a call
    /// site (then `site` says how it is written there).
    External {
        /// The constant's name, if it has one.
        constant: Option<String>,
        /// For a literal at a call site: how it is written (`PeriodicTask(advisory_lock_id=)`).
        site: Option<String>,
        /// The files that define it or write it, relative to the registry's directory.
        defined_in: Vec<String>,
    },
    /// An id core hands over to a plugin.
    Handover {
        /// The plugin's name.
        plugin: String,
    },
    /// A lock the code takes by name through a library that hashes it: the entry is written by
    /// its name and library, its id being the key the library computes.
    Named {
        /// The name as the code writes it.
        name: String,
        /// The library's catalogue id (`django-pglocks`).
        hash: String,
    },
}

/// One drafted `[[lock]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftEntry {
    /// The id, as written.
    pub id: Id,
    /// What it is.
    pub kind: DraftKind,
    /// The worker that holds it (none for a handover); never blank, as the registry requires.
    pub worker: Option<String>,
    /// Exact key or family.
    pub key: KeyShape,
    /// Where the worker text came from, written as a comment after it (`from the comment at
    /// locks.py:4`), so a person reviewing the draft knows which ones to read.
    pub note: Option<String>,
}

/// A whole drafted registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    /// `[project] name`.
    pub project: String,
    /// `[project] page`, when a page was asked for.
    pub page: Option<String>,
    /// `[core] constants`.
    pub constants: String,
    /// `[core] block`.
    pub block: (Id, Id),
    /// `[plugins] manifests`, when plugins were asked for.
    pub manifests: Vec<String>,
    /// The entries, written in this order.
    pub entries: Vec<DraftEntry>,
}

/// The registry text of a draft.
pub fn render(draft: &Draft) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# lockward.toml: the advisory lock ids of {}, drafted by `lockward init`.",
        draft.project
    );
    out.push_str(
        "#\n# Each id the code uses has one entry saying which worker holds it. Read the `worker`\n\
         # texts (taken from the comment beside each definition, or else from its name), then take\n\
         # new ids with `lockward take`, never by hand.\n",
    );
    let _ = writeln!(out, "[project]\nname = {}", toml_string(&draft.project));
    if let Some(page) = &draft.page {
        let _ = writeln!(out, "page = {}", toml_string(page));
    }
    let _ = writeln!(
        out,
        "\n[core]\nconstants = {}\nblock = {{ start = {}, end = {} }}",
        toml_string(&draft.constants),
        draft.block.0.literal(),
        draft.block.1.literal()
    );
    if !draft.manifests.is_empty() {
        let _ = writeln!(out, "\n[plugins]\nmanifests = {}", array(&draft.manifests));
    }
    for entry in &draft.entries {
        out.push('\n');
        out.push_str(&entry_text(entry));
    }
    out
}

/// One `[[lock]]` table, each line ending in `\n`.
fn entry_text(entry: &DraftEntry) -> String {
    let mut out = match &entry.kind {
        // The id is the library's key for the name: `list` shows it.
        DraftKind::Named { .. } => "[[lock]]\n".to_owned(),
        _ => format!("[[lock]]\nid = {}\n", entry.id.literal()),
    };
    match &entry.kind {
        DraftKind::Constant { constant } => {
            let _ = writeln!(out, "constant = {}", toml_string(constant));
        }
        DraftKind::External { constant, site, .. } => {
            if let Some(constant) = constant {
                let _ = writeln!(out, "constant = {}", toml_string(constant));
            }
            if let Some(site) = site {
                let _ = writeln!(out, "site = {}", toml_string(site));
            }
        }
        DraftKind::Handover { plugin } => {
            let _ = writeln!(out, "plugin = {}", toml_string(plugin));
        }
        DraftKind::Named { name, hash } => {
            let _ = writeln!(out, "name = {}", toml_string(name));
            let _ = writeln!(out, "hash = {}", toml_string(hash));
        }
    }
    if let Some(worker) = &entry.worker {
        let _ = write!(out, "worker = {}", toml_string(worker));
        if let Some(note) = &entry.note {
            let _ = write!(out, "   # {}", note.replace(['\n', '\r'], " "));
        }
        out.push('\n');
    }
    if let DraftKind::External { defined_in, .. } = &entry.kind {
        let _ = writeln!(out, "defined_in = {}", array(defined_in));
    }
    if entry.key == KeyShape::Family && !matches!(entry.kind, DraftKind::Named { .. }) {
        out.push_str("key = \"family\"\n");
    }
    out
}

/// Why an id already in the code cannot be registered as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdoptError {
    /// The id is in the registry already (any kind, other branches' reservations included).
    #[error(
        "{what} is {id} in {path}, and id {id} is registered already ({kind} entry{where_}): one id has one holder; give it a new id with `lockward take`, or use the registered one"
    )]
    IdRegistered {
        /// The constant's name, or how the literal is written.
        what: String,
        /// The id.
        id: String,
        /// Where it is defined.
        path: String,
        /// The registered entry's kind.
        kind: &'static str,
        /// `, on branch NAME` for another branch's reservation.
        where_: String,
    },
    /// A plugin manifest declares the id.
    #[error(
        "{what} is {id} in {path}, and plugin `{plugin}` declares id {id} in its manifest: one id has one holder; give it a new id with `lockward take`"
    )]
    IdDeclaredByPlugin {
        /// The constant's name, or how the literal is written.
        what: String,
        /// The id.
        id: String,
        /// Where it is defined.
        path: String,
        /// The plugin.
        plugin: String,
    },
    /// The edited registry breaks a rule (a family that does not fit in an int4, say).
    #[error("the entry would break the registry's rules: {}", .0.first().map_or("", |f| f.message.as_str()))]
    Rejected(Vec<Finding>),
}

/// The registry's text with `entry`, an id the code defines already, appended after the last
/// byte (every earlier byte kept, the file's line ending used). Refuses an id that the registry
/// holds already, whatever its kind (other branches' reservations are in `registry`), or that a
/// plugin manifest declares (`declared`: each id with its plugin's name); the caller has made
/// sure the entry's name is free. `path` is where the code defines it, for the messages.
/// Returns the new text and the registry it parses to.
pub fn adopt(
    registry: &Registry,
    entry: &DraftEntry,
    declared: &[(i64, String)],
    path: &str,
) -> Result<(String, Registry), AdoptError> {
    let id = &entry.id;
    let what = match &entry.kind {
        DraftKind::Constant { constant }
        | DraftKind::External {
            constant: Some(constant),
            ..
        } => format!("`{constant}`"),
        DraftKind::External {
            site: Some(site), ..
        } => format!("the key at `{site}`"),
        DraftKind::Named { name, .. } => format!("the lock named {name:?}"),
        DraftKind::External { .. } | DraftKind::Handover { .. } => "the id".to_owned(),
    };
    if let Some(lock) = registry.lock(id.value()) {
        return Err(AdoptError::IdRegistered {
            what,
            id: lock.id().to_string(),
            path: path.to_owned(),
            kind: lock.kind().as_str(),
            where_: match lock.source() {
                Source::Registry => String::new(),
                Source::Branch(branch) => format!(", on branch {branch}"),
            },
        });
    }
    if let Some((_, plugin)) = declared.iter().find(|(value, _)| *value == id.value()) {
        return Err(AdoptError::IdDeclaredByPlugin {
            what,
            id: id.to_string(),
            path: path.to_owned(),
            plugin: plugin.clone(),
        });
    }
    let old = registry.file().text();
    let nl = if old.contains("\r\n") { "\r\n" } else { "\n" };
    let mut text = old.to_owned();
    if !text.is_empty() {
        if !text.ends_with('\n') {
            text.push_str(nl);
        }
        if !text.ends_with("\n\n") && !text.ends_with("\n\r\n") {
            text.push_str(nl);
        }
    }
    text.push_str(&entry_text(entry).replace('\n', nl));
    let mut parsed = parse(registry.file().path(), &text)
        .map_err(AdoptError::Rejected)?
        .registry;
    parsed.keep_reservations_of(registry);
    Ok((text, parsed))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_block_is_a_round_window_around_core_ids_with_room_to_grow() {
        assert_eq!(
            block_around(&[1_001_001, 1_001_004, 1_001_002]),
            Some((1_001_000, 1_001_999))
        );
        // 851 ids used: a 1 000-wide window would leave 49 free; the next power of ten fits.
        assert_eq!(
            block_around(&[7_000_100, 7_000_950]),
            Some((7_000_000, 7_009_999))
        );
        // Close to a boundary: the window grows until it holds the cluster.
        assert_eq!(block_around(&[999, 1_001]), Some((0, 9_999)));
        assert_eq!(block_around(&[]), None);
    }

    #[test]
    fn a_legacy_id_far_from_the_others_does_not_stretch_the_block() {
        assert_eq!(
            block_around(&[1_001_001, 0x6E69_7374, 1_001_002]),
            Some((1_001_000, 1_001_999))
        );
        // A tie between clusters goes to the higher one.
        assert_eq!(block_around(&[5, 9_000_000]), Some((9_000_000, 9_000_999)));
    }

    #[test]
    fn negative_and_extreme_ids_still_get_a_block_that_holds_them() {
        assert_eq!(block_around(&[-5, -1]), Some((-1_000, -1)));
        let (start, end) = block_around(&[i64::MAX - 1]).expect("a block");
        assert!(start < i64::MAX && end == i64::MAX, "{start}..{end}");
        assert_eq!(block_around(&[-5, 5]), Some((-1_000, 999)));
    }

    #[test]
    fn a_worker_is_the_names_words_without_the_lock_words() {
        assert_eq!(
            worker_from_name("ADVISORY_LOCK_INVOICE_ROLLUP"),
            "invoice rollup"
        );
        assert_eq!(worker_from_name("_CATALOG_LOCK_KEY"), "catalog");
        assert_eq!(worker_from_name("searchReindexLockID"), "search reindex");
        assert_eq!(worker_from_name("AdvisoryLockHTTPServer"), "http server");
        assert_eq!(worker_from_name("Locks.REINDEX"), "reindex");
        assert_eq!(
            worker_from_name("LOCKS[\"nightly_export\"]"),
            "nightly export"
        );
        assert_eq!(worker_from_name("Locks::Reindex"), "reindex");
        assert_eq!(worker_from_name("ADVISORY_LOCK_ID"), "advisory lock id");
    }

    #[test]
    fn a_project_name_keeps_to_the_allowed_characters() {
        assert_eq!(project_name("harbor"), "harbor");
        assert_eq!(project_name("my project (old)"), "my-project-old");
        assert_eq!(project_name("søren.app"), "s-ren.app");
        assert_eq!(project_name("???"), "project");
        assert_eq!(project_name(&"a".repeat(40)), "a".repeat(32));
    }

    #[test]
    fn a_literal_keeps_the_codes_form_where_toml_reads_it() {
        let literal = |code: &str, value: i64| {
            toml_literal(code, value, Some(Language::Rust))
                .literal()
                .to_owned()
        };
        assert_eq!(literal("1_001_001", 1_001_001), "1_001_001");
        assert_eq!(literal("1_001_001i64", 1_001_001), "1_001_001");
        assert_eq!(literal("0x6E697374", 0x6E69_7374), "0x6E697374");
        assert_eq!(literal("0x4Cu64", 0x4C), "0x4C");
        assert_eq!(literal("0X4C", 0x4C), "76");
        assert_eq!(literal("-0x10", -16), "-16");
        assert_eq!(literal("-42", -42), "-42");
        assert_eq!(literal("BASE + 3", 10), "10");
        let java = toml_literal("1001001L", 1_001_001, Some(Language::Java));
        assert_eq!(java.literal(), "1001001");
        let js = toml_literal("123n", 123, Some(Language::JavaScript));
        assert_eq!(js.literal(), "123");
        // Go and Java read a leading zero as octal; TOML refuses it, so the value is written.
        assert_eq!(literal("017", 15), "15");
    }

    #[test]
    fn a_draft_renders_to_a_registry_that_parses_with_every_kind() {
        let draft = Draft {
            project: "seed".to_owned(),
            page: Some("docs/locks.md".to_owned()),
            constants: "core/locks.py".to_owned(),
            block: (
                Id::new(1_001_000, "1_001_000"),
                Id::new(1_001_999, "1_001_999"),
            ),
            manifests: vec!["plugins/*/plugin.toml".to_owned()],
            entries: vec![
                DraftEntry {
                    id: Id::new(1_001_001, "1_001_001"),
                    kind: DraftKind::Constant {
                        constant: "ADVISORY_LOCK_INVOICE_ROLLUP".to_owned(),
                    },
                    worker: Some("invoice \"rollup\"".to_owned()),
                    key: KeyShape::Family,
                    note: Some("from the comment at core/locks.py:3".to_owned()),
                },
                DraftEntry {
                    id: Id::new(1_001_002, "1_001_002"),
                    kind: DraftKind::Handover {
                        plugin: "billing".to_owned(),
                    },
                    worker: None,
                    key: KeyShape::Exact,
                    note: None,
                },
                DraftEntry {
                    id: Id::new(9_001_042, "9_001_042"),
                    kind: DraftKind::External {
                        constant: None,
                        site: Some("PeriodicTask(advisory_lock_id=)".to_owned()),
                        defined_in: vec!["services/worker/task.py".to_owned()],
                    },
                    worker: Some("bq write visibility".to_owned()),
                    key: KeyShape::Exact,
                    note: None,
                },
            ],
        };
        let text = render(&draft);
        let loaded = parse("lockward.toml", &text).expect("the draft parses");
        let registry = loaded.registry;
        assert_eq!(registry.project().name, "seed");
        assert_eq!(registry.project().page.as_deref(), Some("docs/locks.md"));
        assert_eq!(registry.locks().len(), 3);
        let rollup = registry.lock(1_001_001).expect("registered");
        assert_eq!(rollup.worker(), Some("invoice \"rollup\""));
        assert_eq!(rollup.key(), KeyShape::Family);
        let external = registry.lock(9_001_042).expect("registered");
        assert_eq!(external.site(), Some("PeriodicTask(advisory_lock_id=)"));
        assert_eq!(external.defined_in(&registry), ["services/worker/task.py"]);
        assert!(
            text.contains("# from the comment at core/locks.py:3\n"),
            "{text}"
        );
    }

    fn registry(text: &str) -> Registry {
        parse("lockward.toml", text).expect("valid").registry
    }

    const BASE: &str = "[project]\nname = \"p\"\n\n[core]\nconstants = \"locks.py\"\nblock = { start = 1_000, end = 1_999 }\n\n[[lock]]\nid = 1_001\nconstant = \"ADVISORY_LOCK_A\"\nworker = \"a\"\n";

    fn entry(id: i64, constant: &str, defined_in: &[&str]) -> DraftEntry {
        DraftEntry {
            id: Id::plain(id),
            kind: if defined_in.is_empty() {
                DraftKind::Constant {
                    constant: constant.to_owned(),
                }
            } else {
                DraftKind::External {
                    constant: Some(constant.to_owned()),
                    site: None,
                    defined_in: defined_in.iter().map(|f| (*f).to_owned()).collect(),
                }
            },
            worker: Some("w".to_owned()),
            key: KeyShape::Exact,
            note: None,
        }
    }

    #[test]
    fn adopting_writes_a_constant_or_an_external_and_keeps_every_byte() {
        let registry = registry(BASE);
        let (text, parsed) = adopt(
            &registry,
            &entry(1_005, "ADVISORY_LOCK_B", &[]),
            &[],
            "locks.py",
        )
        .expect("adopted");
        assert_eq!(
            text,
            format!(
                "{BASE}\n[[lock]]\nid = 1005\nconstant = \"ADVISORY_LOCK_B\"\nworker = \"w\"\n"
            )
        );
        assert_eq!(
            parsed.lock(1_005).expect("registered").kind().as_str(),
            "constant"
        );
        let external = entry(77, "_X_LOCK_KEY", &["a.py", "b.py"]);
        let (text, parsed) = adopt(&registry, &external, &[], "a.py").expect("adopted");
        assert!(
            text.ends_with("worker = \"w\"\ndefined_in = [\"a.py\", \"b.py\"]\n"),
            "{text}"
        );
        assert_eq!(
            parsed.lock(77).expect("registered").defined_in(&parsed),
            ["a.py", "b.py"]
        );
        let crlf = super::parse("lockward.toml", &BASE.replace('\n', "\r\n"))
            .expect("valid")
            .registry;
        let (text, _) = adopt(&crlf, &external, &[], "a.py").expect("adopted");
        assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
    }

    #[test]
    fn adopting_refuses_an_id_registered_or_declared_by_a_plugin() {
        let registry = registry(BASE);
        let error = adopt(
            &registry,
            &entry(1_001, "ADVISORY_LOCK_B", &[]),
            &[],
            "locks.py",
        )
        .expect_err("registered");
        assert!(
            matches!(
                error,
                AdoptError::IdRegistered {
                    kind: "constant",
                    ..
                }
            ),
            "{error}"
        );
        let declared = [(1_002, "billing".to_owned())];
        let error = adopt(
            &registry,
            &entry(1_002, "ADVISORY_LOCK_B", &[]),
            &declared,
            "locks.py",
        )
        .expect_err("declared");
        assert!(error.to_string().contains("plugin `billing`"), "{error}");
        let mut family = entry(1_i64 << 40, "ADVISORY_LOCK_B", &[]);
        family.key = KeyShape::Family;
        assert!(matches!(
            adopt(&registry, &family, &[], "locks.py"),
            Err(AdoptError::Rejected(_))
        ));
    }

    proptest! {
        /// Whatever the code's names, comments and paths hold (quotes, backslashes, newlines,
        /// `#`, any Unicode), the draft parses, and every worker and file reads back as given.
        #[test]
        fn any_draft_parses_and_keeps_every_worker_and_file(
            // A worker names someone: init's are a comment's first sentence or a name's words,
            // never blank (the registry refuses a blank one).
            workers in proptest::collection::vec("\\PC{0,29}[^\\s\\p{C}]", 1..6),
            files in proptest::collection::vec("[a-z]{1,6}/[^\\x00-\\x1f]{1,12}\\.py", 1..4),
            note in "\\PC{0,20}\n?\\PC{0,5}",
            ids in proptest::collection::btree_set(-1_000_000_000_i64..1_000_000_000, 1..6),
        ) {
            let ids: Vec<i64> = ids.into_iter().collect();
            let entries: Vec<DraftEntry> = ids
                .iter()
                .zip(workers.iter().cycle())
                .enumerate()
                .map(|(n, (&id, worker))| DraftEntry {
                    id: Id::plain(id),
                    kind: if n % 2 == 0 {
                        DraftKind::Constant { constant: format!("ADVISORY_LOCK_{n}") }
                    } else {
                        DraftKind::External {
                            constant: None,
                            site: Some(format!("f{n}(advisory_lock_id=)")),
                            defined_in: files.clone(),
                        }
                    },
                    worker: Some(worker.clone()),
                    key: KeyShape::Exact,
                    note: Some(note.clone()),
                })
                .collect();
            let (start, end) = block_around(&ids).expect("ids");
            let draft = Draft {
                project: "p".to_owned(),
                page: None,
                constants: "core/locks.py".to_owned(),
                block: (Id::plain(start), Id::plain(end)),
                manifests: Vec::new(),
                entries: entries.clone(),
            };
            let text = render(&draft);
            let registry = parse("lockward.toml", &text)
                .unwrap_or_else(|findings| panic!("{text}\n{:?}", findings[0].message))
                .registry;
            for entry in &entries {
                let lock = registry.lock(entry.id.value()).expect("registered");
                prop_assert_eq!(lock.worker(), entry.worker.as_deref());
                if let DraftKind::External { defined_in, .. } = &entry.kind {
                    let read: Vec<String> = lock.defined_in(&registry).iter().map(|f| (*f).to_owned()).collect();
                    prop_assert_eq!(&read, defined_in);
                }
            }
        }
    }
}
