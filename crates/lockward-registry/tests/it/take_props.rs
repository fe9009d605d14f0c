//! Properties of the next free id, of `take`'s and `retire`'s edits, and of parsing arbitrary
//! input, over generated registries with comments and odd layouts.

use lockward_registry::edit::{self, EditError, Language, Request};
use lockward_registry::id::group_thousands;
use lockward_registry::{KeyShape, Kind, Lock, Registry, parse};
use proptest::prelude::*;

/// One generated `[[lock]]` entry: its id and how it is written.
#[derive(Debug, Clone)]
struct GenEntry {
    value: i64,
    kind: u8,
    style: u8,
    layout: u8,
    family: bool,
    comment: String,
}

/// A generated registry: the text and what was put in it.
#[derive(Debug, Clone)]
struct GenRegistry {
    text: String,
    start: i64,
    end: i64,
    values: Vec<i64>,
}

fn literal(value: i64, style: u8) -> String {
    match style % 4 {
        0 => value.to_string(),
        1 => group_thousands(value),
        2 => format!("0x{value:X}"),
        _ => format!("0x{value:x}"),
    }
}

fn build(
    start: i64,
    len: i64,
    block_style: u8,
    crlf: bool,
    trailing_newline: bool,
    header_comment: &str,
    entries: &[GenEntry],
) -> GenRegistry {
    let end = start + len;
    let mut lines: Vec<String> = vec![
        format!("# {header_comment}"),
        "[project]".to_owned(),
        "name   =   \"generated\"    # odd spacing".to_owned(),
        String::new(),
        "[core]".to_owned(),
        "constants = \"locks.py\"".to_owned(),
        format!(
            "block = {{ start = {}, end = {} }}",
            literal(start, block_style),
            literal(end, block_style)
        ),
    ];
    for (index, entry) in entries.iter().enumerate() {
        for _ in 0..entry.layout % 3 {
            lines.push(String::new());
        }
        if entry.layout & 4 != 0 {
            lines.push(format!("  # {}", entry.comment));
        }
        lines.push(if entry.layout & 8 != 0 {
            "  [[lock]]   # entry".to_owned()
        } else {
            "[[lock]]".to_owned()
        });
        let eq = if entry.layout & 16 != 0 { "=" } else { " = " };
        let trailing = if entry.layout & 32 != 0 {
            format!(" # {}", entry.comment)
        } else {
            String::new()
        };
        let mut fields = vec![format!(
            "id{eq}{}{trailing}",
            literal(entry.value, entry.style)
        )];
        match entry.kind % 5 {
            0 => {
                fields.push(format!("constant{eq}\"ADVISORY_LOCK_{index}\""));
                fields.push(format!("worker{eq}\"worker {index}\"{trailing}"));
            }
            1 => fields.push(format!("plugin{eq}\"plugin{index}\"")),
            2 => fields.push(format!("retired{eq}'gone {index}'{trailing}")),
            3 => fields.push(format!("reserved{eq}\"branch {index}\"")),
            _ => {
                fields.push(format!("constant{eq}\"_LOCK_KEY_{index}\""));
                fields.push(format!("worker{eq}\"external {index}\""));
                fields.push(format!("defined_in{eq}[\"src/m{index}.py\"]{trailing}"));
            }
        }
        if entry.family {
            fields.push(format!("key{eq}\"family\""));
        }
        if entry.layout & 64 != 0 {
            fields.reverse();
        }
        lines.extend(fields);
    }
    let newline = if crlf { "\r\n" } else { "\n" };
    let mut text = lines.join(newline);
    if trailing_newline {
        text.push_str(newline);
    }
    GenRegistry {
        text,
        start,
        end,
        values: entries.iter().map(|entry| entry.value).collect(),
    }
}

fn entry_strategy() -> impl Strategy<Value = (u8, u8, u8, bool, String)> {
    (
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
        any::<bool>(),
        "[ -~]{0,24}",
    )
}

prop_compose! {
    fn registry_strategy()(
        start in 1_000i64..2_000_000_000,
        len in 0i64..400,
        block_style in 0u8..4,
        crlf in any::<bool>(),
        trailing_newline in any::<bool>(),
        header_comment in "[ -~]{0,30}",
        offsets in prop::collection::btree_set(0i64..600, 0..14),
        looks in prop::collection::vec(entry_strategy(), 14),
        shuffle in any::<u64>(),
    ) -> GenRegistry {
        let mut values: Vec<i64> = offsets.into_iter().map(|offset| start - 100 + offset).collect();
        // Registry order is not id order: rotate by a generated amount.
        if !values.is_empty() {
            let by = usize::try_from(shuffle % values.len() as u64).unwrap_or(0);
            values.rotate_left(by);
        }
        let entries: Vec<GenEntry> = values
            .iter()
            .zip(looks)
            .map(|(&value, (kind, style, layout, family, comment))| GenEntry {
                value,
                kind,
                style,
                layout,
                family,
                comment,
            })
            .collect();
        build(start, len, block_style, crlf, trailing_newline, &header_comment, &entries)
    }
}

fn load(text: &str) -> Registry {
    match parse("lockward.toml", text) {
        Ok(loaded) => loaded.registry,
        Err(findings) => panic!("generated registry does not parse: {findings:#?}\n{text}"),
    }
}

/// What an entry is, without where it sits in the file.
fn summary(lock: &Lock) -> (i64, String, Kind, Option<String>, Option<String>, KeyShape) {
    (
        lock.id().value(),
        lock.id().literal().to_owned(),
        lock.kind().clone(),
        lock.constant().map(str::to_owned),
        lock.worker().map(str::to_owned),
        lock.key(),
    )
}

fn request(plugin: Option<&str>) -> Request {
    Request {
        constant: "ADVISORY_LOCK_TAKEN".to_owned(),
        worker: "the \"new\" worker # not a comment".to_owned(),
        plugin: plugin.map(str::to_owned),
        key: KeyShape::Exact,
        reserved: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn next_free_id_is_above_every_recorded_id_in_the_block_and_never_in_a_gap(
        generated in registry_strategy(),
        plugin_offsets in prop::collection::vec(0i64..600, 0..4),
    ) {
        let registry = load(&generated.text);
        let plugin_ids: Vec<i64> = plugin_offsets.iter().map(|o| generated.start - 100 + o).collect();
        let recorded_in_block: Vec<i64> = generated
            .values
            .iter()
            .chain(&plugin_ids)
            .copied()
            .filter(|value| (generated.start..=generated.end).contains(value))
            .collect();
        match registry.next_free_id(plugin_ids.iter().copied()) {
            Some(next) => {
                let next = next.value();
                prop_assert!((generated.start..=generated.end).contains(&next));
                prop_assert!(recorded_in_block.iter().all(|&value| value < next));
                // Never inside a gap: the id below is recorded, or it is the block's first.
                prop_assert!(next == generated.start || recorded_in_block.contains(&(next - 1)));
            }
            None => prop_assert!(recorded_in_block.contains(&generated.end)),
        }
    }

    #[test]
    fn take_keeps_every_earlier_entry_and_comment_byte_for_byte(
        generated in registry_strategy(),
        handover in any::<bool>(),
    ) {
        let registry = load(&generated.text);
        let plugin = handover.then_some("billing");
        let result = edit::take(&registry, &request(plugin), &[], Some("X = 1\n"));
        let taken = match result {
            Ok(taken) => taken,
            Err(EditError::BlockUsedUp { .. }) => {
                prop_assert!(generated.values.contains(&generated.end));
                return Ok(());
            }
            Err(error) => return Err(TestCaseError::fail(error.to_string())),
        };
        prop_assert!(taken.registry_text.starts_with(&generated.text));
        let before: Vec<_> = registry.locks().iter().map(summary).collect();
        let after: Vec<_> = taken
            .registry
            .locks()
            .iter()
            .filter(|lock| *lock.id() != taken.id)
            .map(summary)
            .collect();
        prop_assert_eq!(before, after);
        let new = taken.registry.lock(taken.id.value()).expect("the taken id is registered");
        prop_assert_eq!(new.worker(), Some("the \"new\" worker # not a comment"));
        prop_assert_eq!(new.kind().as_str(), if handover { "handover" } else { "constant" });
        prop_assert_eq!(taken.constants_text.is_some(), !handover);
    }

    #[test]
    fn any_worker_text_round_trips_through_the_registry_and_stays_inside_its_comment(
        generated in registry_strategy(),
        worker in prop_oneof![
            "[*/\\\\u0-9a-f \t\n\r\u{0}\u{7}\u{2028}\u{85}\u{FEFF}\"#]{1,16}",
            "(?s).{1,24}",
        ],
    ) {
        prop_assume!(!worker.trim().is_empty());
        let registry = load(&generated.text);
        let mut request = request(None);
        request.worker.clone_from(&worker);
        let taken = match edit::take(&registry, &request, &[], Some("X = 1\n")) {
            Ok(taken) => taken,
            Err(EditError::BlockUsedUp { .. }) => return Ok(()),
            Err(error) => return Err(TestCaseError::fail(error.to_string())),
        };
        let new = taken.registry.lock(taken.id.value()).expect("the taken id is registered");
        prop_assert_eq!(new.worker(), Some(worker.as_str()));

        let id = lockward_registry::Id::plain(7);
        for (path, text) in [
            ("l.py", ""), ("l.rs", ""), ("l.go", ""), ("l.ts", ""), ("l.rb", ""),
            ("L.java", "class L {\n}\n"), ("L.kt", ""),
        ] {
            let language = Language::from_path(path).expect("supported");
            let append = |worker: &str| {
                edit::append_constant(language, path, text, &[], "ADVISORY_LOCK_B", &id, worker)
                    .expect("appended")
            };
            let out = append(&worker);
            // One comment line above the constant, as for a plain worker text.
            prop_assert_eq!(out.lines().count(), append("w").lines().count(), "{}: {:?}", path, out);
            prop_assert!(!out.contains(['\r', '\0', '\u{2028}', '\u{85}']), "{}: {:?}", path, out);
            if path.starts_with('L') {
                let comment = out.lines().find(|line| line.contains("/**")).expect("a comment").trim();
                let inner = &comment["/**".len()..comment.len() - "*/".len()];
                prop_assert!(comment.ends_with("*/") && !inner.contains("*/") && !inner.contains("/*"), "{}: {:?}", path, comment);
            }
        }
    }

    #[test]
    fn retire_changes_only_the_retired_entry(
        generated in registry_strategy(),
        pick in any::<prop::sample::Index>(),
    ) {
        let registry = load(&generated.text);
        let live: Vec<&Lock> = registry
            .locks()
            .iter()
            .filter(|lock| !matches!(lock.kind(), Kind::Retired { .. }))
            .collect();
        prop_assume!(!live.is_empty());
        let lock = live[pick.index(live.len())];
        let retired = edit::retire(&registry, lock, "no longer needed").expect("retire");
        let others = |registry: &Registry| -> Vec<_> {
            registry.locks().iter().filter(|other| other.id() != lock.id()).map(summary).collect()
        };
        prop_assert_eq!(others(&registry), others(&retired.registry));
        let now = retired.registry.lock(lock.id().value()).expect("still registered");
        prop_assert_eq!(now.kind(), &Kind::Retired { reason: "no longer needed".to_owned() });
        prop_assert_eq!(now.constant(), lock.constant());
        // Every line of the file is kept except the entry's `plugin`/`reserved`/`defined_in`
        // line, and one line is added.
        let old_lines: Vec<&str> = generated.text.lines().collect();
        let new_lines: Vec<&str> = retired.registry_text.lines().collect();
        let dropped = usize::from(matches!(
            lock.kind(),
            Kind::Handover { .. } | Kind::Reserved { .. } | Kind::External { .. }
        ));
        prop_assert_eq!(new_lines.len(), old_lines.len() + 1 - dropped);
        let added: Vec<&&str> = new_lines.iter().filter(|line| !old_lines.contains(line)).collect();
        prop_assert_eq!(added, vec![&"retired = \"no longer needed\""]);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in "\\PC*") {
        let _ = parse("lockward.toml", &text);
        let _ = edit::retire_entry(&text, 1, "x");
        for language in [Language::Python, Language::Rust, Language::Go, Language::Ruby] {
            let _ = lockward_lang::find_definition(language, &text, "ADVISORY_LOCK_A");
        }
        for path in ["l.py", "l.rs", "l.go", "l.ts", "l.js", "l.rb", "L.java", "L.kt"] {
            let language = Language::from_path(path).expect("supported");
            let id = lockward_registry::Id::plain(7);
            let _ = edit::append_constant(language, path, &text, &["ADVISORY_LOCK_A"], "ADVISORY_LOCK_B", &id, "w");
        }
    }

    #[test]
    fn parse_never_panics_on_mutated_registries(
        generated in registry_strategy(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, "[\\PC\\n\"'\\[\\]={}#_x0-9-]{0,3}"), 1..6),
    ) {
        let mut text: Vec<char> = generated.text.chars().collect();
        for (at, op, insert) in edits {
            let at = at.index(text.len() + 1);
            match op {
                0 => { text.splice(at..at, insert.chars()); }
                1 => { let end = (at + insert.len().max(1)).min(text.len()); text.drain(at..end); }
                _ => { let end = (at + insert.chars().count()).min(text.len()); text.splice(at..end, insert.chars()); }
            }
        }
        let text: String = text.into_iter().collect();
        if let Ok(loaded) = parse("lockward.toml", &text) {
            // A mutation that still parses must still take and retire cleanly or refuse.
            let _ = edit::take(&loaded.registry, &request(None), &[], Some(""));
            if let Some(lock) = loaded.registry.locks().first() {
                let _ = edit::retire(&loaded.registry, lock, "x");
            }
        }
    }

    #[test]
    fn decoding_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(text) = lockward_registry::decode_utf8("lockward.toml", bytes) {
            let _ = parse("lockward.toml", &text);
        }
    }
}
